"""Per-call overhead and cold-compile time of tcompile, next to plain NumPy and torch.compile.

Run from the repository root (``make bench`` does the same in ``.venv/3.11``)::

    python bench/overhead.py            # full run, about 30 s (2 CPUs)
    python bench/overhead.py --quick    # fewer repeats, a rough look
    python bench/overhead.py --no-torch # tcompile against NumPy only

What it measures, for ten small NumPy functions on tiny float64 inputs (8 elements or 2x4
matrices, where NumPy itself takes one to a few tens of microseconds, mostly its own per-call
cost, so any time added on top is the tool's overhead):

* numpy:         the plain function, per call.
* tcompile:      ``tc.compile(fn, backend="eager")`` after warm-up, per call: the guard check
                 plus the generated NumPy code.
* torch.compile: ``torch.compile(fn, backend="eager")`` on the same NumPy function with the
                 same NumPy inputs (TorchDynamo traces NumPy code into torch ops), after
                 warm-up, per call. Skipped when torch is not importable or with ``--no-torch``.
* cold:          the first call (trace + compile + run) after ``tc.reset()`` with a fresh
                 ``tc.compile`` wrapper, and after ``torch._dynamo.reset()`` with a fresh
                 ``torch.compile`` wrapper; the median of a few repeats. Each tool compiles
                 one throw-away function first, so one-time imports are not counted.

Per-call times are the median over ``--repeat`` batches of ``--number`` calls each (timed with
``time.perf_counter_ns``, garbage collection off, as ``timeit`` does), in microseconds; a batch
of a slow variant (torch.compile, about 1 ms a call here) stops after about 50 ms' worth of
calls. The batches of the variants are interleaved, one batch of each in turn, with the order
rotated every round, so machine noise falls on all variants alike; a row whose NumPy or
tcompile batches still vary by more than 25% (interquartile range / median) is marked
"noisy". The loop itself costs a few tens of nanoseconds per call in every variant; it cancels
out of the overhead columns.

It also checks that every tcompile result equals the NumPy result exactly (the eager backend
runs the same NumPy calls), reports ``tc.counters()`` after the run, and names in the table
any function that graph-broke, recompiled or raised (a bug to report); the ``tc.explain``
output of each such function follows the table. An error in one function does not stop the
others.

A second table, "graph breaks", times four functions that break on purpose, each next to its
break-free reference (the same ops without the breaking instruction), all variants of a
function and its reference interleaved in one set of batches: a ``print(..., file=SINK)`` in
a pointwise chain, a data-dependent ``if x.sum() > 0`` (the same branch every call), both in
one function (two breaks), and a print inside a called helper (the break bubbles up; the
helper runs as its own compiled frame). tcompile resumes after a break (graph so far, the
breaking instruction eagerly, then a compiled resume function); torch.compile breaks at the
same places. "per break" is (overhead - the reference's overhead) / breaks. It prints the
median per break for both tools against the target (tcompile < 10 µs per break), and
``tc.counters()`` per function: breaks counted on the first call, and no recompile, miss or
skipped frame (a skipped frame means the break did not resume) during the timed calls.
"""

from __future__ import annotations

import argparse
import io
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from timing import BATCH_BUDGET_NS, Timing, exactly_equal, per_call_us

import tcompile as tc

TARGET_OVERHEAD_US = 2.0  # median per-call overhead above NumPy
TARGET_COLD_MS = 5.0  # median cold compile (first call)
TARGET_PER_BREAK_US = 10.0  # median overhead per graph break (functions with breaks)
NOISY = 0.25  # flag a row whose numpy or tcompile batches vary by more than 25%


# -- the benchmarked functions ---------------------------------------------------------------


def add(x, y):
    return x + y


def pointwise_chain(x, y):
    return np.tanh(np.sin(x) * 2 + y) - 1


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def outer_sum(X, Y):
    return np.sum(X[:, :, None] * Y[:, None, :], axis=(-2, -1))


def loop_accumulate(x):
    acc = np.zeros_like(x)
    for i in range(5):
        acc = acc + x * i
    return acc


def _scale_shift(v):
    return v * 0.5 + 1.0


def calls_helper(x):
    return _scale_shift(_scale_shift(x))


