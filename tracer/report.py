"""What tcompile tells the user: counters, logs, compile times, recompile and break records.

Everything here is plain data filled by the cache and read by ``tc.counters``,
``tc.compile_times``, ``tc.CompileProfiler``, ``tc.explain`` and the widgets.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field

from .errors import BreakRecord

LOG = logging.getLogger("tcompile")
ARTIFACTS = ("graph_breaks", "recompiles", "guards", "graph", "output_code")
LOGS = {name: LOG.getChild(name) for name in ARTIFACTS}

COUNTER_NAMES = ("frames_compiled", "frames_skipped", "graphs", "graph_breaks", "recompiles",
                 "cache_hits", "cache_misses", "cache_limit_hits")  # fmt: skip


@dataclass
class RecompileEvent:
    function: str
    location: str
    reasons: list[str]


@dataclass
class CompileEvent:
    """One compile of one function: its graphs, guards and breaks (what explain reports)."""

    function: str
    graphs: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    breaks: list[BreakRecord] = field(default_factory=list)
    compile_time: float = 0.0
    eager: bool = False  # the frame was skipped: it runs as plain Python
    eager_reason: str = ""  # why, when it was


class Recorder:
    """Global record of compilation; ``tc.reset()`` makes a new one."""

    def __init__(self):
        self.counters: Counter = Counter()
        self.hits = itertools.count()  # counted with next() on the hot path: cheapest counter
        self.phase_times: dict[str, list[float]] = defaultdict(list)
        self.recompiles: list[RecompileEvent] = []
        self.compiles: list[CompileEvent] = []
        self.listeners: list = []  # CompileProfiler / explain collectors
        self.bubbled: dict = {}  # (file, line) of a callee's break -> the call chain seen

    def cache_hits(self) -> int:
        return int(repr(self.hits)[len("count(") : -1])  # the count's next value, unconsumed

    def snapshot(self) -> dict[str, int]:
        counts = {name: self.counters.get(name, 0) for name in COUNTER_NAMES}
        counts["cache_hits"] = self.cache_hits()
        return counts

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phase_times[name].append(time.perf_counter() - start)

    def add_recompile(self, event: RecompileEvent) -> None:
        self.recompiles.append(event)
        for listener in self.listeners:
            listener.on_recompile(event)

    def add_compile(self, event: CompileEvent) -> None:
        self.compiles.append(event)
        for listener in self.listeners:
            listener.on_compile(event)


recorder = Recorder()


def reset_recorder() -> None:
    global recorder
    listeners = recorder.listeners
    recorder = Recorder()
    recorder.listeners = listeners


def current() -> Recorder:
    return recorder


def compile_times(repr: str = "str"):
    """Time spent per compile phase: a table (``repr="str"``) or ``{phase: [seconds...]}``."""
    times = {k: list(v) for k, v in recorder.phase_times.items()}
    if repr == "dict":
        return times
    if repr != "str":
        raise ValueError(f"repr must be 'str' or 'dict', not {repr!r}")
    lines = [f"{'phase':<16}{'calls':>6}{'total ms':>12}{'median ms':>12}"]
    for name, values in sorted(times.items()):
        ordered = sorted(values)
        median = ordered[len(ordered) // 2]
        lines.append(f"{name:<16}{len(values):>6}{sum(values) * 1e3:>12.3f}{median * 1e3:>12.3f}")
    return "\n".join(lines)


def set_logs(**artifacts: bool) -> None:
    """Switch log artifacts on or off, e.g. ``tc.set_logs(graph_breaks=True, recompiles=True)``."""
    unknown = set(artifacts) - set(ARTIFACTS)
    if unknown:
        raise ValueError(
            f"unknown log artifact(s) {sorted(unknown)}; known: {', '.join(ARTIFACTS)}"
        )
    for name, on in artifacts.items():
        logger = LOGS[name]
        logger.setLevel(logging.DEBUG if on else logging.WARNING)
        if on and not LOG.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
            LOG.addHandler(handler)
            LOG.propagate = False


def configure_from_environment() -> None:
    """``TCOMPILE_LOGS=graph_breaks,recompiles`` (or ``all``) switches those artifacts on."""
    names = [
        n.strip().lstrip("+") for n in os.environ.get("TCOMPILE_LOGS", "").split(",") if n.strip()
    ]
    if "all" in names:
        names = list(ARTIFACTS)
    if names:
        set_logs(**{n: True for n in names})
