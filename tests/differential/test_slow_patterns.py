"""Never slower than plain (issue 19, items 11 and 12): the patterns of bench/slow_patterns.py,
and the loops that now run as plain Python, against eager Python bitwise.

Each case runs eagerly and compiled (eager backend) over a sequence of calls and compares
results, printed output (the kernels' SINK too), exceptions and the arguments after the call;
``after`` checks the counters: a split loop whose body is cheap runs as plain Python
(``plain_loops``), nothing reaches the cache limit, recompiles stay bounded when lengths change
and when objects are new on every call, and loops whose bodies do real NumPy work stay
compiled.

Branches on array values break the graph here (``tc.config.cond_nodes = False``): these are the
patterns of split loops, which other breaks drive as well. With cond nodes (the default) the
branchy loops among them are one loop node each (tests/differential/test_conds.py), and
bench/slow_patterns.py measures both ways against plain Python.
"""

from __future__ import annotations

import array
import collections
import itertools
import os
import sys
from dataclasses import replace

import numpy as np
import pytest
from diffharness import C, case_id, check

import tcompile as tc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import slow_kernels as k  # noqa: E402
import split_loops  # noqa: E402


def rng(seed=0):
    return np.random.default_rng(seed)


def sink_setup(letter):
    k.SINK.seek(0)
    k.SINK.truncate()


def sink_observe():
    return k.SINK.getvalue()


def plain(counters):
    """The split loop runs as plain Python, and nothing reached the cache limit."""
    assert counters["plain_loops"] >= 1, counters
    assert counters["cache_limit_hits"] == 0, counters


def eager_frame(counters):
    """The frame runs eagerly (plain Python, no split loop): nothing reached the cache limit."""
    assert counters["frames_skipped"] >= 1 and counters["plain_loops"] == 0, counters
    assert counters["cache_limit_hits"] == 0, counters


def bounded(limit):
    def check_counters(counters):
        assert counters["cache_limit_hits"] == 0, counters
        assert counters["recompiles"] <= limit, counters

    return check_counters


def compiled_loops(counters):
    """The split loops pay: none runs as plain Python."""
    assert counters["plain_loops"] == 0, counters
    assert counters["frames_skipped"] == 0, counters


# -- (A) the fourteen benchmark patterns ------------------------------------------------------------


def nbody_args(seed, steps=40):
    g = rng(seed)
    return g.random((16, 1)) + 0.5, g.standard_normal((16, 3)), np.zeros((16, 3)), 0.01, steps


def wave_args(width, steps):
    grid = np.linspace(0.0, 1.0, 256)
    u = np.exp(-200.0 * (grid - 0.5) ** 2) * width
    return u, u.copy(), 0.25, steps


def rows_of(*lengths, seed=0, width=32):
    return [rng(seed + n).random((n, width)) for n in lengths]