def linear_relu(x, W, b):
    return np.maximum(x @ W + b, 0)


def mse(a, b):
    return np.mean((a - b) ** 2)


class Affine:
    """A small user object whose attributes the compiled function reads."""

    def __init__(self, w, b):
        self.w = w
        self.b = b


def use_object(p, x):
    return x * p.w + p.b


@dataclass
class Case:
    name: str
    fn: Callable
    args: tuple


def make_cases() -> list[Case]:
    rng = np.random.default_rng(0)

    def vec():
        return rng.standard_normal(8)

    def mat(*shape):
        return rng.standard_normal(shape)

    return [
        Case("add", add, (vec(), vec())),
        Case("pointwise_chain", pointwise_chain, (vec(), vec())),
        Case("softmax", softmax, (mat(2, 4),)),
        Case("layernorm", layernorm, (mat(2, 4), mat(4), mat(4))),
        Case("outer_sum", outer_sum, (mat(2, 4), mat(2, 4))),
        Case("loop_accumulate", loop_accumulate, (vec(),)),
        Case("calls_helper", calls_helper, (vec(),)),
        Case("linear_relu", linear_relu, (mat(2, 4), mat(4, 2), mat(2))),
        Case("mse", mse, (vec(), vec())),
        Case("use_object", use_object, (Affine(vec(), vec()), vec())),
    ]


# -- functions with graph breaks (the second table) ------------------------------------------
#
# Each has a break-free reference: the same NumPy ops without the breaking instruction. The
# print goes to SINK, which keeps the break (print is I/O for both tools) without terminal
# noise; the timing helper empties SINK between batches so that it does not grow.

SINK = io.StringIO()


def clear_sink() -> None:
    SINK.seek(0)
    SINK.truncate(0)


def print_break(x, y):
    a = np.sin(x) * 2 + y
    print("step", file=SINK)
    return np.tanh(a) * 0.5 - 1


def print_break_ref(x, y):
    a = np.sin(x) * 2 + y
    return np.tanh(a) * 0.5 - 1


def branch_break(x):
    if x.sum() > 0:  # the inputs are chosen so that this branch is taken every call
        y = x * 2
    else:
        y = x * 3
    return np.tanh(y) * 0.5 + 1


def branch_break_ref(x):
    y = x * 2
    return np.tanh(y) * 0.5 + 1


def two_breaks(x, y):
    a = np.sin(x) * 2 + y
    print("step", file=SINK)
    if a.sum() > 0:
        b = a * 2
    else:
        b = a * 3
    return np.tanh(b) * 0.5 + 1


def two_breaks_ref(x, y):
    a = np.sin(x) * 2 + y
    b = a * 2
    return np.tanh(b) * 0.5 + 1


def _scale_shift_print(v):
    v = v * 0.5
    print("helper", file=SINK)
    return v + 1.0


def helper_break(x):
    """The break is in the helper: it bubbles up, and the helper is compiled as its own frame."""
    return np.tanh(_scale_shift_print(np.sin(x) * 2)) - 1


def helper_break_ref(x):
    return np.tanh(_scale_shift(np.sin(x) * 2)) - 1


@dataclass
class BreakCase:
    name: str
    fn: Callable
    ref: Callable  # the same ops without the breaks
    args: tuple
    breaks: int  # graph breaks per call, in the user's code


def make_break_cases() -> list[BreakCase]:
    rng = np.random.default_rng(1)

    def positive():  # x.sum() > 0 and sin(x) * 2 + y > 0: the same branch every call
        return np.abs(rng.standard_normal(8)) + 2.0

    x, y = positive(), positive()
    return [
        BreakCase("print_break", print_break, print_break_ref, (x, y), 1),
        BreakCase("branch_break", branch_break, branch_break_ref, (x,), 1),
        BreakCase("two_breaks", two_breaks, two_breaks_ref, (x, y), 2),
        BreakCase("helper_break", helper_break, helper_break_ref, (x,), 1),
    ]


# -- timing ----------------------------------------------------------------------------------


