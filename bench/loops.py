"""Loop kernels: how long tcompile's first call takes, and whether it grows with the trip count.

Run from the repository root::

    python bench/loops.py                 # full run (several minutes on 2 CPUs)
    python bench/loops.py --quick         # small trip counts, fewer repeats (under a minute)
    python bench/loops.py --only heat,lu  # some kernels
    python bench/loops.py --limit 120     # seconds each measurement may take (default 60)
    python bench/loops.py --max-ops 1000000 --max-seconds 600   # tracing budget lifted
    python bench/loops.py --torch         # also torch.compile(backend="eager")

The corpus is ``loop_kernels.py``: eleven NumPy loops (a loop over a matrix's rows,
Levinson-Durbin, a heat-equation time loop, a ``while`` loop on a residual, a forced spring chain
carrying its time as a Python float, Seidel-2D, Cholesky, LU and CSR SpMV
at NPBench's small sizes, Mandelbrot's masked stores, an ``np.add.at`` histogram), each with a
trip count T. For each kernel, side by side in one run (the targets of issue 11, "Loops as
loops"):

* numpy µs, tc µs:  warm per-call time of the plain function and of ``tc.compile(fn,
                    backend="eager")``, medians of interleaved batches (``timing.py``);
* first s:          the first call after ``tc.reset()`` (median of 5): trace + compile + one
                    run, at T and at 10 T, and their ratio (target: under 1 s at T, 10T/T
                    within 20%);
* over ms:          the first call less the second (the median of 5 such pairs, each pair
                    back to back): what tracing and compiling add to a call, at T and 10 T (a
                    loop node runs its loop once on the first call, as on the second; the
                    rest should not grow with T);
* compile ms:       the first call's compile phases (``CompileReport.phases``: trace, codegen,
                    backend, guards), less its "loop run" (a loop node's run on the trace's
                    examples, whose results the call takes): tcompile's own work, at T and
                    10 T (median of 5);
* graphs, breaks, ops, skipped:  from ``tc.explain(fn)(*args)`` at T (ops: graph ops over all
                    graphs; skipped: a frame that ran eagerly), and the ops at 10 T, counted
                    the same way from the first call's compile reports (``tc.CompileProfiler``).

Every compiled result is checked against NumPy's (bit for bit on the eager backend; a mismatch
is printed loudly: it is a tcompile bug), and the arguments must come back unchanged.

Each kernel runs in a child process (``--child``), which reports each measurement as it ends;
a measurement that runs past ``--limit`` seconds kills the child and shows as "> N s". The
10 T run is skipped when the first call at T timed out. ``tc.config.trace_max_ops`` and
``trace_max_seconds`` stop a trace that grows past its budget (the frame then runs eagerly);
``--max-ops`` and ``--max-seconds`` change them, to time a full unroll.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from loop_kernels import KERNELS, Kernel
from overhead import _prime, describe, fmt, load_torch, render_table, tcompile_eager
from timing import BATCH_BUDGET_NS, exactly_equal, per_call_us

import tcompile as tc

SCALE = 10  # the second trip count is SCALE x T
TARGET_FIRST_S = 1.0  # first call at T
TARGET_RATIO = 0.2  # first call at 10 T within 20% of the first call at T
FIRST_CALLS = 5  # first calls timed (each after tc.reset(), each followed by a second); medians
NOISE_S = 0.01  # overheads this close count as equal: the calls they are taken from vary more
NOISY = 0.25
STARTUP_S = 60.0  # the child's imports and the kernel's inputs, before its first measurement
MARK = "@loops "  # prefix of the child's report lines (anything else it prints is ignored)


# -- the child: one kernel at one trip count ----------------------------------------------------


def emit(**record) -> None:
    print(MARK + json.dumps(record), flush=True)


def compare(got, want) -> str:
    """The compiled result against NumPy's: "exact", "allclose" (not bit for bit) or
    "MISMATCH ..." (then what differs)."""
    gots, wants = (v if isinstance(v, tuple) else (v,) for v in (got, want))
    if len(gots) != len(wants):
        return f"MISMATCH: returns {describe(got)}, numpy {describe(want)}"
    verdict = "exact"
    for i, (g, w) in enumerate(zip(gots, wants)):
        if exactly_equal(g, w):
            continue
        if np.shape(g) == np.shape(w) and np.allclose(g, w, equal_nan=True):
            verdict = "allclose"
        else:
            return f"MISMATCH in output {i}: {describe(g)} {g!r:.200} != {describe(w)} {w!r:.200}"
    return verdict


def captured(reports) -> dict:
    """Graphs (with ops), breaks, ops and skipped frames of compile reports, counted as
    ``tc.explain`` counts them."""
    graphs = [g for r in reports for g in r.graphs if g.op_count()]
    eager = [r for r in reports if r.outcome == "eager"]
    return {"graphs": len(graphs), "breaks": sum(len(r.breaks) for r in reports),
            "ops": sum(g.op_count() for g in graphs),
            "skipped": [f"{r.function}: {r.eager_reason}" for r in eager],
            "reasons": [b.reason for r in reports for b in r.breaks],
            "compile_s": sum(r.compile_time - r.phases.get("loop run", 0.0)
                             for r in reports)}  # fmt: skip


def explained(fn, args: tuple, want) -> dict:
    out = tc.explain(fn)(*args)
    return {"graphs": out.graph_count, "breaks": out.graph_break_count,
            "ops": sum(len(ops) for ops in out.ops_per_graph),
            "skipped": [f"{name}: {why}" for name, why in zip(out.skipped_frames, out.skip_reasons)],
            "reasons": [b.reason for b in out.break_reasons],
            "match": compare(out.result, want)}  # fmt: skip


def first_call(wrap, fn, args: tuple, want) -> tuple:
    """The compiled function and a record of its first call (time, result check, reports)."""
    compiled = wrap(fn)
    kept = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    with tc.CompileProfiler() as prof:
        start = time.perf_counter()
        got = compiled(*args)
        seconds = time.perf_counter() - start
    start = time.perf_counter()
    compiled(*args)
    second = time.perf_counter() - start
    record = {"first_s": seconds, "second_s": second, "match": compare(got, want),
              **captured(prof.reports)}  # fmt: skip
    if not all(exactly_equal(a, b) for a, b in zip(args, kept)):
        record["match"] += "; ARGUMENTS CHANGED"
    return compiled, record


def child(args) -> None:
    kernel = next(k for k in KERNELS if k.name == args.child)
    tc.config.trace_max_ops = args.max_ops or tc.config.trace_max_ops
    tc.config.trace_max_seconds = args.max_seconds or tc.config.trace_max_seconds
    fn_args = kernel.setup(args.trips)
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        want = kernel.fn(*fn_args)
        runs.append(time.perf_counter() - start)
    emit(numpy_s=statistics.median(runs))
    _prime(tc.reset, tcompile_eager)  # one-time imports and setup are not the first call's

    emit(begin="first call")
    firsts, overheads, compiles = [], [], []
    for _ in range(FIRST_CALLS):
        tc.reset()
        compiled, record = first_call(tcompile_eager, kernel.fn, fn_args, want)
        firsts.append(record["first_s"])
        overheads.append(record["first_s"] - record["second_s"])
        compiles.append(record["compile_s"])
    emit(**{**record, "first_s": statistics.median(firsts), "over_s": statistics.median(overheads),
            "compile_s": statistics.median(compiles)})  # fmt: skip
    if not args.warm:
        return
    variants = {"numpy": kernel.fn, "tcompile": compiled}
    if args.torch:
        emit(begin="torch.compile first call")
        torch, _ = load_torch(False)
        wrap = lambda fn: torch.compile(fn, backend="eager")
        _prime(torch._dynamo.reset, wrap)
        variants["torch"], record = first_call(wrap, kernel.fn, fn_args, want)
        emit(torch_first_s=record["first_s"], torch_match=record["match"])
    emit(begin="warm calls")
    before = tc.counters()
    times = per_call_us(variants, fn_args, args.number, args.repeat)
    after = tc.counters()
    emit(warm_us={name: t.us for name, t in times.items()},
         spread=max(times["numpy"].spread, times["tcompile"].spread),
         warm_compiles=after["frames_compiled"] + after["frames_skipped"]
         - before["frames_compiled"] - before["frames_skipped"])  # fmt: skip
    emit(begin="tc.explain")
    emit(explain=explained(kernel.fn, fn_args, want))


# -- the parent: run the children, time-limited --------------------------------------------------


@dataclass
class Run:
    """What one child reported, and whether it ran out of time or failed."""

    records: dict = field(default_factory=dict)
    timed_out: str = ""  # the measurement that ran past the limit
    error: str = ""
    ran: bool = True

    def get(self, key: str, default=math.nan):
        return self.records.get(key, default)


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        if line.startswith(MARK):
            lines.put(json.loads(line[len(MARK) :]))
    lines.put(None)


def run_child(kernel: Kernel, trips: int, warm: bool, args) -> Run:
    """Run one kernel at ``trips`` in a child process, each measurement limited to
    ``args.limit`` seconds (the child is killed past it)."""
    cmd = [sys.executable, __file__, "--child", kernel.name, "--trips", str(trips),
           "--number", str(args.number), "--repeat", str(args.repeat)]  # fmt: skip
    cmd += ["--warm"] if warm else []
    cmd += ["--torch"] if warm and args.torch else []
    cmd += ["--max-ops", str(args.max_ops)] if args.max_ops else []
    cmd += ["--max-seconds", str(args.max_seconds)] if args.max_seconds else []
    run = Run()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
        phase, deadline = "start-up", time.monotonic() + args.limit + STARTUP_S
        while (record := _next(lines, deadline)) is not None:
            if record == "timeout":
                proc.kill()
                run.timed_out = phase
                break
            if "begin" in record:
                phase, deadline = record["begin"], time.monotonic() + args.limit
            else:
                run.records.update(record)
        proc.wait()
        if proc.returncode and not run.timed_out:
            err.seek(0)
            tail = [line for line in err.read().splitlines() if line.strip()]
            run.error = f"{phase}: " + (tail[-1] if tail else f"exit status {proc.returncode}")
    return run


def _next(lines: queue.Queue, deadline: float):
    try:
        return lines.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty:
        return "timeout"


@dataclass
class Row:
    kernel: Kernel
    trips: int
    small: Run  # at T
    large: Run  # at SCALE x T

    @property
    def counts(self) -> dict:
        """tc.explain's counts at T, else those of the first call's reports."""
        return self.small.get("explain", None) or self.small.records

    @property
    def ratio(self) -> float:
        return self.large.get("first_s") / self.small.get("first_s")

    @staticmethod
    def overhead(run: Run) -> float:
        """The first call's seconds beyond the second's."""
        return run.get("over_s")

    def overhead_flat(self) -> bool:
        """The overhead at 10 T at most 20% above T's (or within the noise of the runs)."""
        small, large = self.overhead(self.small), self.overhead(self.large)
        return large - small <= max(TARGET_RATIO * small, NOISE_S)

    def compile_flat(self) -> bool:
        """The compile time (the loops' runs left out) at 10 T at most 20% above T's (or 10 ms)."""
        small, large = self.small.get("compile_s"), self.large.get("compile_s")
        return large - small <= max(TARGET_RATIO * small, NOISE_S)

    def warm(self, name: str) -> float:
        return self.small.get("warm_us", {}).get(name, math.nan)

    def skipped(self, run: Run) -> str:
        if "skipped" not in run.records:
            return "-"
        return "yes" if run.records["skipped"] else "no"

    def notes(self) -> list[str]:
        notes = []
        for label, run in (("", self.small), (f"{SCALE}T: ", self.large)):
            for key in ("match", "torch_match"):
                if run.get(key, "exact") != "exact":
                    notes.append(label + ("torch " if key == "torch_match" else "") + run.get(key))
            if run.error:
                notes.append(f"{label}ERROR in {run.error[:120]}")
            if run.timed_out:
                notes.append(f"{label}{run.timed_out} > {LIMIT[0]:g} s")
        explain = self.small.get("explain", {})
        if explain.get("match", "exact") != "exact":
            notes.append(f"explain: {explain['match']}")
        if self.small.get("warm_compiles", 0):
            notes.append(f"COMPILED AGAIN x{self.small.get('warm_compiles')} in warm calls")
        if self.small.get("spread", 0) > NOISY:
            notes.append(f"noisy: batches vary {self.small.get('spread'):.0%}")
        if not self.large.ran:
            notes.append(f"{SCALE}T not run")
        return notes