PATTERNS = [
    C("count_positive", k.count_positive, lambda: rng(0).standard_normal(2000),
      lambda: rng(1).standard_normal(1500), after=plain),
    C("count_positive_empty", k.count_positive, lambda: rng(0).standard_normal(2000),
      lambda: np.zeros(0), lambda: np.ones(3), pattern="AABCA"),
    C("crc16_bits", k.crc16_bits, lambda: rng(0).integers(0, 256, 300),
      lambda: rng(1).integers(0, 256, 200), after=plain),
    C("crc16_bits_int32", k.crc16_bits, lambda: rng(2).integers(0, 256, 300).astype(np.int32),
      lambda: rng(3).integers(0, 256, 300).astype(np.int32)),
    C("row_assert", k.normalize_rows, lambda: rng(0).random((200, 32)) + 0.5,
      lambda: rng(1).random((150, 32)) + 0.5, after=plain),
    C("row_assert_fails", k.normalize_rows, lambda: rng(0).random((200, 8)) + 0.5,
      lambda: np.vstack([rng(1).random((120, 8)) + 0.5, np.zeros((1, 8))]),
      pattern="AABBA"),
    C("crc16_npbench", k.crc16_npbench, lambda: rng(0).integers(0, 256, 300, dtype=np.uint8),
      lambda: rng(1).integers(0, 256, 120, dtype=np.uint8), after=plain),
    C("nussinov", k.nussinov, lambda: rng(0).integers(0, 4, 40).astype(np.int32),
      lambda: rng(1).integers(0, 4, 30).astype(np.int32), pattern="AAB", after=plain),
    C("nbody", k.nbody, lambda: nbody_args(0), lambda: nbody_args(1, 25), after=bounded(6)),
    C("wave", k.wave, lambda: wave_args(1.0, 200), lambda: wave_args(3.0, 150),
      after=bounded(6)),
    C("check_mask", k.check_mask,
      lambda: (rng(0).integers(0, 2, (1000, 4)), np.array([1, 0, 1])),
      lambda: (rng(1).integers(0, 2, (600, 4)), np.array([0, 1, 1])), after=plain),
    C("ndindex_print", k.ndindex_negatives, lambda: rng(0).standard_normal((8, 6)),
      lambda: rng(1).standard_normal((5, 4)), setup=sink_setup, observe=sink_observe,
      # np.ndindex over a known shape is traced (a loop node where the body allows): this
      # body branches on data, so the loop is split, and its body's entries pin the index
      # ints until they turn dynamic (9; 5 when np.ndindex was an opaque object)
      pattern="AAAAABBBBBA", after=bounded(9)),
    C("rows_lengths", k.row_energy, *(lambda n=n: rows_of(n)[0] for n in range(40, 88, 4)),
      pattern="ABCDEFGHIJKLA", after=bounded(2)),
    C("prefix_slice", k.prefix_above, lambda: rng(0).random(200), lambda: rng(1).random(120),
      after=plain),
    C("print_round", k.print_sums, lambda: (rng(0).random(16), 50),
      lambda: (rng(1).random(8), 80), setup=sink_setup, observe=sink_observe, after=plain),
    C("radial_means", k.radial_means, lambda: (rng(0).random(400), rng(1).random(400) * 8, 8),
      lambda: (rng(2).random(300), rng(3).random(300) * 9, 8)),
    C("weighted_hits", k.weighted_hits, lambda: (rng(0).standard_normal(400), rng(1).random(400)),
      lambda: (rng(2).standard_normal(300) - 9.0, rng(3).random(300))),  # no hit
]  # fmt: skip


# -- (B) loops run as plain Python behave as Python ----------------------------------------------
# Long loops whose bodies branch on array values: each is split, found not to pay, and runs
# as plain Python from its first call on; all of Python's ways out of a loop must hold there.

N = 400


def signal(n=N, seed=0):
    return rng(seed).standard_normal(n)


def break_at(x, t):
    n = 0
    for v in x:
        if v > t:
            break
        n += 1
    return n


def for_else(x, t):
    for v in x:
        if v > t:
            found = v
            break
    else:
        found = None
    return found


def continue_negatives(x):
    total = 0.0
    for v in x:
        if v < 0:
            continue
        total += v
    return total


def return_inside(x, t):
    for i, v in enumerate(x):
        if v > t:
            return i, v
    return -1, None


def raises_midway(x):
    n = 0
    for v in x:
        if v > 2.5:
            raise ValueError(f"too large at {n}: {v}")
        n += 1
    return n


def assert_midway(x):
    for v in x:
        assert v < 3.0, "a value of 3 or more"
    return x.sum()


def prints_some(x):
    n = 0
    for v in x:
        if v > 1.5:
            print("large", n, v)
        n += 1
    return n


def appends_to(x, out):
    for v in x:
        if v > 0:
            out.append(v)
    return len(out)


COUNT = 0


def counts_globally(x):
    global COUNT
    for v in x:
        if v > 0:
            COUNT += 1
    return COUNT


def global_setup(letter):
    global COUNT
    COUNT = 0


