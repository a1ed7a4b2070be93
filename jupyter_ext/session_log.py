"""A notebook session's record of every compile and recompile, wherever it happened: in a
``%%tcompile`` cell, or in a later plain cell that called a compiled function with a new
shape (no widget shows that one). ``%tcompile log`` shows it, newest last, with the cell that
was running, what came of each compile and, for a recompile, the guard that failed.

It listens to tcompile's recorder (`tcompile.tracer.report`) for as long as the extension is
loaded, and keeps the latest `LIMIT` entries: a notebook compiles without end.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from html import escape

from tcompile.tracer.ir import file_labels
from tcompile.tracer.report import EAGER, ERROR, GRAPH, PLAIN, CompileReport

LIMIT = 2000


@dataclass(frozen=True)
class Entry:
    """One compile, in words (the report itself, graphs and all, is not kept)."""

    seconds: float  # time.time() of the report
    cell: int | None  # the execution count of the cell that was running
    function: str
    compile_id: str
    where: str
    outcome: str


class SessionLog:
    """``running_cell()``: the number of the cell being run (None between cells)."""

    def __init__(self, running_cell):
        self.running_cell = running_cell
        self.entries: deque[Entry] = deque(maxlen=LIMIT)

    def on_report(self, report: CompileReport) -> None:
        """The recorder's listener call: one compile, as it happens."""
        where = f"{file_labels.label(report.filename)}:{report.firstlineno}"
        self.entries.append(Entry(time.time(), self.running_cell(), report.function,
                                  report.compile_id, where, outcome(report)))  # fmt: skip

    def clear(self) -> None:
        self.entries.clear()

    def rows(self) -> list[tuple[str, ...]]:
        """(#, when, cell, function, compile, where, what came of it) per compile."""
        return [
            (str(i), time.strftime("%H:%M:%S", time.localtime(e.seconds)),
             f"In[{e.cell}]" if e.cell is not None else "", e.function, e.compile_id, e.where,
             e.outcome)
            for i, e in enumerate(self.entries, 1)
        ]  # fmt: skip

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        header = ("#", "when", "cell", "function", "compile", "where", "what came of it")
        rows = self.rows()
        if not rows:
            text = "tcompile session log: no compile yet"
            return {"text/plain": text, "text/html": f"<p>{escape(text)}</p>"}
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
        )
        title = f"tcompile session log: {len(rows)} compiles (newest last)"
        html = f"<div><b>{escape(title)}</b><table>{f'<tr>{head}</tr>'}{body}</table></div>"
        text = "\n".join([title, *("  ".join(row) for row in rows)])
        return {"text/plain": text, "text/html": html}


def outcome(report: CompileReport) -> str:
    """What came of one compile, in a line: its graphs and breaks, why it runs eagerly, or the
    guards whose failure made it a recompile."""
    if report.outcome == GRAPH:
        graphs = sum(1 for g in report.graphs if g.op_count())
        text = f"{graphs} graph{'s' * (graphs != 1)}, {len(report.breaks)} " \
            f"break{'s' * (len(report.breaks) != 1)}"  # fmt: skip
    elif report.outcome == EAGER:
        text = f"runs eagerly: {report.eager_reason}"
    elif report.outcome == ERROR:
        text = "raised tc.Unsupported: " + "; ".join(b.reason for b in report.breaks)
    elif report.outcome == PLAIN:
        text = "; ".join(loop.describe() for loop in report.loops)
    else:
        text = report.outcome
    if report.recompile_reasons:
        text += "; recompiled because " + "; ".join(
            r.lstrip("- ") for r in report.recompile_reasons
        )
    return text