LIMIT = [60.0]  # --limit, for the notes


def seconds(run: Run, key: str = "first_s", phase: str = "first call") -> str:
    if run.timed_out == phase:
        return f"> {LIMIT[0]:g}"
    return fmt(run.get(key), 3)


def print_table(rows: list[Row], have_torch: bool) -> None:
    columns = [  # (header, cell for a row, is a torch column)
        ("kernel", lambda r: r.kernel.name, False),
        ("T", lambda r: str(r.trips), False),
        ("numpy µs", lambda r: fmt(r.warm("numpy"), 0), False),
        ("tc µs", lambda r: fmt(r.warm("tcompile"), 0), False),
        ("tc/np", lambda r: fmt(r.warm("tcompile") / r.warm("numpy")), False),
        ("torch µs", lambda r: fmt(r.warm("torch"), 0), True),
        ("first s", lambda r: seconds(r.small), False),
        (f"first {SCALE}T s", lambda r: seconds(r.large), False),
        (f"{SCALE}T/T", lambda r: fmt(r.ratio), False),
        ("over ms T", lambda r: fmt(r.overhead(r.small) * 1e3, 0), False),
        (f"over ms {SCALE}T", lambda r: fmt(r.overhead(r.large) * 1e3, 0), False),
        ("compile ms T", lambda r: fmt(r.small.get("compile_s") * 1e3, 0), False),
        (f"compile ms {SCALE}T", lambda r: fmt(r.large.get("compile_s") * 1e3, 0), False),
        (
            "torch first s",
            lambda r: seconds(r.small, "torch_first_s", "torch.compile first call"),
            True,
        ),  # fmt: skip
        ("graphs", lambda r: str(r.counts.get("graphs", "-")), False),
        ("breaks", lambda r: str(r.counts.get("breaks", "-")), False),
        ("ops", lambda r: str(r.counts.get("ops", "-")), False),
        (f"ops {SCALE}T", lambda r: str(r.large.get("ops", "-")), False),
        (f"skipped T/{SCALE}T", lambda r: f"{r.skipped(r.small)}/{r.skipped(r.large)}", False),
        ("notes", lambda r: "; ".join(r.notes()), False),
    ]
    render_table(columns, rows, have_torch)