def global_observe():
    return COUNT


def nonlocal_count(x):
    n = 0

    def bump():
        nonlocal n
        n += 1

    for v in x:
        if v > 0:
            bump()
    return n


class Counter:
    def __init__(self):
        self.n = 0
        self.last = None

    def feed(self, x):
        for v in x:
            if v > 0:
                self.n += 1
                self.last = v
        return self.n


class Doubler(Counter):
    def feed(self, x):
        return 2 * super().feed(x)


def method_loop(x):
    c = Counter()
    return c.feed(x), c.last


def super_loop(x):
    return Doubler().feed(x)


def nested(m):
    total = 0
    for row in m:
        for v in row:
            if v > 0:
                total += 1
    return total


def last_after(x):
    for v in x:
        if v > 10:
            print(v)
        last = v
    return last


def index_after(x):
    for i in range(len(x)):
        if x[i] > 10:
            print(i)
    return i


def while_walk(x):
    i = 0
    while x[i] < 2.0:
        i += 1
        if i == len(x):
            return -1
    return i


def while_true(x):
    i, total = 0, 0.0
    while True:
        total += x[i]
        if total > 5.0 or i == len(x) - 1:
            break
        i += 1
    return i, total


def dict_items(x):
    d = {i: float(v) for i, v in enumerate(x)}
    big = 0
    for key, _value in d.items():
        if x[key] > 0:
            big += 1
    return big


def gen(x):
    for v in x:
        yield v * 2


def over_generator(x):
    n = 0
    for v in gen(x):
        if v > 0:
            n += 1
    return n


def zip_branch(a, b):
    n = 0
    for u, v in zip(a, b):
        if u > v:
            n += 1
    return n


def flip_negatives(x):
    for i in range(len(x)):
        if x[i] < 0:
            x[i] = -x[i]


def comprehension(x):
    return [v * 2 if v > 0 else 0.0 for v in x]


def builds_text(x):
    text = ""
    for v in x[:120]:
        text += "+" if v > 0 else "-"
    return text


def argmax_loop(x):
    best, at = x[0], 0
    for i in range(1, len(x)):
        if x[i] > best:
            best, at = x[i], i
    return best, at


def two_loops(x):
    n = 0
    for v in x:
        if v > 0:
            n += 1
    m = 0
    for v in x:
        if v < 0:
            m += 1
    return n, m


def loop_then_numpy(x):
    n = 0
    for v in x:
        if v > 0:
            n += 1
    return np.cumsum(x) * n


