"""Loop bodies traced on an iteration their loop never runs (issue 23, NPBench's nussinov).

``for j in range(i + 1, n)`` at the outer loop's first ``i == n - 1`` runs no iteration, yet its
body is traced, so that the outer loop is one loop node: on ``j == n``, where ``t[i, j]`` is out
of range. Such a body's item reads and writes are traced on in-range stand-in items (its writes
are undone after its trace), and its branches on data are cond nodes whose sides may raise on
those examples. Each program runs eagerly and compiled under ``fullgraph=True`` and must agree
bit for bit (results, mutated inputs, exceptions), on the eager and cpu backends, with lengths
that run the inner loops no time, once and often, and with data that takes every side.

A loop whose real first iteration reads out of range still raises eager's ``IndexError``.
"""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np
import pytest
from harness import check_without_breaks

import tcompile as tc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from plain_user_code import asserted_sweep  # noqa: E402 - its assert is not rewritten
from scalar_loops import nussinov  # noqa: E402 - the bench's kernel


def upper_sweep(t):
    """A branch on data behind an inner loop that runs no iteration at first."""
    n = t.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if t[i + 1, j] > t[i, j - 1]:
                t[i, j] += t[i + 1, j]
            else:
                t[i, j] -= 1.0
    return t


def nested_cond(t, seq):
    """A cond inside a cond side, in the body of no iteration."""
    n = t.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if seq[i] > seq[j]:
                if t[i + 1, j] > 0.5:
                    t[i, j] = t[i + 1, j]
                else:
                    t[i, j] = -t[i, j - 1]
    return t


def reads_past_the_end(x):
    """A real iteration reads past the end where the data takes that side: IndexError."""
    total = np.float64(0.0)
    for j in range(x.shape[0]):
        if x[j] > 0.0:
            total += x[j + 1]
    return total


def _bases(n, seed):
    return np.random.default_rng(seed).integers(0, 4, n).astype(np.int32)


def _square(n, seed, low=0.0):
    return np.random.default_rng(seed).uniform(low, 1.0, (n, n))


def _one(*args):
    return (args, {})


PROGRAMS = [
    (
        nussinov,
        [
            _one(_bases(12, 0)),
            _one(_bases(12, 1)),
            _one(_bases(1, 2)),
            _one(_bases(2, 3)),
            _one(_bases(5, 4)),
            _one(_bases(0, 5)),
        ],
    ),  # fmt: skip
    (
        upper_sweep,
        [_one(_square(6, 0)), _one(_square(6, 1)), _one(_square(1, 2)), _one(_square(3, 3))],
    ),  # fmt: skip
    (asserted_sweep, [_one(_square(5, 0)), _one(_square(5, 1, low=-1.0)), _one(_square(2, 2))]),
    (nested_cond, [_one(_square(6, 0), _bases(6, 1)), _one(_square(6, 2), _bases(6, 3))]),
    (
        reads_past_the_end,
        [_one(-np.arange(1.0, 6.0)), _one(np.arange(1.0, 6.0)), _one(np.array([1.0, -1.0, -2.0]))],
    ),  # fmt: skip
]


@pytest.mark.parametrize("backend", ["eager", "cpu"])
@pytest.mark.parametrize("case", range(len(PROGRAMS)), ids=lambda i: PROGRAMS[i][0].__name__)
def test_matches_eager_under_fullgraph(case, backend):
    check_without_breaks(*PROGRAMS[case], backend)


@pytest.mark.parametrize("fn", [nussinov, upper_sweep, asserted_sweep, nested_cond])
def test_the_outer_loop_is_one_loop_node_and_new_data_does_not_recompile(fn):
    first = (_bases(10, 0),) if fn is nussinov else (_square(10, 0),)
    if fn is nested_cond:
        first = (*first, _bases(10, 1))
    report = tc.explain(fn)(*[a.copy() for a in first])
    assert report.graph_count == 1 and report.graph_break_count == 0, str(report)
    lines, first_line = inspect.getsourcelines(fn)
    at = first_line + next(k for k, line in enumerate(lines) if "for i in range(n - 1" in line)
    outer = [loop for loop in report.loops if loop.lineno == at]
    assert outer and all(loop.captured for loop in outer), report.loops
    tc.reset()
    compiled = tc.compile(fn, fullgraph=True)
    for seed in range(3):
        args = [np.random.default_rng(seed).permutation(a.ravel()).reshape(a.shape) for a in first]
        if fn is asserted_sweep:
            args[0] = np.abs(args[0])
        expected = fn(*[a.copy() for a in args])
        np.testing.assert_array_equal(compiled(*args), expected)
    assert tc.counters()["frames_compiled"] == 1 and tc.counters()["recompiles"] == 0


def test_a_real_iteration_past_the_end_on_the_first_call_raises_eagers_index_error():
    compiled = tc.compile(reads_past_the_end)
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(np.arange(1.0, 6.0))
    assert compiled(-np.arange(1.0, 6.0)) == 0.0
