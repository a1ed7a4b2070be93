"""The differential corpus (tests/differential) and the capture corpus (tests/corpus) again,
compiled to fused CPU kernels (`backend/cpu/kernels.py::fused_backend`), as
tests/triton/test_corpus_triton.py runs them on Triton: floats within a few ULP (other
summation orders), NumPy's floating-point warnings left out (kernels raise none), everything
else exact: dtypes, shapes, layouts, integers, exceptions, printed output, mutated arguments,
aliasing and object identity."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("numba", reason="the CPU kernels need numba: pip install 'tcompile[cpu]'")

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "differential")
sys.path.insert(0, CORPUS)

import corpus  # noqa: E402
import diffharness  # noqa: E402
import harness  # noqa: E402
from harness import check_same  # noqa: E402

import tcompile as tc  # noqa: E402
from tcompile.backend.cpu.kernels import fused_backend  # noqa: E402

# Cases whose floats drift apart past the tolerance for a reason outside the kernels' rules.
KNOWN = {
    "slow_patterns-nbody": "x ** -1.5 is glibc's pow in a kernel, NumPy's SIMD pow (1 ULP apart) "
    "in NumPy, and 40 leapfrog steps of 16 bodies amplify that past 16 ULP",
}


@pytest.fixture(autouse=True)
def kernel_comparison(monkeypatch):
    monkeypatch.setattr(diffharness, "BACKEND", fused_backend)
    monkeypatch.setattr(diffharness, "FP_WARNINGS", False)
    monkeypatch.setattr(harness, "FLOAT_ULPS", 16)


@pytest.mark.parametrize("case", diffharness.corpus_cases("cpu_corpus", KNOWN))
def test_corpus_case_matches_eager_in_cpu_kernels(case):
    case.run()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # kernels raise none; eager code may
@pytest.mark.parametrize("case", corpus.capture_cases(), ids=lambda case: case.id)
def test_capture_case_in_cpu_kernels(case: corpus.Case):
    check_same(case.fn, *case.args, fullgraph=True, backend=fused_backend, calls=2, **case.kwargs)
    assert tc.counters()["graph_breaks"] == 0