PLAIN = [
    C("break_at", break_at, lambda: (signal(), 2.5), lambda: (signal(seed=1), 9.0), after=plain),
    C("for_else", for_else, lambda: (signal(), 2.8), lambda: (signal(seed=1), 9.0), after=plain),
    C("continue", continue_negatives, lambda: signal(), lambda: signal(300, 2), after=plain),
    C("return_inside", return_inside, lambda: (signal(), 2.8), lambda: (signal(), 9.0),
      after=plain),
    C("raises_midway", raises_midway, lambda: signal(), lambda: np.full(300, 0.5),
      lambda: np.r_[np.zeros(200), 3.0], pattern="AABBCCA"),
    C("assert_midway", assert_midway, lambda: np.full(300, 0.5),
      lambda: np.r_[np.zeros(250), 3.0], pattern="AABBA"),
    C("prints_some", prints_some, lambda: signal(), lambda: signal(seed=3), after=plain),
    C("appends_to", appends_to, lambda: (signal(), []), lambda: (signal(seed=1), [1.0]),
      after=plain),
    C("counts_globally", counts_globally, lambda: signal(), setup=global_setup,
      observe=global_observe, after=plain),
    C("nonlocal_count", nonlocal_count, lambda: signal(), lambda: signal(seed=2), after=plain),
    C("method_loop", method_loop, lambda: signal(), after=plain),
    C("super_loop", super_loop, lambda: signal(), lambda: signal(seed=4)),
    C("nested", nested, lambda: rng(0).standard_normal((40, 10)),
      lambda: rng(1).standard_normal((30, 12)), after=bounded(6)),
    C("last_after", last_after, lambda: signal(), lambda: np.zeros(0), pattern="AABA"),
    C("index_after", index_after, lambda: signal(), lambda: np.zeros(0), pattern="AABA"),
    C("while_walk", while_walk, lambda: np.r_[np.zeros(300), 5.0],
      lambda: np.zeros(200), after=plain),
    C("while_true", while_true, lambda: np.full(400, 0.01), lambda: np.full(300, 0.1),
      after=plain),
    # float(v) is a number of the graph: the dict the loop walks is made in the graph, and an
    # iterator over it cannot leave it, so the break at the branch runs the frame eagerly
    C("dict_items", dict_items, lambda: signal(), after=eager_frame),
    # a generator function's call runs the frame eagerly (not a split loop's doing)
    C("over_generator", over_generator, lambda: signal(), lambda: signal(seed=5)),
    C("zip_branch", zip_branch, lambda: (signal(), signal(seed=1)),
      lambda: (signal(300, 2), signal(250, 3)), after=plain),
    C("flip_negatives", flip_negatives, lambda: signal(), lambda: signal(seed=6), after=plain),
    C("comprehension", comprehension, lambda: signal(), lambda: signal(seed=7)),
    C("builds_text", builds_text, lambda: signal(), lambda: signal(seed=8), after=plain),
    C("argmax_loop", argmax_loop, lambda: signal(), lambda: signal(200, 9), after=plain),
    C("two_loops", two_loops, lambda: signal(), lambda: signal(seed=10), after=plain),
    C("loop_then_numpy", loop_then_numpy, lambda: signal(), lambda: signal(seed=11),
      after=plain),
]  # fmt: skip


# -- (D) a new length every call: the dim becomes dynamic, nothing recompiles per length ---------


def for_rows(x):
    total = np.zeros(x.shape[1])
    for row in x:
        total = total + row * row
    return total


def range_len_rows(x):
    total = np.zeros(x.shape[1])
    for i in range(len(x)):
        total = total + x[i] * i
    return total


def enumerate_rows(x):
    total = np.zeros(x.shape[1])
    for i, row in enumerate(x):
        total = total + row * i
    return total


def zip_rows(x, y):
    total = np.zeros(x.shape[1])
    for a, b in zip(x, y):
        total = total + a * b
    return total


def rows_from_zero(x):
    total = 0
    for row in x:
        total = total + row
    return total


def rows_to_list(x):
    out = []
    for row in x:
        out.append(row.sum())
    return out


def rows_with_break(x):
    total = np.zeros(x.shape[1])
    for row in x:
        if row.sum() > 1e9:
            break
        total = total + row
    return total


def range_minus_one(x):
    total = np.zeros(x.shape[1:])
    for i in range(len(x) - 1):
        total = total + x[i + 1] - x[i]
    return total


def range_past_the_rows(x, n):
    total = x[0] * 0
    for i in range(n):
        total = total + x[i]  # n past the rows: IndexError, as eager
    return total


LENGTHS = "ABCDEFGHIJKLA"
_TWELVE = [(lambda n=n: rows_of(n, width=3)[0]) for n in range(3, 27, 2)]
_TWELVE_PAIRS = [(lambda n=n: (rows_of(n, width=3)[0], rows_of(n + 1, width=3)[0]))
                 for n in range(3, 27, 2)]  # fmt: skip