def cold_ms(reset: Callable[[], None], wrap: Callable, fn: Callable, args: tuple, repeat: int):
    """Median ms of the first call of a fresh ``wrap(fn)`` made right after ``reset()``."""
    times = []
    for _ in range(repeat):
        reset()
        compiled = wrap(fn)
        start = time.perf_counter_ns()
        compiled(*args)
        times.append(time.perf_counter_ns() - start)
    reset()
    return statistics.median(times) / 1e6


# -- result checks ---------------------------------------------------------------------------


def describe(value) -> str:
    return f"{type(value).__name__}{getattr(value, 'shape', '')} {getattr(value, 'dtype', '')}"


# -- tools -----------------------------------------------------------------------------------


def tcompile_eager(fn):
    return tc.compile(fn, backend="eager")


def _throwaway(x):
    return np.sin(x) + 1


def _prime(reset, wrap) -> None:
    """Compile one throw-away function so that one-time import/setup costs are not 'cold'."""
    reset()
    wrap(_throwaway)(np.ones(8))
    reset()


def load_torch(disabled: bool):
    """``(torch, None)``, or ``(None, why the torch columns are skipped)``."""
    if disabled:
        return None, "--no-torch given"
    try:
        import torch
        import torch._dynamo
    except Exception as exc:  # noqa: BLE001 - any import failure means: run without torch
        return None, f"torch is not importable ({type(exc).__name__}: {exc})"
    return torch, None


def torch_eager(torch) -> Callable:
    """The ``wrap`` for torch: ``fn -> torch.compile(fn, backend="eager")``."""

    def wrap(fn):
        return torch.compile(fn, backend="eager")

    return wrap


def torch_frame_count() -> int:
    """Frames TorchDynamo has compiled so far (one per graph, resume functions included)."""
    from torch._dynamo.utils import counters

    return counters["frames"]["total"]


# -- the run ---------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    numpy_us: float = math.nan
    tc_us: float = math.nan
    torch_us: float = math.nan
    tc_cold_ms: float = math.nan
    torch_cold_ms: float = math.nan
    notes: list[str] = field(default_factory=list)

    @property
    def tc_overhead(self) -> float:
        return self.tc_us - self.numpy_us

    @property
    def torch_overhead(self) -> float:
        return self.torch_us - self.numpy_us


def note_error(row: Row, tool: str, exc: Exception) -> None:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    note = f"{tool} ERROR {type(exc).__name__}: {message[:100]}"
    if note not in row.notes:
        row.notes.append(note)


def measure_cold(cases: list[Case], rows: dict[str, Row], torch, args) -> None:
    """Phase 1: cold compiles (before phase 2, since ``tc.reset()`` empties every wrapper)."""
    tools = [("tcompile", tc.reset, tcompile_eager, args.cold_repeat, "tc_cold_ms")]
    if torch is not None:
        tools.append(("torch", torch._dynamo.reset, torch_eager(torch), args.torch_cold_repeat,
                      "torch_cold_ms"))  # fmt: skip
    for tool, reset, wrap, repeat, attr in tools:
        _prime(reset, wrap)
        for case in cases:
            try:
                setattr(rows[case.name], attr, cold_ms(reset, wrap, case.fn, case.args, repeat))
            except Exception as exc:  # noqa: BLE001 - a tracer bug: note it, go on
                note_error(rows[case.name], tool, exc)
                reset()


def check_result(row: Row, tool: str, got, want) -> None:
    """tcompile must match NumPy bit for bit; torch computes with its own kernels."""
    if exactly_equal(got, want):
        if type(got) is not type(want) or np.result_type(got) != np.result_type(want):
            row.notes.append(f"{tool} returns {describe(got)}, numpy {describe(want)}")
    elif tool == "tcompile":
        row.notes.append("RESULT MISMATCH")
        print(f"WARNING: {row.name}: tcompile result differs from NumPy: "
              f"{describe(got)} {got!r} != {describe(want)} {want!r}")  # fmt: skip
    else:
        close = np.allclose(np.asarray(got, dtype=float), want)
        row.notes.append(f"{tool} result " + ("within allclose" if close else "DIFFERS"))


