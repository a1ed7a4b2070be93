"""What a graph break does where it happens: raise (``error_on_graph_break`` in force), or
split the graph; and whether the frame can resume after it at all.

The ``error_on_graph_break`` setting is a stack: the compile option at the bottom, then each
``tc.error_on_graph_break`` block or wrapped function entered, innermost last. An inlined
``tc.compile(fullgraph=True)`` function forces it for as long as it runs. A *region* (a try
block, an unsupported with-block) already makes the frame run eagerly; tracing goes on only to
find the first real break inside it, which is then reported as the region's kind.
"""

from __future__ import annotations

import contextlib

from ..errors import BREAK_KINDS, BreakRecord, GraphBreak
from ..ir.node import FrameLoc


class BreakPolicy:
    def __init__(self, error_on_graph_break: bool):
        self._settings = [error_on_graph_break]
        self._forced = 0
        self.region: BreakRecord | None = None

    def make(self, kind: str, explanation: str, stack: tuple[FrameLoc, ...],
             hints: tuple[str, ...] = ()) -> GraphBreak:  # fmt: skip
        """A located break (the caller raises it) with the setting in force here."""
        return GraphBreak(BreakRecord(BREAK_KINDS[kind], explanation, stack, hints),
                          error_on_graph_break=self._forced > 0 or self._settings[-1])  # fmt: skip

    def push_setting(self, flag: bool) -> None:
        self._settings.append(flag)

    def pop_setting(self) -> None:
        self._settings.pop()

    @contextlib.contextmanager
    def setting(self, flag: bool):
        """``error_on_graph_break`` set to ``flag`` while a wrapped function is inlined."""
        self.push_setting(flag)
        try:
            yield
        finally:
            self.pop_setting()

    @contextlib.contextmanager
    def forced(self, fullgraph: bool):
        """An inlined ``fullgraph=True`` function keeps its promise: it breaks nowhere."""
        self._forced += fullgraph
        try:
            yield
        finally:
            self._forced -= fullgraph

    def enter_region(self, brk: GraphBreak) -> None:
        """The trace entered a try block or an unsupported with-block (the first one counts)."""
        if self.region is None:
            self.region = brk.record

    def in_region(self, brk: GraphBreak) -> GraphBreak:
        """A break met inside a region is reported at its own line, as the region's kind."""
        if self.region is None:
            return brk
        return blocked_by(brk, self.region.kind.id, self.region.explanation)


def blocked_by(brk: GraphBreak, kind: str, where: str) -> GraphBreak:
    """The break, re-kinded: it happened where a frame cannot resume (try/with blocks)."""
    if brk.record.kind.id == kind:
        return brk
    record = BreakRecord(BREAK_KINDS[kind], f"{brk.record.explanation} ({where})",
                         brk.record.stack, brk.record.hints)  # fmt: skip
    return GraphBreak(record, error_on_graph_break=brk.error_on_graph_break)