def print_details(rows: list[Row]) -> None:
    """Per kernel: NumPy's own time in the first calls, and why frames were skipped or broke."""
    print(f"\nThe first calls include one run of the kernel; NumPy alone takes (T / {SCALE}T):")
    print(f"why frames ran eagerly or graphs broke (tc.explain at T, first call at {SCALE}T):")
    for r in rows:
        numpy_ms = f"{fmt(r.small.get('numpy_s') * 1e3)} / {fmt(r.large.get('numpy_s') * 1e3)} ms"
        print(f"  {r.kernel.name} (T = {r.trips} {r.kernel.trip}): NumPy {numpy_ms}")
        for label, found in (("T", r.counts), (f"{SCALE}T", r.large.records)):
            skips = found.get("skipped", [])
            breaks = [b for b in found.get("reasons", []) if not any(b in s for s in skips)]
            for reason, n in (Counter(skips) + Counter(breaks)).items():
                print(f"    {label}: {'' if n == 1 else f'{n}x '}{reason[:300]}")
        for note in r.notes():
            if "MISMATCH" in note or "CHANGED" in note:
                print(f"    WARNING: compiled result differs from NumPy's: {note}")


def one_graph(run: Run) -> bool:
    """The first call compiled the kernel to one graph: no break, no frame run eagerly."""
    return run.get("graphs", 0) == 1 and run.get("breaks", 1) == 0 and not run.get("skipped", 1)