def measure_warm(case: Case, row: Row, torch, args) -> bool:
    """Phase 2 for one function: results, per-call times, notes. True if tcompile misbehaved."""
    before = tc.counters()
    want = case.fn(*case.args)
    variants = {"numpy": case.fn}
    candidates = [("tcompile", tcompile_eager)]
    if torch is not None:
        torch._dynamo.reset()
        frames_before = torch_frame_count()
        candidates.append(("torch", torch_eager(torch)))
    for tool, wrap in candidates:
        compiled = wrap(case.fn)
        try:
            check_result(row, tool, compiled(*case.args), want)  # the first call compiles
            variants[tool] = compiled
        except Exception as exc:  # noqa: BLE001 - a tracer bug: note it, time the others
            note_error(row, tool, exc)

    times = per_call_us(variants, case.args, args.number, args.repeat)
    no_time = Timing(math.nan, 0.0)
    row.numpy_us = times["numpy"].us
    row.tc_us = times.get("tcompile", no_time).us
    row.torch_us = times.get("torch", no_time).us
    spread = max(times["numpy"].spread, times.get("tcompile", no_time).spread)
    if spread > NOISY:
        row.notes.append(f"noisy: batches vary {spread:.0%}")

    if torch is not None and torch_frame_count() - frames_before > 1:
        row.notes.append(f"torch compiled {torch_frame_count() - frames_before} frames")
    after = tc.counters()
    labels = {"graph_breaks": "GRAPH BREAK", "recompiles": "RECOMPILED",
              "frames_skipped": "FRAME SKIPPED", "cache_limit_hits": "CACHE LIMIT HIT"}  # fmt: skip
    delta = {name: after.get(name, 0) - before.get(name, 0) for name in labels}
    bad = [f"{label} x{delta[name]}" for name, label in labels.items() if delta[name]]
    row.notes.extend(bad)
    return bool(bad) or "tcompile" not in variants


def run(cases: list[Case], torch, args) -> tuple[list[Row], dict, list[Case]]:
    """Rows for the table, ``tc.counters()`` of the warm phase, and the cases that misbehaved."""
    rows = {case.name: Row(case.name) for case in cases}
    measure_cold(cases, rows, torch, args)
    tc.reset()  # from here on tc.counters() counts the warm phase of all functions
    odd = [case for case in cases if measure_warm(case, rows[case.name], torch, args)]
    if torch is not None:
        torch._dynamo.reset()
    return list(rows.values()), tc.counters(), odd


# -- the graph-break rows --------------------------------------------------------------------


@dataclass
class BreakRow(Row):
    breaks: int = 0  # graph breaks per call in the user's code (0: a break-free reference)
    tc_per_break: float = math.nan  # (overhead - overhead of the reference) / breaks
    torch_per_break: float = math.nan
    first: dict = field(default_factory=dict)  # tc.counters() delta over the first call
    warm: dict = field(default_factory=dict)  # tc.counters() delta over the timed calls


def counters_delta(before: dict, after: dict) -> dict:
    return {name: after.get(name, 0) - before.get(name, 0) for name in after}


