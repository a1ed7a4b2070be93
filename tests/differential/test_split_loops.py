"""Graph breaks inside loops: the loop stays Python, its body is compiled as a function of its
own, and tracing resumes at the next iteration (`tracer/loops/split_loop.py`).

Each case runs eagerly and compiled (eager backend) and compares results bitwise, printed
output, raised exceptions and mutated arguments; `after` checks that the frame was compiled
(not skipped) where it can be, and skipped where it cannot.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from diffharness import C, case_id

import tcompile as tc

# Branches on array values break the graph here, as torch.compile's do (cond nodes off): they
# drive the breaks these tests are about.
pytestmark = pytest.mark.usefixtures("branches_break")


def _split(counters):
    assert counters["frames_skipped"] == 0, counters
    assert counters["cache_limit_hits"] == 0, counters


def _skipped(counters):
    assert counters["frames_skipped"] >= 1, counters


# -- loop forms --------------------------------------------------------------------------------


def range_print(x, n):
    for i in range(n):
        x = x * 1.5 + i
        print("step", i, x.sum())
    return x


def rows_print(m):
    total = m[0] * 0
    for row in m:
        total = total + row
        print(row.max())
    return total


def enumerate_rows(m):
    out = []
    for i, row in enumerate(m):
        print(i)
        out.append(row * i)
    return out


def zip_rows(a, b):
    acc = 0.0
    for ra, rb in zip(a, b):
        acc = acc + (ra * rb).sum()
        print(acc)
    return acc


def list_of_arrays(xs):
    acc = xs[0] * 0
    for v in xs:
        acc = acc + np.sin(v)
        print(len(v))
    return acc


def while_counter(x):
    k = 0
    while k < 4:
        x = x + k
        print(k)
        k += 1
    return x, k


def while_residual(x):
    err = 1.0
    sweeps = 0
    while err > 1e-3:  # a branch on an array's value, every iteration
        new = 0.5 * (x + np.roll(x, 1))
        err = np.abs(new - x).max()
        x = new
        sweeps += 1
    return x, sweeps


def item_while(a):
    x = a.copy()
    err = 1.0
    while err > 1e-10:  # a Python float each iteration: compared in the graph, not guarded
        x = 0.5 * (x + a / x)
        err = (np.abs(x * x - a) / a).max().item()
    return x, err


def data_branch_in_body(x):
    for _ in range(6):
        if x.sum() > 10:  # a branch on an array's value
            x = x - 3
        else:
            x = x * 2
    return x


def index_branch(x, n):
    for i in range(n):
        x = x + 1
        if i % 3 == 0:  # a branch on the loop's int: one break per iteration, no recompile
            tc.graph_break()
    return x


# -- leaving the loop --------------------------------------------------------------------------


def break_continue_return(m):
    t = m[0] * 0
    for r in m:
        if r[0] > 100:
            return r, "returned"
        print(r[0])
        if r[0] < 0:
            continue
        if r[0] > 50:
            break
        t = t + r
    return t, "done"


def for_else(x):
    for i in range(3):
        print(i)
        if x[i] > 5:
            break
    else:
        x = x * 10
    return x


def while_true_break(x):
    i = 0
    while True:
        x = x * 1.1
        print(i)
        i += 1
        if x.sum() > 20:
            break
    return x, i


# -- state -------------------------------------------------------------------------------------


def set_inside_read_after(m):
    for r in m:
        last = r * 2
        print("row")
    return last  # unbound when m has no rows: UnboundLocalError, as eager


def loop_variable_after(x, n):
    for i in range(n):
        x = x + i
        print(i)
    return x, i


def writes_into_argument(x):
    for i in range(3):
        x[i] = x[i] * 2
        print(i)


def closure_cell(x):
    acc = [0]

    def add(v):
        acc[0] += v

    for i in range(3):
        add(i)
        print(i)
        x = x + acc[0]
    return x, acc


def nonlocal_counter(x):
    count = 0

    def bump():
        nonlocal count
        count += 1

    for _ in range(3):
        bump()
        print(count)
    return x * count


def nested_loops(x):
    t = x * 0
    for i in range(3):
        for j in range(2):
            t = t + x * j
            print("ij", i, j)
        t = t - 1
    return t


def comprehension_with_print(x):
    return [print(i) or v * 2 for i, v in enumerate(x)]


def dict_comprehension_with_print(x):
    return {i: (print(i), v)[1] for i, v in enumerate(x)}


def set_comprehension_with_print(x):
    return {print(i) or int(v) % 3 for i, v in enumerate(x)}


def return_from_inner_loop(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            print(i, j)
            if m[i, j] > 4:
                return i, j, m[i, j]
    return None


def raises_mid_loop(x):
    for i in range(4):
        print(i)
        x = x + np.ones(3 if i < 2 else 4)  # a shape error on the third iteration
    return x


class Scaler:
    def __init__(self, k):
        self.k = k

    def run(self, x):
        for i in range(3):
            x = x * self.k
            print(i)
        return x


def method_loop(x):
    return Scaler(2.0).run(x)


# -- loops that still run eagerly (the frame is skipped, as before) -----------------------------


def inside_with_block(x):
    with np.errstate(all="ignore"):
        for i in range(3):
            x = x / 0.0
            print(i)
    return x


def reads_before_setting(m):
    for r in m:
        if r[0] > 0:
            print(y)  # noqa: F821 - y is set by an earlier iteration, or unbound
        y = r
    return y


def signal(n, scale=1.0):
    return np.linspace(-1.0, 2.0, n) * scale


CASES = [
    C("range_print", range_print, lambda: (signal(4), 5), lambda: (signal(4), 0), after=_split),
    C(
        "range_print_sizes",
        range_print,
        lambda: (signal(4), 2),
        lambda: (signal(6), 9),
        after=_split,
    ),
    C(
        "rows_print",
        rows_print,
        lambda: (signal(6).reshape(3, 2),),
        lambda: (signal(8).reshape(2, 4),),
        after=_split,
    ),
    C("enumerate_rows", enumerate_rows, lambda: (signal(6).reshape(3, 2),), after=_split),
    C(
        "zip_rows",
        zip_rows,
        lambda: (signal(6).reshape(3, 2), signal(4).reshape(2, 2)),
        after=_split,
    ),
    C("list_of_arrays", list_of_arrays, lambda: ([signal(3), signal(3, 2.0)],), after=_split),
    C("while_counter", while_counter, lambda: (signal(3),), after=_split),
    C("while_residual", while_residual, lambda: (signal(8),), lambda: (np.ones(8),), after=_split),
    C("item_while", item_while, lambda: (np.linspace(1.0, 1e6, 8),), after=_split),
    C("data_branch_in_body", data_branch_in_body, lambda: (signal(4, 3.0),), after=_split),
    C("index_branch", index_branch, lambda: (signal(3), 7), lambda: (signal(3), 40), after=_split),
    C(
        "break_continue_return",
        break_continue_return,
        lambda: (np.array([[1.0, 2], [-1, 3], [4, 5]]),),
        lambda: (np.array([[1.0, 2], [200, 3]]),),
        lambda: (np.array([[1.0, 2], [60, 3], [4, 5]]),),
        after=_split,
    ),
    C("for_else", for_else, lambda: (np.arange(4.0),), lambda: (np.arange(4.0) * 3,), after=_split),
    C("while_true_break", while_true_break, lambda: (np.ones(3),), after=_split),
    C("set_inside_read_after", set_inside_read_after, lambda: (np.ones((2, 2)),), after=_split),
    C("loop_variable_after", loop_variable_after, lambda: (signal(2), 3), after=_split),
    # no iteration: what follows the loop gets the local unbound and raises (it runs eagerly)
    C(
        "set_inside_read_after_empty",
        set_inside_read_after,
        lambda: (np.ones((2, 2)),),
        lambda: (np.ones((0, 2)),),
    ),
    C(
        "loop_variable_after_empty",
        loop_variable_after,
        lambda: (signal(2), 3),
        lambda: (signal(2), 0),
    ),
    C("writes_into_argument", writes_into_argument, lambda: (np.arange(4.0),), after=_split),
    C("closure_cell", closure_cell, lambda: (np.ones(2),), after=_split),
    C("nonlocal_counter", nonlocal_counter, lambda: (np.ones(2),), after=_split),
    C("nested_loops", nested_loops, lambda: (signal(3),), after=_split),
    C("raises_mid_loop", raises_mid_loop, lambda: (np.ones(3),)),  # the raising frame runs eagerly
    C("inside_with_block", inside_with_block, lambda: (np.ones(2),), after=_skipped),
    C(
        "reads_before_setting",
        reads_before_setting,
        lambda: (np.ones((2, 2)),),
        lambda: (-np.ones((2, 2)),),
        after=_skipped,
    ),
    # 3.12 inlines the comprehension (its list under the iterator on the stack); 3.11 calls a
    # function of its own, given the iterator made outside it
    C("comprehension_with_print", comprehension_with_print, lambda: (signal(3),), after=_split),
    C("dict_comprehension", dict_comprehension_with_print, lambda: (signal(3),), after=_split),
    C("set_comprehension", set_comprehension_with_print, lambda: (np.arange(5.0),)),
    C(
        "return_from_inner_loop",
        return_from_inner_loop,
        lambda: (np.arange(12.0).reshape(3, 4),),
        lambda: (np.zeros((2, 2)),),
        after=_split,
    ),
    # 3.11: a zero-argument super() in a routed frame runs eagerly (not a split loop's doing)
    C("method_loop", method_loop, lambda: (signal(3),), after=_split),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_split_loop_matches_eager(case):
    case.run()


def _compiles(fn, *args) -> list[str]:
    """The frames compiled for one call of ``fn`` after ``tc.reset()``."""
    tc.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no cache-limit or internal-error warning
        return tc.explain(fn)(*args).compiled_frames


def test_compiles_do_not_grow_with_the_trip_count():
    # The body specialises on its first item, then takes the loop's int as a graph input;
    # a branch on that int breaks each iteration instead of recompiling.
    short, long = _compiles(index_branch, signal(3), 4), _compiles(index_branch, signal(3), 60)
    assert sorted(short) == sorted(long)
    bodies = [q for q in long if "(loop body at line" in q]
    assert len(bodies) == 2, long


def test_a_body_that_specialises_every_iteration_runs_the_loop_plainly_before_the_limit():
    def grow(x, n):
        out = []
        for i in range(n):
            out.append(x[: i + 1].sum() + np.zeros(i + 1).sum())  # a new size each iteration
            print(i)
        return out

    compiled = tc.compile(grow, backend="eager")
    tc.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = compiled(signal(30), 30)
    assert got == grow(signal(30), 30)
    counters = tc.counters()
    assert counters["cache_limit_hits"] == 0 and counters["plain_loops"] == 1, counters
    loops = tc.explain(grow)(signal(30), 30).loops
    assert any(loop.plain and "compiled again on each of" in loop.reason for loop in loops)


def test_the_glue_runs_the_loop_and_names_its_body():
    out = tc.explain(range_print)(signal(3), 3)
    frame = next(r for r in out.reports if r.function == "range_print")
    assert "runs in Python, its body as range_print (loop body at line" in frame.sources["resume"]
    assert "the loop at line" in frame.breaks[0].explanation


def test_why_a_loop_cannot_run_split_is_reported():
    out = tc.explain(inside_with_block)(np.ones(2))
    assert "the loop cannot run split: it is inside a with-block" in out.skip_reasons[0]
    out = tc.explain(reads_before_setting)(-np.ones((2, 2)))
    assert "an iteration may read y before setting it" in out.skip_reasons[0]


@pytest.mark.parametrize("fn", [range_print, while_counter, nested_loops])
def test_fullgraph_still_refuses_a_break_in_a_loop(fn):
    compiled = tc.compile(fn, fullgraph=True)
    args = (signal(3), 2) if fn is range_print else (signal(3),)
    with pytest.raises(tc.Unsupported):
        compiled(*args)
