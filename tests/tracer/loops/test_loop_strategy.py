"""How a loop runs (tracer/loops/strategy.py): one place picks unrolled, a loop node or split,
and each choice shows in what `tc.explain` reports and in the graph's nodes."""

from __future__ import annotations

import numpy as np
import pytest

import tcompile as tc
from tcompile.tracer.ir.loop_nodes import LOOP_OPS


def over_range(x):
    for i in range(6):
        x = x + i
    return x


def over_known_items(x):
    for c in [1.0, 2.0, 3.0]:
        x = x * c
    return x


def halve_until_small(x):
    x = x * 10.0
    while x.max() > 1.0:
        x = x / 2
    return x


def breaks_inside(x):
    for i in range(4):
        x = x + i
        print("step", i)
    return x


def branches_on_index(x):
    for i in range(5):
        if i % 2:
            x = x + 1.0
    return x


def python_backend(graph, example_inputs):
    """A user's backend: a plain callable, which takes no loop nodes."""
    namespace: dict = {}
    exec(graph.python_code(namespace), namespace)  # noqa: S102 - the graph's own code
    return namespace[graph.name]


def _explained(fn, backend="eager"):
    explained = tc.explain(fn, backend=backend)(np.ones(4))
    loop_nodes = [n for g in explained.graphs for n in g.nodes if n.op in LOOP_OPS]
    return explained, loop_nodes


@pytest.mark.parametrize(
    "fn, op, kind",
    [(over_range, "loop", "for"), (halve_until_small, "while_loop", "while")],
    ids=["for", "while"],
)
def test_a_loop_node_where_the_body_traces_alike(fn, op, kind):
    explained, nodes = _explained(fn)
    assert [n.op for n in nodes] == [op]
    (record,) = explained.loops
    assert record.captured and record.kind == kind, record.describe()


def test_a_backend_without_loop_nodes_gets_the_loop_unrolled():
    explained, nodes = _explained(over_range, python_backend)
    assert nodes == [] and explained.loops == []
    assert [g.op_count() for g in explained.graphs] == [6]  # one copy of the body per iteration


def test_known_items_unroll():
    explained, nodes = _explained(over_known_items)
    assert nodes == [] and explained.loops == []
    assert [g.op_count() for g in explained.graphs] == [3]


def test_a_body_that_branches_on_the_index_unrolls_and_says_why():
    explained, nodes = _explained(branches_on_index)
    assert nodes == []
    (record,) = explained.loops
    assert not record.captured and "loop index as a Python int" in record.reason, record


def test_a_break_inside_a_loop_splits_it(capsys):
    explained, nodes = _explained(breaks_inside)
    assert nodes == [] and explained.loops == []
    assert (
        "runs in Python, its body compiled as a function" in explained.break_reasons[0].explanation
    )
    assert capsys.readouterr().out.count("step") == 4