def measure_break_case(case: BreakCase, torch, args) -> tuple[BreakRow, BreakRow, bool]:  # noqa: C901 - one benchmark case, step by step
    """The function with breaks and its reference, all variants timed interleaved in one
    ``per_call_us``. Returns both rows and whether tcompile misbehaved (explain it)."""
    row = BreakRow(case.name, breaks=case.breaks)
    ref = BreakRow(f"  {case.ref.__name__}", breaks=0)
    tc.reset()  # counters per case
    if torch is not None:
        torch._dynamo.reset()
    variants: dict[str, Callable] = {}
    torch_frames: dict[str, int] = {}
    for r, fn, tag in ((row, case.fn, ""), (ref, case.ref, "ref ")):
        clear_sink()
        want = fn(*case.args)
        variants[tag + "numpy"] = fn
        before = tc.counters()
        compiled = tcompile_eager(fn)
        try:
            check_result(r, "tcompile", compiled(*case.args), want)  # compiles, resumes too
            variants[tag + "tcompile"] = compiled
        except Exception as exc:  # noqa: BLE001 - a tracer bug: note it, time the others
            note_error(r, "tcompile", exc)
        r.first = counters_delta(before, tc.counters())
        if torch is not None:
            frames_before = torch_frame_count()
            compiled = torch_eager(torch)(fn)
            try:
                check_result(r, "torch", compiled(*case.args), want)
                variants[tag + "torch"] = compiled
            except Exception as exc:  # noqa: BLE001
                note_error(r, "torch", exc)
            torch_frames[tag] = torch_frame_count() - frames_before

    before = tc.counters()
    times = per_call_us(variants, case.args, args.number, args.repeat, between=clear_sink)
    warm = counters_delta(before, tc.counters())
    clear_sink()
    no_time = Timing(math.nan, 0.0)
    for r, tag in ((row, ""), (ref, "ref ")):
        r.numpy_us = times[tag + "numpy"].us
        r.tc_us = times.get(tag + "tcompile", no_time).us
        r.torch_us = times.get(tag + "torch", no_time).us
        spread = max(times[tag + "numpy"].spread, times.get(tag + "tcompile", no_time).spread)
        if spread > NOISY:
            r.notes.append(f"noisy: batches vary {spread:.0%}")
    row.warm = warm  # the function and its reference together (their batches interleave)
    row.tc_per_break = (row.tc_overhead - ref.tc_overhead) / case.breaks
    row.torch_per_break = (row.torch_overhead - ref.torch_overhead) / case.breaks

    odd = "tcompile" not in variants or "ref tcompile" not in variants
    if row.first.get("frames_skipped") or warm.get("frames_skipped"):
        n = row.first.get("frames_skipped", 0) + warm.get("frames_skipped", 0)
        row.notes.append(f"FRAME SKIPPED x{n}: the break did not resume")
        odd = True
    if row.first.get("graph_breaks", 0) == 0 and "tcompile" in variants:
        row.notes.append(f"NO GRAPH BREAK counted on the first call (expected {case.breaks})")
        odd = True
    elif row.first.get("graph_breaks", 0) != case.breaks:
        row.notes.append(f"tc counted {row.first['graph_breaks']} breaks")
    for name, label in (("graph_breaks", "GRAPH BREAK"), ("frames_skipped", "FRAME SKIPPED")):
        if ref.first.get(name):
            ref.notes.append(f"reference {label} x{ref.first[name]}")
            odd = True
    for name, label in (("recompiles", "RECOMPILED"), ("cache_misses", "cache misses"),
                        ("graph_breaks", "GRAPH BREAK"), ("cache_limit_hits", "CACHE LIMIT HIT")):  # fmt: skip
        if warm.get(name):
            row.notes.append(f"{label} x{warm[name]} in the warm runs")
            odd = True
    if torch is not None:
        if torch_frames.get("", 0) <= 1 and "torch" in variants:
            row.notes.append("torch did NOT break")
        else:
            row.notes.append(f"torch compiled {torch_frames.get('', 0)} frames")
        if torch_frames.get("ref ", 0) > 1:
            ref.notes.append(f"torch compiled {torch_frames['ref ']} frames")
    return row, ref, odd


def run_breaks(cases: list[BreakCase], torch, args) -> tuple[list[BreakRow], list[BreakCase]]:
    rows, odd = [], []
    for case in cases:
        row, ref, bad = measure_break_case(case, torch, args)
        rows += [row, ref]
        if bad:
            odd.append(case)
    if torch is not None:
        torch._dynamo.reset()
    return rows, odd


def print_break_table(rows: list[BreakRow], have_torch: bool) -> None:
    def per_break(value: float, r: BreakRow) -> str:
        return fmt(value) if r.breaks else ""

    columns = [
        ("function", lambda r: r.name, False),
        ("breaks", lambda r: str(r.breaks), False),
        ("numpy µs", lambda r: fmt(r.numpy_us), False),
        ("tcompile µs", lambda r: fmt(r.tc_us), False),
        ("tc overhead µs", lambda r: fmt(r.tc_overhead), False),
        ("tc per break µs", lambda r: per_break(r.tc_per_break, r), False),
        ("torch.compile µs", lambda r: fmt(r.torch_us), True),
        ("torch overhead µs", lambda r: fmt(r.torch_overhead), True),
        ("torch per break µs", lambda r: per_break(r.torch_per_break, r), True),
        ("notes", lambda r: "; ".join(r.notes), False),
    ]
    render_table(columns, rows, have_torch)


