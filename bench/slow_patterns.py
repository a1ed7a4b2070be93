"""Never slower than plain (issue 19, items 11 and 12): fourteen patterns whose warm compiled
call used to be far slower than the plain call, timed side by side with plain Python/NumPy.

Run from the repository root::

    python bench/slow_patterns.py            # about two minutes on 2 CPUs
    python bench/slow_patterns.py --quick    # fewer repeats
    python bench/slow_patterns.py --only crc16_bits,nussinov
    python bench/slow_patterns.py --repeat 21  # more batches on a noisy machine

The kernels are in ``slow_kernels.py``. For each pattern, side by side in one run:

* plain µs, tc µs:  the warm per-call time of the plain function and of ``tc.compile(fn,
                    backend="eager")`` after ``--warm`` calls (a split loop decides on its first
                    iterations whether it runs compiled or as plain Python), medians of
                    interleaved batches (``timing.py``);
* tc/plain:         their ratio; the target is at most 1.10 for every pattern;
* plain loops:      split loops that run as plain Python (``tc.counters()["plain_loops"]``);
* compiles:         frames compiled or skipped over the warm-up, and over the timed calls (0:
                    nothing recompiles once warm).

A pattern's call may take fresh copies of arrays it changes, or call the kernel on several
arguments (pattern 10: ten lengths); both variants make the same call. Results and printed
output are checked bit for bit against the plain function's. Exit status 1 if a ratio is over
the target or a result differs.
"""

from __future__ import annotations

import argparse
import io
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import slow_kernels as k
from overhead import fmt, render_table
from split_loops import same
from timing import per_call_us

import tcompile as tc

TARGET = 1.10


@dataclass
class Pattern:
    name: str
    kernel: Callable
    call: Callable  # (function) -> a callable of no arguments that runs one pattern call


def patterns() -> list[Pattern]:
    rng = np.random.default_rng(0)
    x2000 = rng.standard_normal(2000)
    bytes64 = rng.integers(0, 256, 300)
    rows = rng.random((200, 32)) + 0.5
    bytes8 = rng.integers(0, 256, 300, dtype=np.uint8)
    seq = rng.integers(0, 4, 60).astype(np.int32)
    mass, pos, vel = rng.random((16, 1)) + 0.5, rng.standard_normal((16, 3)), np.zeros((16, 3))
    grid = np.linspace(0.0, 1.0, 256)
    u0 = np.exp(-200.0 * (grid - 0.5) ** 2)
    db, mask = rng.integers(0, 2, (1000, 4)), np.array([1, 0, 1])
    a = rng.standard_normal((24, 16))
    lengths = [rng.random((n, 32)) for n in range(40, 80, 4)]
    prefix = rng.random(200)
    x16 = rng.random(16)
    ring_data, radius = rng.random(4000), rng.random(4000) * 40
    # (at 2000 elements a call is 10 µs, where a compiled call's own 2 µs shows: bench/overhead.py)
    hits_x, hits_w = rng.standard_normal(100_000), rng.random(100_000)
    return [
        Pattern("count_positive", k.count_positive, lambda f: lambda: f(x2000)),
        Pattern("crc16_bits", k.crc16_bits, lambda f: lambda: f(bytes64)),
        Pattern("row_assert", k.normalize_rows, lambda f: lambda: f(rows)),
        Pattern("crc16_npbench", k.crc16_npbench, lambda f: lambda: f(bytes8)),
        Pattern("nussinov", k.nussinov, lambda f: lambda: f(seq)),
        Pattern("nbody", k.nbody, lambda f: lambda: f(mass, pos.copy(), vel.copy(), 0.01, 40)),
        Pattern("wave", k.wave, lambda f: lambda: f(u0, u0, 0.25, 200)),
        Pattern("check_mask", k.check_mask, lambda f: lambda: f(db, mask)),
        Pattern("ndindex_print", k.ndindex_negatives, lambda f: lambda: f(a)),
        Pattern("rows_lengths", k.row_energy, lambda f: lambda: [f(x) for x in lengths]),
        Pattern("prefix_slice", k.prefix_above, lambda f: lambda: f(prefix)),
        Pattern("print_round", k.print_sums, lambda f: lambda: f(x16, 50)),
        Pattern("radial_means", k.radial_means, lambda f: lambda: f(ring_data, radius, 40)),
        Pattern("weighted_hits", k.weighted_hits, lambda f: lambda: f(hits_x, hits_w)),
    ]


def printed(call: Callable) -> tuple:
    """The call's result and what it printed to the kernels' SINK."""
    k.SINK.seek(0)
    k.SINK.truncate()
    result = call()
    return result, k.SINK.getvalue()


class Discard(io.StringIO):
    """The kernels' SINK while they are timed: it keeps nothing (a StringIO that grows would
    time its own buffer)."""

    def write(self, text: str) -> int:
        return len(text)


def compiles() -> int:
    counts = tc.counters()
    return counts["frames_compiled"] + counts["frames_skipped"]


def measure(pattern: Pattern, warm: int, repeat: int) -> dict:
    tc.reset()
    plain = pattern.call(pattern.kernel)
    compiled = pattern.call(tc.compile(pattern.kernel, backend="eager"))
    want = printed(plain)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = printed(compiled)
        for _ in range(warm):
            printed(compiled)
    warm_compiles = compiles()
    kept, k.SINK = k.SINK, Discard()
    try:
        timings = per_call_us({"plain": plain, "tc": compiled}, (), number=20, repeat=repeat)
    finally:
        k.SINK = kept
    ratio = timings["tc"].us / timings["plain"].us
    correct = same(got, want)
    notes = [] if correct else ["RESULT DIFFERS"]
    if any(str(w.message).startswith("tcompile") for w in caught):
        notes.append("tcompile warned: " + str(caught[0].message).split(";")[0].split(": ", 1)[1])
    if max(timings["tc"].spread, timings["plain"].spread) > 0.25:
        notes.append("noisy")
    return {"pattern": pattern.name, "plain µs": fmt(timings["plain"].us, 0),
            "tc µs": fmt(timings["tc"].us, 0), "tc/plain": fmt(ratio),
            "ok": "yes" if ratio <= TARGET else "NO",
            "plain loops": str(tc.counters().get("plain_loops", 0)),
            "compiles warm-up/timed": f"{warm_compiles}/{compiles() - warm_compiles}",
            "notes": "; ".join(notes), "ratio": ratio, "same": correct}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", help="comma-separated pattern names")
    parser.add_argument("--warm", type=int, default=30, help="calls before timing (default 30)")
    parser.add_argument("--repeat", type=int, help="interleaved batches (default 11, quick 5)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (5 if args.quick else 11)
    chosen = patterns()
    if args.only:
        chosen = [p for p in chosen if p.name in args.only.split(",")]
    rows = [measure(p, args.warm, repeat) for p in chosen]
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, eager backend; warm medians "
          f"of {repeat} interleaved batches after {args.warm} calls; target tc/plain <= {TARGET}")  # fmt: skip
    headers = ["pattern", "plain µs", "tc µs", "tc/plain", "ok", "plain loops",
               "compiles warm-up/timed", "notes"]  # fmt: skip
    render_table([(h, lambda r, h=h: r[h], False) for h in headers], rows, False)
    bad = [r["pattern"] for r in rows if r["ratio"] > TARGET or not r["same"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} patterns within {TARGET}x plain"
          + (f"; over or wrong: {', '.join(bad)}" if bad else ""))  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
