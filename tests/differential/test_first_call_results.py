"""A graph's first call takes the trace's own results (tracer/ir/first_run.py,
`first_call_from_trace`): the trace ran every operation on the caller's arrays, so running the
graph again right after it would double the first call of a long function on large arrays.

Taken only where they are the graph's: the eager backend, no warning or floating-point error
met while tracing (the real run shows it), no caller's array written, no example made on
stand-ins or by a function of its own, the whole frame one graph without loop or cond nodes.
Each case counts the graph's runs (a backend that is the eager one, counting) and compares
everything observable with eager code on the first and later calls (`check_same_calls`).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from harness import check_same_calls

import tcompile as tc
from tcompile.backend.eager import eager_backend

RUNS: list[str] = []


def counting_eager(graph, example_inputs):
    """The eager backend, noting each run of a graph."""
    made = eager_backend(graph, example_inputs)

    def run(*args):
        RUNS.append(graph.name)
        return made.fn(*args)

    return dataclasses.replace(made, fn=run)


counting_eager.loop_nodes = True


def arc(a, b, c, d):
    s = np.sin((c - a) / 2) ** 2 + np.cos(a) * np.cos(c) * np.sin((d - b) / 2) ** 2
    return 2 * np.arcsin(np.sqrt(s))


def given_back(x, t):
    y = x * t
    return x, y, y.sum(), x.shape[0], y[1:]  # an input, a view of a result, numbers


def logs(x):
    return np.log(x)  # log(0) warns: the real run shows it


def writes_its_argument(x):
    x += 1.0
    return x * 2


def inverse(m):
    return np.linalg.inv(m)  # a singular example: traced on stand-ins, raises when run


def breaks(x):
    y = x + 1
    print("between")
    return y * 2


def loops(x):
    for i in range(3):
        x = x * 0.5 + i
    return x


RNG = np.random.default_rng(7)
X = RNG.random(64)
# (function, its calls, runs of its graphs on the first call)
FIRST_CALLS = {
    "arc": (arc, [tuple(RNG.random(64) for _ in range(4))] * 2, 0),
    "given_back": (given_back, [(X, 0.5), (X, 0.5), (X + 1, 2.5)], 0),
    "logs": (logs, [(np.array([0.0, 1.0, 2.0]),)] * 2, 1),
    "writes_its_argument": (writes_its_argument, [(X,)] * 2, 1),
    "inverse": (inverse, [(np.zeros((3, 3)),), (np.eye(3) * 2,)], 1),
    "breaks": (breaks, [(X,)] * 2, 1),  # the graph before the break (the resume's: taken)
    "loops": (loops, [(X,)] * 2, 1),
}


@pytest.fixture(autouse=True)
def _fresh():
    tc.reset()
    RUNS.clear()


@pytest.mark.parametrize("name", list(FIRST_CALLS))
def test_the_first_call_takes_the_trace_results_only_where_they_are_the_graphs(name, capsys):
    fn, calls, first_runs = FIRST_CALLS[name]
    calls = [(args, {}) for args in calls]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a break's report, where it breaks
        check_same_calls(fn, calls[:1], fullgraph=False, backend=counting_eager)
    assert len(RUNS) == first_runs, RUNS
    RUNS.clear()
    check_same_calls(fn, calls, fullgraph=False, backend=counting_eager)
    assert len(RUNS) > first_runs, RUNS  # a later call of an entry runs its graph


def test_the_first_calls_results_are_the_callers_objects_as_eager_gives_them():
    compiled = tc.compile(given_back, backend="eager")
    x = X.copy()
    same, y, total, n, tail = compiled(x, 0.5)
    assert same is x and n == 64 and type(total) is np.float64
    assert tail.base is y and np.shares_memory(tail, y)
    assert y.tobytes() == (x * 0.5).tobytes()
