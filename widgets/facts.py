"""What a cell's run holds, asked the same way by every view: the graphs it shows, its distinct
breaks, its skipped frames and loops run as plain Python, and how to name a place in it.

`render` (the tabs) and `line_map` (the Lines tab) both read a run through these, so a graph
or a break counts the same in each.
"""

from __future__ import annotations

from tcompile.tracer.errors import BreakRecord
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import FrameLoc
from tcompile.tracer.report import EAGER, GRAPH, PLAIN, CompileReport

from .model import CellRun, CellSource


def shown_graphs(run: CellRun) -> list[tuple[CompileReport, str, Graph]]:
    """(report, title, graph) for every graph that captured at least one op."""
    shown = []
    for report in run.reports:
        graphs = [g for g in report.graphs if g.op_count()] if report.outcome == GRAPH else []
        for i, graph in enumerate(graphs):
            part = f" (graph {i + 1} of {len(graphs)})" if len(graphs) > 1 else ""
            shown.append((report, f"{report.function} {report.compile_id}{part}", graph))
    return shown


def unique_breaks(run: CellRun) -> dict[BreakRecord, list[CompileReport]]:
    """Each distinct break, with the compiles that met it (a recompile meets it again)."""
    seen: dict[BreakRecord, list[CompileReport]] = {}
    for report in run.reports:
        for record in report.breaks:
            seen.setdefault(record, []).append(report)
    return seen


def skipped(run: CellRun) -> list[CompileReport]:
    """The frames that ran eagerly (a break they cannot resume, ``tc.skip_frame``...)."""
    return [r for r in run.reports if r.outcome == EAGER]


def plain_loops(run: CellRun) -> list:
    """The split loops that run as plain Python (`LoopRecord`, each with why)."""
    return [loop for r in run.reports if r.outcome == PLAIN for loop in r.loops]


def in_cell(loc: FrameLoc, source: CellSource) -> bool:
    return loc.filename == source.filename


def where(filename: str, lineno: int, source: CellSource) -> str:
    """``Cell In[5], line 3`` (a cell), else ``File "/path/mod.py", line 3``."""
    label = source.label_of(filename)
    return f"{label}, line {lineno}" if label else f'File "{filename}", line {lineno}'
