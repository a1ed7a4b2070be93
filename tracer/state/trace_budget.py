"""How far one trace may go before it stops and the frame runs eagerly instead.

Unrolling a long loop makes a trace grow with the trip count: thousands of graph ops and
seconds of tracing, for a graph that may then break anyway. A trace that outgrows its budget
(graph ops, seconds, or instructions interpreted) stops with a ``trace_budget`` break, whose
reason `tc.explain` shows. The ops and seconds limits are ``tc.config.trace_max_ops`` and
``tc.config.trace_max_seconds``.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from ..config import config

MAX_INSTRUCTIONS = 200_000  # interpreted instructions, across a whole trace
_CHECK_EVERY = 64  # instructions between two looks at the clock and the graph's size


class TraceBudget:
    def __init__(self):
        self.instructions = 0
        self._started = time.perf_counter()
        self._max_ops = config.trace_max_ops
        self._max_seconds = config.trace_max_seconds

    def spend(self, graph) -> str | None:
        """Count one instruction; say how the trace went over budget, if it did."""
        self.instructions += 1
        if self.instructions % _CHECK_EVERY:
            return None
        if self.instructions > MAX_INSTRUCTIONS:
            return f"more than {MAX_INSTRUCTIONS} bytecode instructions traced"
        # (counting ops walks the graph: only when there are enough nodes for it to matter)
        if len(graph.nodes) > self._max_ops and graph.op_count() > self._max_ops:
            return f"the graph grew past {self._max_ops} ops (tc.config.trace_max_ops)"
        seconds = time.perf_counter() - self._started
        if seconds > self._max_seconds:
            return (f"tracing took more than {self._max_seconds:g} s "
                    f"(tc.config.trace_max_seconds), at {graph.op_count()} graph ops")  # fmt: skip
        return None

    @contextmanager
    def paused(self):
        """Time spent inside is no tracing: a loop node's run on the examples (as long as the
        user's loop takes) does not count against ``trace_max_seconds``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self._started += time.perf_counter() - start

    def rows_fit(self, rows: int) -> bool:
        """Whether unrolling a loop over ``rows`` rows (an op each, at least) can stay within
        the op budget: if not, the trace stops before making them."""
        return rows <= self._max_ops
