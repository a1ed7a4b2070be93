"""While loops on array conditions: each case runs eagerly and compiled (bitwise on the eager
backend), and pins whether its loop became a ``while_loop`` node (`tracer/loops/while_loops.py`):
captured at the bottom test (after one traced iteration), at the top test, negated tests,
zero iterations, nested loops, writes into arrays, warnings and errors in the body; forms
that keep the graph break at the test (``break``, a local read after the loop with no value
before it, a condition that is not an array's) still match eager code.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from diffharness import C, case_id, check, max_recompiles, on_every_backend

import tcompile as tc
from tcompile.tracer.ir.loop_nodes import WhileLoop


def while_nodes(graph) -> list:
    found = []
    for node in graph.nodes:
        if isinstance(node.target, WhileLoop):
            found.append(node.target)
        if hasattr(node.target, "body"):
            found += while_nodes(node.target.body)
    return found


def shape_of(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explained = tc.explain(fn)(*args)
    nodes = [r for g in explained.graphs for r in while_nodes(g)]
    return explained, nodes


def line(n=16, seed=0):
    return np.random.default_rng(seed).standard_normal(n)


# --- captured --------------------------------------------------------------------------------


def relax(x, tol):
    change = 1.0  # a float before the loop, a NumPy scalar after its first iteration
    while change > tol:
        y = 0.25 * np.roll(x, 1) + 0.5 * x + 0.25 * np.roll(x, -1)
        change = np.abs(y - x).max()
        x = y
    return x


def halve_until_small(x, tol):
    while np.abs(x).max() > tol:
        x = x * 0.5
    return x


def until_done(x):
    done = np.False_
    while not done:
        x = x + 1
        done = x.sum() > 100
    return x


def newton_sqrt(a):
    x = a.copy()
    while np.max(np.abs(x * x - a)) > 1e-12 * a.max():
        x = 0.5 * (x + a / x)
    return x


def in_place(x, limit):
    count = np.zeros((), np.int64)
    while x.max() < limit:
        x *= 2.0
        count += 1
    return count


def counter_after(x):
    steps = np.int64(0)
    while x.sum() > 1.0:
        x = x * 0.9
        steps = steps + 1
    return x, steps


def sweeps_counted(f, tol):
    u = np.zeros_like(f)
    change = np.inf
    sweeps = 0  # a Python int counter: the node carries it, its value is known after the call
    while change > tol:
        v = u.copy()
        v[1:-1] = 0.5 * (u[:-2] + u[2:]) + f[1:-1]
        change = np.max(np.abs(v - u))
        u = v
        sweeps += 1
    return u, sweeps, sweeps * 2


def elapsed_time(u, tol):
    t = 0.0  # a Python float the node carries as a float of the graph
    while np.abs(u).max() > tol:
        u = u * 0.5
        t += 0.25
    return u, t


def counter_used_as_size(x):
    n = 0
    while x.sum() > 1:
        x = x * 0.5
        n += 1
    return x[:n]  # the count as a slice bound: the graph breaks here, the result is right


def while_in_for(x):
    for _ in range(3):
        while x.max() > 1.0:
            x = x * 0.5
        x = x + 2.0
    return x


def for_in_while(x):
    while x.sum() < 100.0:
        for i in range(3):
            x = x + i
    return x


def while_else(x):
    while x.max() > 1.0:
        x = x / 3.0
    else:
        x = -x
    return x


def warns_in_body(x):
    while x.sum() > 1.0:
        x = np.sqrt(x - 0.5)  # "invalid value" once x < 0.5, then NaN ends the loop
    return x


def raises_in_body(x, idx):
    while x.sum() < 50.0:
        x = x + x[idx]
    return x


def escape_time(re, im, maxiter):
    counts = np.zeros(re.shape[0], dtype=np.int64)
    for p in range(re.shape[0]):
        zr, zi, n = 0.0, 0.0, 0
        while zr * zr + zi * zi <= 4.0 and n < maxiter:  # `and` of a NumPy bool and ints
            zr, zi = zr * zr - zi * zi + re[p], 2.0 * zr * zi + im[p]
            n += 1
        counts[p] = n
    return counts


def three_tests(x, most):
    z, k = x * 0.0, 0
    while z[0] < 3.0 and k < most and z[1] > -1.0:  # the third only where both hold
        z = z + x
        k += 1
    return z, k


def counted_escape(re, im, maxiter):
    counts = np.zeros(re.shape[0], dtype=np.int64)
    for p in range(re.shape[0]):
        zr, zi, n = 0.0, 0.0, 0
        while n < maxiter and zr * zr + zi * zi <= 4.0:  # the ints first: a bool of the graph
            zr, zi = zr * zr - zi * zi + re[p], 2.0 * zr * zi + im[p]
            n += 1
        counts[p] = n
    return counts


def scan_positive(a, n):
    total, i = np.zeros(1), 0
    while i < n and a[i] > 0:  # a[i] read only where i < n: past the end it would raise
        total += a[i]
        i += 1
    return total, i


def either_test(x, least):
    z, k = x * 0.0, 0
    while z[0] < 3.0 or k < least:
        z = z + x
        k += 1
    return z, k


def not_both(x, most):
    z, k = x * 0.0, 0
    while not (z[0] > 2.0 and k >= most):  # runs until both hold
        z = z + x
        k += 1
    return z, k


def until_either(x, most):
    z, k = x * 0.0, 0
    while not (z[0] > 2.0 or k >= most):  # runs while both are false
        z = z + x
        k += 1
    return z, k


def grid(n=24):
    return np.linspace(-2.0, 1.0, n), np.linspace(-1.2, 1.2, n)


CAPTURED = [
    C(
        "escape_time",
        escape_time,
        lambda: (*grid(), 40),
        lambda: (*grid(7), 3),
        lambda: (*grid(5), 0),
    ),  # fmt: skip
    C(
        "three_tests",
        three_tests,
        lambda: (np.array([0.5, 0.2]), 10),
        lambda: (np.array([0.1, -0.3]), 50),
        lambda: (np.array([0.5, 0.2]), 0),
    ),  # fmt: skip
    C(
        "counted_escape",
        counted_escape,
        lambda: (*grid(), 40),
        lambda: (*grid(7), 3),
        lambda: (*grid(5), 0),
    ),  # fmt: skip
    C(
        "scan_positive",
        scan_positive,
        lambda: (np.array([1.0, 2.0, -1.0, 4.0]), 4),
        lambda: (np.ones(3), 3),  # i reaches n: a[3] is never read
        lambda: (np.ones(3), 0),
    ),  # fmt: skip
    C(
        "either_test",
        either_test,
        lambda: (np.array([0.5, 0.2]), 10),
        lambda: (np.array([2.0, 0.2]), 1),  # the ints alone keep it going
        lambda: (np.array([0.5, 0.2]), 0),
    ),  # fmt: skip
    C(
        "not_both",
        not_both,
        lambda: (np.array([0.5, 0.2]), 10),
        lambda: (np.array([0.1, -0.3]), 3),
        lambda: (np.array([3.0, 0.2]), 0),
    ),  # fmt: skip
    C(
        "until_either",
        until_either,
        lambda: (np.array([0.5, 0.2]), 10),
        lambda: (np.array([0.1, -0.3]), 3),
        lambda: (np.array([3.0, 0.2]), 5),
    ),  # fmt: skip
    C("relax", relax, lambda: (line(), 1e-3), lambda: (line(seed=1), 1e-6), lambda: (line(), 5.0)),
    C(
        "halve_until_small",
        halve_until_small,
        lambda: (line() * 10, 0.1),
        lambda: (line() * 1e-3, 0.1),
        lambda: (line(seed=2) * 1e6, 0.5),
    ),  # fmt: skip
    C("until_done", until_done, lambda: (np.ones(4),), lambda: (np.full(4, 200.0),)),
    C("newton_sqrt", newton_sqrt, lambda: (np.arange(1.0, 9.0),), lambda: (np.full(5, 2.0),)),
    C("in_place", in_place, lambda: (np.ones(4), 100.0), lambda: (np.ones(4), 0.5)),
    C("counter_after", counter_after, lambda: (np.ones(4),), lambda: (np.full(4, 0.1),)),
    C(
        "sweeps_counted",
        sweeps_counted,
        lambda: (line(12) * 0.01, 1e-8),
        lambda: (line(12, seed=1) * 0.01, 1e-8),
    ),  # fmt: skip
    C("elapsed_time", elapsed_time, lambda: (line() * 10, 0.1), lambda: (line(seed=1), 1e-3)),
    C("while_in_for", while_in_for, lambda: (line() * 8,), lambda: (line(seed=3),)),
    C("for_in_while", for_in_while, lambda: (np.zeros(4),), lambda: (np.full(4, 30.0),)),
    C("while_else", while_else, lambda: (line() * 9,), lambda: (np.zeros(3),)),
    C("warns_in_body", warns_in_body, lambda: (np.ones(3),), lambda: (np.full(3, 9.0),)),
    C(
        "raises_in_body",
        raises_in_body,
        lambda: (np.ones(3), 1),
        lambda: (np.ones(3), 7),
        pattern="AABA",
    ),  # fmt: skip
]

# Cases whose loop is one while_loop node (and no graph break) on their first builder.
CAPTURED_NODES = {"escape_time": 1, "three_tests": 1, "counted_escape": 1, "scan_positive": 1,
                  "until_either": 1, "either_test": 1, "not_both": 1, "sweeps_counted": 1, "relax": 1, "halve_until_small": 1, "until_done": 1, "newton_sqrt": 1,
                  "in_place": 1, "counter_after": 1, "elapsed_time": 1, "while_in_for": 1, "for_in_while": 1,
                  "while_else": 1, "warns_in_body": 1, "raises_in_body": 1}  # fmt: skip


@pytest.mark.parametrize("case", CAPTURED, ids=case_id)
def test_first_call_replays_the_trace_run(case, replays):
    case.run()
    if case.id == "warns_in_body":  # its warnings belong to the real run
        assert True not in replays
    elif case.id != "raises_in_body":  # the trace run raises: no loop node
        assert replays and replays[0], "the first call ran the loop again"


# --- not captured: the graph break at the test, as before ------------------------------------


def with_break(x):
    while x.sum() > 1.0:
        x = x * 0.5
        if x[0] > 100:
            break
    return x


def set_in_body_only(x):  # captured after one break: see the test below
    while x.sum() > 1.0:
        x = x * 0.5
        last = x[0]
    return x, last


def changes_kind(x):
    while x.sum() > 1.0:
        x = x[:-1]
    return x


def python_condition(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x


def list_grows(x):
    seen = []
    while x.sum() > 1.0:
        x = x * 0.5
        seen.append(1)
    return x, len(seen)


NOT_CAPTURED = [
    C("with_break", with_break, lambda: (line() * 8,), lambda: (np.full(3, 200.0),)),
    C("changes_kind", changes_kind, lambda: (np.ones(6),), lambda: (np.full(6, 0.1),)),
    C("python_condition", python_condition, lambda: (np.ones(3), 4), lambda: (np.ones(3), 0)),
    C("list_grows", list_grows, lambda: (np.ones(3) * 4,), lambda: (np.zeros(3),)),
]


ALL = [
    *CAPTURED,
    *NOT_CAPTURED,
    C("set_in_body_only", set_in_body_only, lambda: (np.ones(3) * 4,), lambda: (np.zeros(3),)),
]


@pytest.mark.parametrize("case", ALL, ids=case_id)
def test_matches_eager(case):
    case.run()


@pytest.mark.parametrize("case", ALL, ids=case_id)
def test_matches_eager_on_the_default_backend(case):
    check(case.fn, *case.builders, pattern=case.pattern, make_compiled=tc.compile, name=case.id)


@pytest.mark.parametrize("case", CAPTURED, ids=case_id)
def test_captured_is_a_while_loop_node(case):
    explained, nodes = shape_of(case.fn, case.builders[0]())
    assert len(nodes) == CAPTURED_NODES[case.id], explained
    assert explained.graph_break_count == 0, explained
    assert any("while_loop node" in loop.describe() for loop in explained.loops), explained


@pytest.mark.parametrize("case", NOT_CAPTURED, ids=case_id)
def test_not_captured_keeps_no_while_node(case):
    _, nodes = shape_of(case.fn, case.builders[0]())
    assert nodes == []


def test_a_counter_used_as_a_number_after_the_loop_breaks_there():
    explained, nodes = shape_of(counter_used_as_size, (np.arange(1.0, 6.0),))
    assert len(nodes) == 1 and explained.graph_break_count == 1, explained
    assert "a number a loop node computes" in explained.break_reasons[0].reason
    check(counter_used_as_size, lambda: (np.arange(1.0, 6.0),), lambda: (np.full(3, 40.0),),
          make_compiled=tc.compile, name="counter_used_as_size")  # fmt: skip


def test_fullgraph_while_on_a_residual():
    f = tc.compile(relax, fullgraph=True)
    for seed in range(3):
        x = line(seed=seed)
        assert np.array_equal(f(x, 1e-4), relax(x, 1e-4))
    assert tc.counters()["recompiles"] == 0


def test_not_captured_reason_is_in_the_break():
    explained, _ = shape_of(with_break, (np.ones(3) * 4,))
    hints = [h for brk in explained.break_reasons for h in brk.hints]
    assert any("the body can leave the loop (break" in h for h in hints), explained


def test_set_in_body_only_is_captured_after_the_break_at_the_top():
    # ``last`` has no value before the loop: the top test breaks the graph; the resumed frame
    # traces the first iteration, and its bottom test makes the rest one node
    explained, nodes = shape_of(set_in_body_only, (np.ones(3) * 4,))
    assert len(nodes) == 1 and explained.graph_break_count == 1, explained
    hints = [h for brk in explained.break_reasons for h in brk.hints]
    assert any("last is set in the body" in h for h in hints), explained


def test_zero_iterations_on_the_traced_call():
    # the condition is false when traced: the body's trace ran on the examples, and is undone
    x = np.full(4, 0.01)
    explained, nodes = shape_of(in_place, (x.copy(), 0.001))
    assert len(nodes) == 1, explained
    check(in_place, lambda: (np.full(4, 0.01), 0.001), lambda: (np.full(4, 1e-5), 0.001),
          make_compiled=tc.compile, name="zero_then_some", after=max_recompiles(0))  # fmt: skip


CASES = ALL  # tests/triton runs them again on the triton backend


_, _, test_cpu_backend = on_every_backend(ALL)  # loops compiled by numba