LENGTH_CASES = [
    C("for_rows", for_rows, *_TWELVE, pattern=LENGTHS, after=bounded(2)),
    C("range_len_rows", range_len_rows, *_TWELVE, pattern=LENGTHS, after=bounded(2)),
    C("enumerate_rows", enumerate_rows, *_TWELVE, pattern=LENGTHS, after=bounded(2)),
    C("zip_rows", zip_rows, *_TWELVE_PAIRS, pattern=LENGTHS, after=bounded(3)),
    C("rows_from_zero", rows_from_zero, *_TWELVE, pattern=LENGTHS, after=bounded(2)),
    C("rows_to_list", rows_to_list, *_TWELVE, pattern=LENGTHS, after=bounded(4)),
    C("rows_with_break", rows_with_break, *_TWELVE, pattern=LENGTHS, after=bounded(4)),
    C("range_minus_one", range_minus_one, *_TWELVE, pattern=LENGTHS, after=bounded(4)),
    C("range_past_the_rows", range_past_the_rows, lambda: (rows_of(3)[0], 3),
      lambda: (rows_of(3)[0], 5), lambda: (rows_of(3)[0], 2)),
    C("prefix_lengths", k.prefix_above, *(lambda n=n: rng(n).random(n) for n in range(20, 140, 10)),
      pattern=LENGTHS, after=bounded(8)),
]  # fmt: skip


# -- (E) objects new on every call are guarded by their type --------------------------------------


def ndindex_sum(a):
    total = 0.0
    for pos in np.ndindex(a.shape):
        total += a[pos]
        if pos[1] == 0:
            print(pos)
    return total


def product_walk(a):
    hits = 0
    for i, j in itertools.product(range(a.shape[0]), range(a.shape[1])):
        if a[i, j] > 0:
            hits += 1
    return hits


def ndindex_before_break(a):
    it = np.ndindex(*a.shape)
    print("start")
    return next(it), next(it), a.sum()


def deque_argument(a, d):
    d.append(a.sum())
    return len(d), a * 2


def array_argument(a, buf):
    buf.append(int(a.sum()))
    return a + len(buf)


def generator_made_inside(a):
    g = (v * 2 for v in a)
    print("made")
    return sum(g)


FRESH_OBJECTS = [
    C("ndindex_sum", ndindex_sum, lambda: rng(0).standard_normal((6, 5)),
      pattern="AAAAAAAAAAA", after=bounded(4)),
    C("product_walk", product_walk, lambda: rng(0).standard_normal((6, 5)),
      pattern="AAAAAAAAAAA", after=bounded(4)),
    C("ndindex_before_break", ndindex_before_break, lambda: np.ones((2, 3)),
      pattern="AAAAAAAAAAA", after=bounded(2)),
    C("deque_argument", deque_argument, lambda: (np.ones(3), collections.deque([1])),
      pattern="AAAAAAAAAAA", after=bounded(2)),
    C("array_argument", array_argument, lambda: (np.ones(3), array.array("q", [1, 2])),
      pattern="AAAAAAAAAAA", after=bounded(2)),
    C("generator_made_inside", generator_made_inside, lambda: np.arange(5.0),
      pattern="AAAAAAAAAAA", after=bounded(2)),
]  # fmt: skip


# -- (F) loops that pay stay compiled -------------------------------------------------------------


def heavy(points, trips):
    grid = np.linspace(0.0, 1.0, points)
    hot = np.exp(-200.0 * (grid - 0.5) ** 2)
    return grid, hot, trips


def paying(kernel):
    def build():
        grid, hot, trips = heavy(131072, 30)
        if kernel is split_loops.heat_logged:
            return hot, trips, 0.2
        if kernel is split_loops.jacobi_progress:
            return hot, trips
        return grid * 10.0**4 + 1.0, 1e-12

    return build


PAYING = [
    C("heat_logged_pays", split_loops.heat_logged, paying(split_loops.heat_logged),
      pattern="AAAA", after=compiled_loops),
    # (jacobi_progress is left out: at this size its compiled body measures level with plain
    # Python, or up to 10% slower where the allocator serves NumPy's temporaries less well,
    # so either verdict is right)
    C("jacobi_progress", split_loops.jacobi_progress, paying(split_loops.jacobi_progress),
      pattern="AAAA", after=bounded(4),
      # it prints a float sum, whose last digits follow the summation order a kernel takes
      extra={"exact_prints_only": True}),
    C("newton_sqrt_pays", split_loops.newton_sqrt, paying(split_loops.newton_sqrt),
      pattern="AAAAAAAAAAAA", after=compiled_loops),
]  # fmt: skip

