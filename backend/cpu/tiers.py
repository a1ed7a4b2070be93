"""Which code a loop-free graph runs on the cpu backend: its NumPy code or its fused kernels,
chosen per input shapes by timing both ("never slower": kernels run only where they were
measured faster).

- Inputs of fewer than `SMALL_INPUTS` elements in all run the NumPy code: a kernel call costs
  ~10 µs of argument typing and plan, NumPy's own calls ~1 µs each.
- Other inputs: the first call of a shape runs the kernels (it plans them, and numba may
  compile), untimed; the next `TRIALS` calls run the kernels, the `TRIALS` after them the
  NumPy code, timed; from then on the faster of the two by its best time runs (a call slowed
  by another process says nothing of the code). A matmul-bound graph stays NumPy code where a
  haversine chain goes to kernels.

What was chosen, and the times it was chosen on, is the compiled graph's "choice" source (the
Code tab), a line per input shapes.
"""

from __future__ import annotations

import time

import numpy as np

SMALL_INPUTS = 1 << 15
TRIALS = 3


class Tiers:
    """The compiled graph's callable: ``plain`` (NumPy code) or ``fused`` (kernels, made by
    ``make_fused`` at the first call that needs them), per input shapes. ``sources`` (the
    dict behind the compiled graph's sources) gets the verdicts as its "choice" entry."""

    def __init__(self, plain, make_fused, sources: dict, clock=time.perf_counter):
        self.plain, self.make_fused, self.fused = plain, make_fused, None
        self.clock = clock
        self.sources = sources
        self.trials: dict[tuple, _Trial] = {}
        self.verdicts: dict[tuple, str] = {}

    def __call__(self, *inputs):
        if small(inputs):
            return self.plain(*inputs)
        key = tuple((a.shape, a.dtype.str) for a in inputs if isinstance(a, np.ndarray))
        trial = self.trials.get(key)
        if trial is None:
            if self.fused is None:
                self.fused = self.make_fused()
            self.trials[key] = _Trial()
            return self.fused(*inputs)  # plans this shape (numba may compile): not timed
        if trial.winner is not None:
            return trial.winner(*inputs)
        # each in a run of its own: calls in turn would time each other's memory churn (the
        # kernels' output then page-faults in after NumPy's temporaries went back to the OS)
        fn = self.fused if len(trial.fused) < TRIALS else self.plain
        start = self.clock()
        result = fn(*inputs)
        (trial.plain if fn is self.plain else trial.fused).append(self.clock() - start)
        if len(trial.plain) == TRIALS:
            self._decide(key, trial)
        return result

    def _decide(self, key: tuple, trial: _Trial) -> None:
        plain, fused = min(trial.plain), min(trial.fused)
        trial.winner = self.fused if fused < plain else self.plain
        verdict = "kernels" if fused < plain else "NumPy code (kernels do not pay here)"
        shapes = ", ".join(f"{np.dtype(dtype).name}{list(shape)}" for shape, dtype in key)
        self.verdicts[key] = (f"# {shapes}: {verdict}; best of {TRIALS} calls: kernels "
                              f"{fused * 1e6:.0f} µs, NumPy code {plain * 1e6:.0f} µs")  # fmt: skip
        self.sources["choice"] = "\n".join(self.verdicts.values())


class _Trial:
    """One input shape's timed calls, then its winner."""

    def __init__(self):
        self.plain: list[float] = []
        self.fused: list[float] = []
        self.winner = None


def small(inputs) -> bool:
    return sum(a.size for a in inputs if isinstance(a, np.ndarray)) < SMALL_INPUTS
