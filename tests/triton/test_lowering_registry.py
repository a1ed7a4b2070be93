"""The Triton lowering's registry (`backend/triton/lowering/registry.py`): each NumPy callable
has one rule, the rules cover what `lowering_kinds` says kernels compute, and a node no rule
lowers runs in NumPy as an extern that says why."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from requires_triton import require_triton

require_triton()

import tcompile as tc  # noqa: E402
from tcompile.backend import lowering_kinds  # noqa: E402
from tcompile.backend.fused.lowering import registry  # noqa: E402
from tcompile.tracer.ir.loop_nodes import LOOP_OPS  # noqa: E402
from tcompile.tracer.ir.node import Node  # noqa: E402


def _call(target, *args) -> Node:
    return Node(None, "n", "call", target, args)


def test_a_callable_is_lowered_by_one_rule():
    with pytest.raises(ValueError, match="lowered twice"):
        registry.lowers(np.where)(lambda lowering, node: None)
    rules = registry.targets()
    assert rules[np.where] is registry.find(_call(np.where))
    assert registry.find(_call(np.sum)) is registry.for_kind(lowering_kinds.REDUCTION)


@pytest.mark.parametrize(
    "kind",
    [lowering_kinds.POINTWISE, lowering_kinds.REDUCTION, lowering_kinds.VIEW,
     lowering_kinds.MATMUL, lowering_kinds.SCAN],
)  # fmt: skip
def test_every_callable_the_kinds_table_gives_a_kernel_kind_has_a_rule(kind):
    for target in lowering_kinds.targets(kind):
        assert registry.find(_call(target)) is not None, target


def test_ufuncs_operators_and_node_ops_have_rules():
    pointwise = registry.for_kind(lowering_kinds.POINTWISE)
    assert registry.find(_call(np.hypot)) is pointwise and registry.find(_call(np.add.reduce))
    assert registry.find(_call(operator.iadd)) is registry.find(_call(operator.add))
    assert registry.for_kind(lowering_kinds.VIEW, "getitem")
    assert registry.for_kind(lowering_kinds.GATHER, "getitem")
    assert registry.for_kind(lowering_kinds.SCATTER, "setitem")
    assert all(registry.for_kind(lowering_kinds.LOOP, op) for op in LOOP_OPS)
    for_host = [t for t, rule in registry.targets().items() if rule.host_args]
    assert np.add.at in for_host and np.zeros in for_host and np.where not in for_host


def test_a_node_without_a_rule_is_an_extern_that_says_why():
    assert registry.find(_call(np.argsort)) is None
    assert registry.find(_call(np.take)) is None  # a gather kernels do not do as a call
    assert "is not lowered to kernels (gather)" in str(registry.not_lowered(_call(np.take)))

    def f(x):
        return np.argsort(x) + 1

    compiled = tc.compile(f, backend="triton", fullgraph=True)
    x = np.array([3.0, 1.0, 2.0])
    assert np.array_equal(compiled(x), f(x))
    details = compiled.__tc_compiled__.entries[-1].report.compiled.details
    externs = [d for d in details if getattr(d, "kind", "") == "extern"]
    assert [(e.name, e.notes) for e in externs] == [
        ("extern argsort", ("argsort is not lowered to kernels (extern)",))
    ]
