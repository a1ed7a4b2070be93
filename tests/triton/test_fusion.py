"""Fusion decisions of the Triton backend: which kernels a function becomes, and why two kernels
stay apart. Results are checked against NumPy too (fusion must not change them)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from requires_triton import require_triton

require_triton()

import tcompile as tc  # noqa: E402
from tcompile.tracer.ir.compiled_graph import FusionDecision, KernelInfo  # noqa: E402

# The benchmark corpus's kernels, plain NumPy: the functions whose fusion the figures depend on.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gpu_kernels import haversine, layernorm, softmax  # noqa: E402

rng = np.random.default_rng(3)
X = rng.standard_normal((8, 64))


def kernels_of(fn, *args):
    compiled = tc.compile(fn, backend="triton", fullgraph=True)
    got = compiled(*[a.copy() for a in args])
    expected = fn(*[a.copy() for a in args])
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,)):  # fmt: skip
        assert np.allclose(g, e, rtol=1e-12, atol=1e-12)
    details = compiled.__tc_compiled__.entries[-1].report.compiled.details
    kernels = [d for d in details if isinstance(d, KernelInfo)]
    decisions = [d for d in details if isinstance(d, FusionDecision)]
    return kernels, decisions


def test_a_pointwise_chain_is_one_kernel():
    args = [rng.uniform(-80, 80, 500) for _ in range(4)]
    kernels, _ = kernels_of(haversine, *args)
    assert [k.kind for k in kernels] == ["pointwise"]
    assert "libdevice.asin(" in kernels[0].source and "tl.store(" in kernels[0].source
    assert any("np.sin(dlat / 2)" in line for line in kernels[0].lines)  # the user's lines


@pytest.mark.parametrize("fn", [softmax, lambda x: layernorm(x, np.ones(64), np.zeros(64))],
                         ids=["softmax", "layer_norm"])  # fmt: skip
def test_a_row_reduction_and_its_broadcast_use_are_one_kernel(fn):
    kernels, _ = kernels_of(fn, X)
    assert [k.kind for k in kernels] == ["reduction"]
    assert any("row reduction" in note for note in kernels[0].notes)


def test_reductions_with_the_same_rows_share_a_kernel():
    kernels, decisions = kernels_of(lambda x: (x.sum(axis=1), x.max(axis=1), x.std(axis=1)), X)
    assert [k.kind for k in kernels] == ["reduction"]
    assert all(d.fused for d in decisions)


def test_a_reduction_over_other_rows_gets_its_own_kernel_and_a_reason():
    kernels, decisions = kernels_of(lambda x: x.sum(axis=1)[:, None] + x.sum(axis=0), X)
    assert len(kernels) == 2
    refused = [d for d in decisions if not d.fused]
    assert refused and "reduction" in refused[0].reason


def test_a_stencil_step_reads_through_a_temporary_each_step():
    def sweep(u):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])

    def jacobi(u):  # three steps written out (a loop would be a loop node: one body)
        sweep(u)
        sweep(u)
        sweep(u)
        return u

    kernels, decisions = kernels_of(jacobi, rng.standard_normal((10, 12)))
    assert len(kernels) == 6 and all(k.kind == "pointwise" for k in kernels)
    assert all(not d.fused for d in decisions)
    assert any("reads" in d.reason for d in decisions)


def test_an_in_place_update_reading_only_its_own_element_is_one_kernel():
    def relax(x, y):
        x[1:] = x[1:] * 0.5 + y[1:]
        return x

    kernels, _ = kernels_of(relax, X.copy(), X)
    assert [k.kind for k in kernels] == ["pointwise"]


def test_results_keep_numpys_memory_order():
    compiled = tc.compile(lambda x: (x.T + 1, np.exp(x)), backend="triton")
    t, e = compiled(X)
    assert t.flags.f_contiguous and not t.flags.c_contiguous and e.flags.c_contiguous
    assert t.strides == (X.T + 1).strides
