"""What tcompile tells the user: one frozen `CompileReport` per compile, published to listeners.

Every compile (a function, a resume function, a recompile, a frame that runs eagerly, a
``fullgraph`` error) produces one report. `Recorder.publish` counts it, logs it and hands it to
the listeners; ``tc.explain``, ``tc.CompileProfiler``, ``tc.counters``, ``tc.compile_times``,
the logs and the Jupyter widget are views over these reports. There is one `recorder`, for
the whole process; ``tc.reset()`` clears it in place (listeners stay), so a reference to it
never goes stale.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from collections import Counter, defaultdict, deque
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import BreakRecord
from .ir.compiled_graph import CompiledGraph

LOG = logging.getLogger("tcompile")
ARTIFACTS = ("graph_breaks", "recompiles", "guards", "graph", "output_code")
LOGS = {name: LOG.getChild(name) for name in ARTIFACTS}

COUNTER_NAMES = ("frames_compiled", "frames_skipped", "graphs", "graph_breaks", "recompiles",
                 "cache_hits", "cache_misses", "cache_limit_hits", "plain_loops")  # fmt: skip

GRAPH, EAGER, ERROR = "graph", "eager", "error"
# Not a compile: a split loop of the frame runs as plain Python from now on (`loops` says why).
PLAIN = "plain"


@dataclass(frozen=True)
class CompileReport:
    """One compile of one frame: what was captured, what it assumed, and why.

    ``outcome`` is "graph" (the frame runs compiled code: ``graphs`` holds its graph, empty
    when it captured no operation), "eager" (the frame runs as plain Python, for
    ``eager_reason``), "error" (a break where none was allowed: ``tc.Unsupported`` was
    raised; ``breaks`` holds it) or "plain" (no compile: a split loop found that compiling its
    body does not pay and runs as plain Python from then on; ``loops`` holds its record).
    ``sources`` maps "graph", "glue", "guards", "resume", "loops" (the bodies of loop nodes)
    and "backend" (the backend's generated code, as it is when read: `Sources`) to text;
    ``phases`` maps a compile phase
    ("trace", "codegen", "backend", "guards") to seconds; ``compiled`` is what the backend
    returned (its sources by name and its details, such as Triton's kernel groups).
    """

    compile_id: str
    function: str  # qualified name (resume functions: "f (resume at line 12)")
    filename: str
    firstlineno: int
    outcome: str
    eager_reason: str = ""
    graphs: tuple = ()
    guards: tuple = ()
    recompile_reasons: tuple[str, ...] = ()  # one line per earlier entry, naming its guard
    breaks: tuple[BreakRecord, ...] = ()
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    phases: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    compiled: CompiledGraph | None = None  # the backend's result for the graph
    loops: tuple = ()  # what became of each loop: a loop node, or unrolled and why
    conds: tuple = ()  # the branches on data made cond nodes

    @property
    def is_recompile(self) -> bool:
        return bool(self.recompile_reasons)

    @property
    def compile_time(self) -> float:
        return sum(self.phases.values())

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.firstlineno}"


class Sources(Mapping):
    """A compile's sources by name, with "backend" read from the compiled graph when asked:
    a backend may make code after the compile (the cpu backend's kernels at a graph's second
    call while numba starts, its choices between kernels and NumPy code)."""

    def __init__(self, sources: Mapping[str, str], compiled: CompiledGraph | None):
        self._sources = MappingProxyType(dict(sources))
        self._compiled = compiled if compiled is not None and compiled.sources else None

    def __getitem__(self, key: str) -> str:
        if key == "backend" and self._compiled is not None:
            return self._compiled.source_text()
        return self._sources[key]

    def __iter__(self):
        yield from self._sources
        if self._compiled is not None:
            yield "backend"

    def __len__(self) -> int:
        return len(self._sources) + (self._compiled is not None)


class Phases(dict):
    """Seconds per compile phase, filled by ``with phases.time("trace"): ...``. A phase timed
    inside another is its own, not the outer's: the "loop run" (a loop node's run on the
    trace's examples, `loop_body.run_on_examples`) is the user's computation, not tracing."""

    def __init__(self):
        super().__init__()
        self._inner: list[float] = []  # per open phase: the seconds of phases timed inside it

    @contextmanager
    def time(self, name: str):
        start = time.perf_counter()
        self._inner.append(0.0)
        try:
            yield
        finally:
            elapsed, inner = time.perf_counter() - start, self._inner.pop()
            self[name] = self.get(name, 0.0) + elapsed - inner
            if self._inner:
                self._inner[-1] += elapsed


class Recorder:
    """Global record of compilation: the module's `recorder`; ``tc.reset()`` calls `reset`."""

    def __init__(self):
        self.counters: Counter = Counter()
        self.hits = itertools.count()  # counted with next() on the hot path: cheapest counter
        # the latest compiles' phase times (a notebook compiles without end: keep it bounded)
        self.phase_times: dict[str, deque] = defaultdict(lambda: deque(maxlen=10_000))
        self.listeners: list = []  # objects with on_report(report): explain, profiler, widgets
        self.bubbled: dict = {}  # (file, line) of a callee's break -> the call chain seen

    def reset(self) -> None:
        """Forget every count, time and pending call chain; the listeners stay."""
        self.counters.clear()
        self.hits = itertools.count()  # the hot path reads ``recorder.hits`` on each hit
        self.phase_times.clear()
        self.bubbled.clear()

    def cache_hits(self) -> int:
        return int(repr(self.hits)[len("count(") : -1])  # the count's next value, unconsumed

    def snapshot(self) -> dict[str, int]:
        counts = {name: self.counters.get(name, 0) for name in COUNTER_NAMES}
        counts["cache_hits"] = self.cache_hits()
        return counts

    def publish(self, report: CompileReport) -> None:
        """Count, log and hand out one report."""
        counters = self.counters
        if report.outcome == GRAPH:
            counters["frames_compiled"] += 1
            counters["graphs"] += sum(1 for g in report.graphs if g.op_count())
        elif report.outcome == EAGER:
            counters["frames_skipped"] += 1
        elif report.outcome == PLAIN:
            counters["plain_loops"] += 1
        counters["graph_breaks"] += len(report.breaks)
        counters["recompiles"] += report.is_recompile
        for name, seconds in report.phases.items():
            self.phase_times[name].append(seconds)
        _log(report)
        for listener in list(self.listeners):
            listener.on_report(report)


def _log(report: CompileReport) -> None:
    if report.is_recompile and LOGS["recompiles"].isEnabledFor(logging.DEBUG):
        LOGS["recompiles"].debug("%s", recompile_text(report))
    if LOGS["graph_breaks"].isEnabledFor(logging.DEBUG):
        for record in report.breaks:
            LOGS["graph_breaks"].debug("%s", record.render())
    name = f"{report.function} {report.compile_id}"
    if report.graphs and LOGS["graph"].isEnabledFor(logging.DEBUG):
        LOGS["graph"].debug("graph of %s:\n%s", name, "\n".join(map(str, report.graphs)))
    if LOGS["guards"].isEnabledFor(logging.DEBUG):
        LOGS["guards"].debug("guards of %s:\n%s", name,
                             "\n".join(f"  {g.describe()}" for g in report.guards))  # fmt: skip
    if LOGS["output_code"].isEnabledFor(logging.DEBUG):
        LOGS["output_code"].debug("code of %s:\n%s", name, "\n\n".join(report.sources.values()))


def recompile_text(report: CompileReport) -> str:
    """``Recompiling function f in file:line`` and the guard that failed, per earlier entry."""
    return (f"Recompiling function {report.function} in {report.location}\n"
            "    triggered by the following guard failure(s):\n    "
            + "\n    ".join(report.recompile_reasons))  # fmt: skip


recorder = Recorder()  # the one recorder: never replaced, `Recorder.reset` clears it


@contextmanager
def collecting():
    """``with collecting() as reports:`` the reports published inside the block, in order."""
    collector = _Collector()
    recorder.listeners.append(collector)
    try:
        yield collector.reports
    finally:
        if collector in recorder.listeners:
            recorder.listeners.remove(collector)


class _Collector:
    def __init__(self):
        self.reports: list[CompileReport] = []

    def on_report(self, report: CompileReport) -> None:
        self.reports.append(report)


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