def print_break_summary(rows: list[BreakRow], have_torch: bool) -> float:
    broken = [r for r in rows if r.breaks]
    tc_per = median_of(broken, "tc_per_break")
    line = f"\nmedian overhead per break over {len(broken)} functions: tcompile {fmt(tc_per)} µs"
    if have_torch:
        t_per = median_of(broken, "torch_per_break")
        line += f", torch.compile {fmt(t_per)} µs (torch/tcompile {_ratio(t_per, tc_per)})"
    ok = tc_per < TARGET_PER_BREAK_US
    print(line + f"; target: tcompile < {TARGET_PER_BREAK_US:g} µs per break -> "
          f"{'met' if ok else 'NOT MET'}")  # fmt: skip
    return tc_per


def print_break_counters(rows: list[BreakRow]) -> None:
    first_keys = ("graph_breaks", "frames_compiled", "frames_skipped", "graphs", "recompiles")
    warm_keys = ("recompiles", "graph_breaks", "frames_skipped", "cache_misses", "cache_hits")
    print("\ntc.counters() per function with breaks (first call; timed calls, reference included):")
    for r in rows:
        if not r.breaks:
            continue
        first = ", ".join(f"{k}={r.first.get(k, 0)}" for k in first_keys)
        warm = ", ".join(f"{k}={r.warm.get(k, 0)}" for k in warm_keys)
        print(f"  {r.name}: first call {{{first}}}; warm {{{warm}}}")


# -- the report ------------------------------------------------------------------------------


def fmt(value: float, digits: int = 2) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"  # NaN: not measured


def print_table(rows: list[Row], have_torch: bool) -> None:
    columns = [  # (header, cell for a row, is a torch column)
        ("function", lambda r: r.name, False),
        ("numpy µs", lambda r: fmt(r.numpy_us), False),
        ("tcompile µs", lambda r: fmt(r.tc_us), False),
        ("tc overhead µs", lambda r: fmt(r.tc_overhead), False),
        ("torch.compile µs", lambda r: fmt(r.torch_us), True),
        ("torch overhead µs", lambda r: fmt(r.torch_overhead), True),
        ("cold tc ms", lambda r: fmt(r.tc_cold_ms), False),
        ("cold torch ms", lambda r: fmt(r.torch_cold_ms), True),
        ("notes", lambda r: "; ".join(r.notes), False),
    ]
    render_table(columns, rows, have_torch)


def render_table(columns: list, rows: list, have_torch: bool) -> None:
    """Print ``rows`` under ``columns`` (header, cell for a row, is a torch column); the first
    column is left-aligned, the numbers right-aligned, the last (notes) left-aligned."""
    columns = [c for c in columns if have_torch or not c[2]]
    table = [[header for header, _, _ in columns]]
    table += [[cell(r) for _, cell, _ in columns] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]

    def line(cells):  # name left-aligned, numbers right-aligned, notes left-aligned, unpadded
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:-1], strict=True)]
        return " | ".join([first, *rest, cells[-1]]).rstrip()

    print(line(table[0]))
    print("-+-".join("-" * w for w in [*widths[:-1], max(widths[-1], 5)]))
    for cells in table[1:]:
        print(line(cells))


def median_of(rows: list[Row], attr: str) -> float:
    values = [getattr(r, attr) for r in rows]
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def print_summary(rows: list[Row], have_torch: bool) -> tuple[float, float]:
    tc_over, tc_cold = median_of(rows, "tc_overhead"), median_of(rows, "tc_cold_ms")
    print(f"\nmedian over {len(rows)} functions:")
    print(f"  tcompile      overhead {fmt(tc_over)} µs/call, cold compile {fmt(tc_cold)} ms")
    if have_torch:
        t_over, t_cold = median_of(rows, "torch_overhead"), median_of(rows, "torch_cold_ms")
        print(f"  torch.compile overhead {fmt(t_over)} µs/call, cold compile {fmt(t_cold)} ms")
        per_fn = [r.torch_overhead / r.tc_overhead for r in rows if r.tc_overhead > 0]
        print(f"  ratio torch/tcompile: overhead {_ratio(t_over, tc_over)} (median of per-function "
              f"ratios {fmt(statistics.median(per_fn), 1) if per_fn else '-'}x), "
              f"cold compile {_ratio(t_cold, tc_cold)}")  # fmt: skip
    return tc_over, tc_cold


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b > 0 else "-"


