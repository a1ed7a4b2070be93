"""The whole differential corpus (tests/differential) again, compiled with ``backend="triton"``.

Every case runs eagerly and compiled over its call sequence, as there; what changes is what
"the same" means for a GPU backend: floats within a few ULP (other summation orders, fused
kernels), and NumPy's floating-point warnings left out (kernels raise none, as with CuPy).
Everything else stays exact: dtypes, shapes, layouts, integers, exceptions, printed output,
mutated arguments, aliasing and object identity. Cases that build their own compiled callable
(a custom backend, explain), or that print floats a reduction computed, are the eager
corpus's business and are not repeated.
"""

from __future__ import annotations

import os
import sys

import pytest
from requires_triton import require_triton

require_triton()

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "differential")
sys.path.insert(0, CORPUS)

import diffharness  # noqa: E402
import harness  # noqa: E402


@pytest.fixture(autouse=True)
def gpu_comparison(monkeypatch):
    monkeypatch.setattr(diffharness, "BACKEND", "triton")
    monkeypatch.setattr(diffharness, "FP_WARNINGS", False)
    monkeypatch.setattr(harness, "FLOAT_ULPS", 16)


@pytest.mark.parametrize("case", diffharness.corpus_cases("triton_corpus"))
def test_corpus_case_matches_eager_on_the_triton_backend(case):
    case.run()
