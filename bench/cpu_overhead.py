"""Per-call overhead of the cpu backend on tiny inputs, against the eager backend (issue 22's
target: at most 5 µs over it).

Run: ``python bench/cpu_overhead.py``. The ten functions of ``overhead.py`` (8 elements or 2x4
matrices) and three loop kernels of ``cpu_loops.py`` on 8 elements, each plain, with
``backend="eager"`` and with ``backend="cpu"``: medians of interleaved batches
(`timing.per_call_us`), after checking that every variant gives NumPy's result. On tiny inputs
the cpu backend runs a loop-free graph's NumPy code (`backend/cpu/tiers.py`: kernels do not
pay) and a loop graph's loops as machine code; what it adds is its dispatch.
"""

from __future__ import annotations

import statistics

import numpy as np
from overhead import make_cases
from scalar_loops import count_above, running_max, smooth3
from timing import per_call_us

import tcompile as tc

TARGET_US = 5.0  # per call, over the eager backend


def cases() -> list[tuple[str, object, tuple]]:
    x = np.random.default_rng(3).random(8)
    loops = [("smooth3 (loop)", smooth3, (x,)), ("running_max (loop)", running_max, (x,)),
             ("count_above (loop)", count_above, (x, 0.5))]  # fmt: skip
    return [(case.name, case.fn, case.args) for case in make_cases()] + loops


def _same(got, want) -> bool:
    if isinstance(want, tuple):
        return all(_same(g, w) for g, w in zip(got, want, strict=True))
    return np.allclose(got, want, rtol=1e-12, atol=0.0)


def main() -> None:
    print(f"{'function':22}{'numpy µs':>10}{'eager µs':>10}{'cpu µs':>10}{'cpu - eager':>13}")
    over = []
    for name, fn, args in cases():
        variants = {"numpy": fn, "eager": tc.compile(fn, backend="eager"),
                    "cpu": tc.compile(fn, backend="cpu")}  # fmt: skip
        want = fn(*args)
        wrong = [label for label, variant in variants.items() if not _same(variant(*args), want)]
        us = {label: t.us for label, t in per_call_us(variants, args, 2000, 15).items()}
        over.append(us["cpu"] - us["eager"])
        print(f"{name:22}{us['numpy']:10.2f}{us['eager']:10.2f}{us['cpu']:10.2f}"
              f"{over[-1]:13.2f}" + (f"  MISMATCH: {', '.join(wrong)}" if wrong else ""))  # fmt: skip
    print(f"median cpu - eager: {statistics.median(over):.2f} µs, most {max(over):.2f} µs "
          f"(target: at most {TARGET_US:.0f} µs)")  # fmt: skip


if __name__ == "__main__":
    main()