def print_targets(rows: list[Row]) -> None:
    def count(ok) -> str:
        good = [r.kernel.name for r in rows if ok(r)]
        return f"{len(good)}/{len(rows)}" + (f" ({', '.join(good)})" if good else "")

    def ops_ratio(r: Row) -> float:
        return r.large.get("ops", 0) / max(r.small.get("ops", 0), 1)

    compiled = lambda r: one_graph(r.small) and one_graph(r.large)
    print(
        "\ntargets (issue 11): kernels that meet each (a kernel must compile to one graph, at T and"
    )
    print(
        f"{SCALE}T, for the times and sizes to count: a frame that runs eagerly is fast to give up on):"
    )
    print(f"  one graph, no break, no skipped frame: {count(compiled)}")
    print(f"  first call at T under {TARGET_FIRST_S:g} s: "
          f"{count(lambda r: compiled(r) and r.small.get('first_s') < TARGET_FIRST_S)}")  # fmt: skip
    print(f"  first call at {SCALE}T within {TARGET_RATIO:.0%} of T's: "
          f"{count(lambda r: compiled(r) and abs(r.ratio - 1) <= TARGET_RATIO)}")  # fmt: skip
    print(f"  first call less the second at {SCALE}T at most {TARGET_RATIO:.0%} above T's "
          f"(or {NOISE_S * 1e3:g} ms): {count(lambda r: compiled(r) and r.overhead_flat())}")  # fmt: skip
    print(f"  compile time (the loops' run on the examples left out) at {SCALE}T at most "
          f"{TARGET_RATIO:.0%} above T's (or {NOISE_S * 1e3:g} ms): "
          f"{count(lambda r: compiled(r) and r.compile_flat())}")  # fmt: skip
    print(f"  graph ops at {SCALE}T within {TARGET_RATIO:.0%} of T's: "
          f"{count(lambda r: compiled(r) and abs(ops_ratio(r) - 1) <= TARGET_RATIO)}")  # fmt: skip
    mismatched = [r.kernel.name for r in rows if any("MISMATCH" in n for n in r.notes())]
    print(f"  results equal NumPy's: {len(rows) - len(mismatched)}/{len(rows)}"
          + (f" -- MISMATCH in {', '.join(mismatched)}: a tcompile bug" if mismatched else ""))  # fmt: skip


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small trip counts, fewer repeats")
    parser.add_argument("--only", help="comma-separated kernel names")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per measurement (60)")
    parser.add_argument("--torch", action="store_true", help="add torch.compile(backend='eager')")
    parser.add_argument("--max-ops", type=int, help="tc.config.trace_max_ops in the children")
    parser.add_argument("--max-seconds", type=float, help="tc.config.trace_max_seconds")
    parser.add_argument("--number", type=int, help="calls per timed batch (default 1000)")
    parser.add_argument("--repeat", type=int, help="timed batches per variant (15; quick 5)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--trips", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.number = args.number or 1000
    args.repeat = args.repeat or (5 if args.quick else 15)
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.child:
        child(args)
        return 0
    LIMIT[0] = args.limit
    kernels = KERNELS
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {k.name for k in KERNELS}
        if unknown:
            sys.exit(f"unknown kernel(s) {', '.join(sorted(unknown))}; "
                     f"known: {', '.join(k.name for k in KERNELS)}")  # fmt: skip
        kernels = [k for k in KERNELS if k.name in names]
    torch_why = load_torch(False)[1] if args.torch else "not asked for (--torch)"
    print(f"tcompile loop benchmark (Python {sys.version.split()[0]}, NumPy {np.__version__}); "
          f"tcompile from {os.path.dirname(tc.__file__)}; eager backend; trace budget {args.max_ops or tc.config.trace_max_ops} ops, "
          f"{args.max_seconds or tc.config.trace_max_seconds:g} s")  # fmt: skip
    print(f"warm: median of {args.repeat} interleaved batches of up to {args.number} calls "
          f"({BATCH_BUDGET_NS / 1e6:g} ms); first call: median of {FIRST_CALLS}, each after tc.reset(), each measurement "
          f"limited to {args.limit:g} s")  # fmt: skip
    if torch_why:
        print(f"torch.compile columns skipped: {torch_why}")
    rows = []
    for kernel in kernels:
        trips = kernel.quick_trips if args.quick else kernel.trips
        print(f"  {kernel.name}: T = {trips} ...", end="", flush=True)
        start = time.monotonic()
        small = run_child(kernel, trips, True, args)
        if small.timed_out == "first call" or "first_s" not in small.records:
            large = Run(ran=False)
        else:
            large = run_child(kernel, SCALE * trips, False, args)
        rows.append(Row(kernel, trips, small, large))
        print(f" {time.monotonic() - start:.0f} s", flush=True)
    print()
    print_table(rows, torch_why is None)
    print_details(rows)
    print_targets(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