BREAKS = {"cond_nodes": False}
CASES = [
    replace(c, settings=BREAKS) for c in PATTERNS + PLAIN + LENGTH_CASES + FRESH_OBJECTS + PAYING
]
pytestmark = pytest.mark.usefixtures("branches_break")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_plain_python(case):
    case.run()


# -- what explain and the counters say ------------------------------------------------------------


def test_explain_reports_a_loop_run_as_plain_python_and_why():
    out = tc.explain(k.count_positive)(signal(2000))
    plain_loops = [loop for loop in out.loops if loop.plain]
    assert len(plain_loops) == 1, out.loops
    assert "its compiled body took" in plain_loops[0].reason
    assert "split for loop runs as plain Python" in str(out)
    assert all("loop at line" not in name for name in out.compiled_frames)


def test_a_body_compiled_again_every_iteration_is_reported_before_the_cache_limit():
    out = tc.explain(k.prefix_above)(signal(200))
    reasons = [loop.reason for loop in out.loops if loop.plain]
    assert reasons and "compiled again on each of" in reasons[0], out.loops
    assert tc.counters()["cache_limit_hits"] == 0


def test_a_paying_loop_is_kept_compiled_and_not_reported():
    hot, trips, c = paying(split_loops.heat_logged)()
    compiled = tc.compile(split_loops.heat_logged, backend="eager")
    for _ in range(3):
        compiled(hot.copy(), trips, c)
    assert tc.counters()["plain_loops"] == 0
    assert not [loop for loop in tc.explain(split_loops.heat_logged)(hot, trips, c).loops
                if loop.plain]  # fmt: skip


def test_a_loop_with_a_few_iterations_per_call_decides_over_several_calls():
    compiled = tc.compile(k.count_positive, backend="eager")
    for seed in range(40):
        x = signal(3, seed)
        assert compiled(x) == k.count_positive(x)
    assert tc.counters()["plain_loops"] == 1


def test_row_loops_over_new_lengths_reuse_one_entry():
    compiled = tc.compile(for_rows, backend="eager")
    for n in range(3, 30):
        x = rows_of(n, width=4)[0]
        assert np.array_equal(compiled(x), for_rows(x))
    counters = tc.counters()
    assert counters["frames_compiled"] == 2 and counters["cache_limit_hits"] == 0, counters
    loops = tc.explain(for_rows)(rows_of(7, width=4)[0]).loops
    assert loops and loops[0].captured


def test_the_dynamic_trip_count_is_named_in_the_loop_record():
    compiled = tc.compile(for_rows, backend="eager")
    compiled(rows_of(3, width=2)[0])
    with tc.CompileProfiler() as prof:
        compiled(rows_of(5, width=2)[0])
    (record,) = [loop for r in prof.reports for loop in r.loops]
    assert "count from x.shape[0] (a dynamic dim)" in record.describe()


def test_a_fresh_object_is_guarded_by_type_not_identity():
    guards = [g.describe() for f in tc.explain(ndindex_before_break)(np.ones((2, 3))).reports
              for g in f.guards]  # fmt: skip
    assert "type(it) is ndindex" in guards, guards
    assert not any(g.startswith("it is ") for g in guards), guards


def test_fullgraph_still_refuses_a_split_loop():
    with pytest.raises(tc.Unsupported):
        tc.compile(k.count_positive, fullgraph=True)(signal(100))


def test_prints_of_a_plain_loop_stay_in_order_with_the_rest(capsys):
    def chatty(x):
        print("before")
        for i, v in enumerate(x):
            if v > 2.0:
                print("big", i)
        print("after")
        return x.sum()

    check(chatty, lambda: signal(), lambda: signal(seed=1), after=plain)
