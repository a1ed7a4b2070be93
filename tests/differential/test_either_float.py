"""A Python float a loop makes a NumPy float64, where the loop may run no iteration
(``total = 0.0``, then ``total += values[j] * x[indices[j]]`` over a CSR row that may be
empty): after the loop it is either, and the inner loop is a loop node only where every use
gives one result for both (`tracer/loops/either_float.py`). Each case runs eagerly and
compiled, on the eager and the cpu backends, on matrices with empty rows: same results
(bitwise, Python types included), errors and writes."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from harness import check_one_graph, check_same_calls
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from scalar_loops import csr_matvec  # noqa: E402 - the bench's kernel


def csr(rows: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    per_row = rng.integers(0, 4, rows)
    per_row[::3] = 0  # empty rows: their totals stay the Python float they started as
    indptr = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
    indices = rng.integers(0, rows, indptr[-1]).astype(np.int64)
    return indptr, indices, rng.random(indptr[-1]), rng.random(rows)


CSR = csr(12, 3)
CALLS = [(CSR, {}), ((*CSR[:2], CSR[2][::-1].copy(), CSR[3] + 1), {})]


def shifted_rows(indptr, indices, values, x):
    """Two floats carried as float64s, read by ``+ - *`` with float64 values and stored."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total, squares = 0.1, 0.25
        for j in range(indptr[i], indptr[i + 1]):
            v = values[j] * x[indices[j]]
            total = total + v
            squares += v * v
        y[i] = total * x[i] - squares
    return y


BACKENDS = ["eager", "cpu"]


def _backend(backend: str) -> None:
    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [csr_matvec, shifted_rows], ids=lambda f: f.__name__)
def test_a_float_made_a_float64_by_a_loop_that_may_not_run_is_one_graph(fn, backend):
    _backend(backend)
    check_one_graph(fn, CALLS, backend)


# (the body's uses of ``total``, the uses after the inner loop, why they differ for the kinds)
DIFFERING = {
    "scaled_by_float32": (["total += values[j] * x[indices[j]]"], ["y[i] = total * s32"]),
    "into_a_list": (["total += values[j] * x[indices[j]]"], ["found[i] = total"]),
    "appended": (["total += values[j] * x[indices[j]]"], ["found.append(total)"]),
    "into_float32": (["total += values[j] * x[indices[j]]"], ["y32[i] = total"]),
    "returned": (["total += values[j] * x[indices[j]]"], ["last = total"]),
    "halved_in_the_body": (["total = total * 0.5 + values[j]"], ["y[i] = total"]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("uses", DIFFERING.values(), ids=DIFFERING.keys())
def test_a_use_that_differs_for_a_float_and_a_float64_keeps_eager_results(uses, backend):
    """``0.1 * float32(3)`` is a float32, ``float64(0.1) * float32(3)`` a float64; a list and a
    return keep the Python type; ``0.1 * 0.5`` is a float in the body's first iteration."""
    _backend(backend)
    _run_program(*uses, backend)


# -- random programs: a row's total, read in the body and after the loop in random ways -------

BODY_USES = [
    "total += values[j] * x[indices[j]]",
    "total = total - values[j]",
    "total = total * values[j] + 1.0",  # a Python float's product: a float64 only from values[j]
    "total = values[j] / total if total else total",
    "total = total * s32",  # float32: a float times it is a float32, a float64 times it not
    "total -= x[j % x.shape[0]]",
]
AFTER_USES = [
    "y[i] = total",
    "y[i] = total * x[i] - 0.5",
    "y[i] = total + x[i]",
    "y[i] = total * s32",
    "y32[i] = total",
    "found.append(total)",
    "found[i] = total",
    "found.append(total + x[i])",
    "last = total",
]


def _program(body: list[str], after: list[str]) -> str:
    lines = ["def prog(indptr, indices, values, x, s32, y, y32, found):",
             "    last = 0.0",
             "    for i in range(indptr.shape[0] - 1):",
             "        total = 0.1",
             "        for j in range(indptr[i], indptr[i + 1]):",
             *(f"            {line}" for line in body),
             *(f"        {line}" for line in after),
             "    return y, y32, found, last"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _run_program(body: list[str], after: list[str], backend: str) -> None:
    import hashlib

    import break_programs as bp

    source = _program(body, after)
    name = f"<tc-either-float {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    fn, _ = bp.build(source, "prog", name)

    def args(data):
        rows = data[0].shape[0] - 1
        return ((*data, np.float32(3.0), np.zeros(rows), np.zeros(rows, np.float32),
                 [0.0] * rows), {})  # fmt: skip

    calls = [args(CSR), args(CALLS[1][0])]
    try:
        check_same_calls(fn, calls, fullgraph=False, backend=backend)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program ---\n{source}") from None


uses = st.tuples(st.lists(st.sampled_from(BODY_USES), min_size=1, max_size=2),
                 st.lists(st.sampled_from(AFTER_USES), min_size=1, max_size=2))  # fmt: skip


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(uses)
def test_random_uses_of_a_row_total_match_eager(picked):
    _run_program(*picked, "eager")


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(uses)
def test_random_uses_of_a_row_total_match_eager_on_the_cpu_backend(picked):
    _backend("cpu")
    _run_program(*picked, "cpu")
