"""A graph compiled while numba is still starting: its NumPy code runs until numba is ready.

In a new process numba's start (`numba_start`: its import, then its registries at the first
machine code it loads) takes 0.35-0.6 s, and a function's first call used to wait for it even
with every kernel in the disk cache (a restarted notebook kernel). That call need not wait: the
graph's NumPy code, the eager backend's, gives NumPy's own results, and costs nothing more where
the trace's results stand in for it (its loops' runs by the trace, or the whole graph's). So a
graph compiled before the start is over runs that code at its first call; a later call waits
for the start if it is not over yet, makes the kernels (from the disk cache, or compiled) and
runs them, as every call after it does. The report shows the NumPy code until then, the
kernels after.

Later calls wait rather than run the NumPy code again: numba's start calls LLVM through
thousands of short calls that each give up the GIL and must win it back, and a thread running
Python without pause (a loop of calls) starves it for seconds (measured: never done in 2 s).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph

from . import numba_start

WAITING = "# numba was starting: the first call ran this code, the second makes the kernels"


def compiled(eager: CompiledGraph, build: Callable[[list], CompiledGraph]) -> CompiledGraph:
    """The cpu backend's graph while numba starts: ``eager``'s code, then what ``build`` makes
    for the inputs of the second call (the trace's are not kept alive until then)."""
    sources = {"kernels": WAITING, **eager.sources}
    details: list = []
    run = WhileStarting(eager.fn, build, sources, details)
    return CompiledGraph(run, "cpu", MappingProxyType(sources), details, eager.loop_functions,
                         trace_answers_first_call=True)  # fmt: skip


class WhileStarting:
    """Calls ``plain`` first, then the CompiledGraph that ``build(inputs)`` makes at the second
    call (its sources and details replace ``sources`` and ``details``, the report's views)."""

    def __init__(self, plain: Callable, build: Callable[[list], CompiledGraph], sources: dict,
                 details: list):  # fmt: skip
        self.run, self.build, self.first = plain, build, True
        self.sources, self.details = sources, details
        self.lock = threading.Lock()  # two threads may make the second call at once

    def __call__(self, *inputs):
        if self.first:
            self.first = False
        elif self.build is not None:
            self._build(list(inputs))
        return self.run(*inputs)

    def _build(self, inputs: list) -> None:
        with self.lock:
            build, self.build = self.build, None
            if build is None:
                return
            numba_start.wait()
            try:
                made = build(inputs)
            except Exception as why:  # noqa: BLE001 - the NumPy code is exact: it goes on
                self.sources["kernels"] = (
                    f"# not made ({type(why).__name__}: {why}): this code runs"
                )
                warnings.warn(f"tcompile: the cpu backend could not make a graph's kernels "
                              f"({type(why).__name__}: {why}); it runs its NumPy code",
                              RuntimeWarning, stacklevel=3)  # fmt: skip
                return
            self.sources.clear()
            self.sources.update(made.sources)
            self.details[:] = made.details
            self.run = made.fn