def print_targets(tc_over: float, tc_cold: float, tc_per_break: float) -> None:
    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT MET"

    print("\ntargets (tcompile):")
    print(f"  median per-call overhead <= {TARGET_OVERHEAD_US:g} µs above NumPy: "
          f"{fmt(tc_over)} µs -> {verdict(tc_over <= TARGET_OVERHEAD_US)}")  # fmt: skip
    print(f"  median cold compile < {TARGET_COLD_MS:g} ms: "
          f"{fmt(tc_cold)} ms -> {verdict(tc_cold < TARGET_COLD_MS)}")  # fmt: skip
    print(f"  median overhead per graph break < {TARGET_PER_BREAK_US:g} µs: "
          f"{fmt(tc_per_break)} µs -> {verdict(tc_per_break < TARGET_PER_BREAK_US)}")  # fmt: skip


def explain_cases(cases) -> None:
    """Print tc.explain for each flagged case (a break, recompile or skip where none belongs)."""
    for case in cases:
        tc.reset()
        print(f"\ntc.explain({case.name}):")
        try:
            print(tc.explain(case.fn)(*case.args))
        except Exception as exc:  # noqa: BLE001 - the report goes on
            print(f"  raised {type(exc).__name__}: {exc}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a rough look)")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch.compile columns")
    parser.add_argument("--number", type=int, help="calls per timed batch (default 1000)")
    parser.add_argument("--repeat", type=int, help="timed batches per variant (default 15)")
    args = parser.parse_args(argv)
    args.number = args.number or (200 if args.quick else 1000)
    args.repeat = args.repeat or (5 if args.quick else 15)
    args.cold_repeat = 3 if args.quick else 5
    args.torch_cold_repeat = 1 if args.quick else 3

    torch, why_not = load_torch(args.no_torch)
    versions = f"Python {sys.version.split()[0]}, NumPy {np.__version__}"
    if torch is not None:
        versions += f", torch {torch.__version__}"
    print(f"tcompile overhead benchmark ({versions})")
    cold = f"{args.cold_repeat} (tcompile)"
    if torch is not None:
        cold += f", {args.torch_cold_repeat} (torch)"
    print(f"per call: median of {args.repeat} interleaved batches of {args.number} calls "
          f"(or {BATCH_BUDGET_NS / 1e6:g} ms, whichever is shorter); "
          f"cold: median of {cold} first calls")  # fmt: skip
    if why_not:
        print(f"torch.compile columns skipped: {why_not}")
    print()

    cases = make_cases()
    rows, counters, odd = run(cases, torch, args)
    print_table(rows, torch is not None)
    if torch is not None:
        print(
            "note: torch.compile(backend='eager') runs a NumPy graph through torch._numpy's "
            "Python wrappers\n(argument normalisation per op), which dominates its per-call "
            "time here, more than guard checks."
        )
    tc_over, tc_cold = print_summary(rows, torch is not None)

    print(f"\ntc.counters() after the warm runs: {counters}")
    if counters.get("graph_breaks") or counters.get("recompiles"):
        print("WARNING: graph breaks / recompiles above are tcompile bugs to report (expected 0)")
    explain_cases(odd)

    print("\ngraph breaks (tcompile resumes after each: the graph so far runs, the breaking")
    print("instruction runs eagerly, a compiled resume function continues; per break = overhead")
    print("minus the overhead of the break-free reference on the next row, / breaks):\n")
    break_rows, break_odd = run_breaks(make_break_cases(), torch, args)
    print_break_table(break_rows, torch is not None)
    tc_per_break = print_break_summary(break_rows, torch is not None)
    print_break_counters(break_rows)
    explain_cases(break_odd)
    clear_sink()

    print_targets(tc_over, tc_cold, tc_per_break)
    return 0


if __name__ == "__main__":
    sys.exit(main())
