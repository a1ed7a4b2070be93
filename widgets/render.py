"""Pure renderers: a cell's run (its frozen compile reports) as HTML sections and plain text.

Every function here is a pure function of plain data (`CellRun`, `CompileReport`,
`BreakRecord`), so the widget, saved notebooks, nbconvert and terminal IPython all show the
same content, and the tests need no kernel. Each ``*_html`` function returns a self-contained
fragment (its own ``<style>``); all text from the user's code is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from tcompile.tracer.errors import HINT_FULLGRAPH_OFF, BreakRecord, Unsupported
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import FrameLoc
from tcompile.tracer.report import ERROR, GRAPH, CompileReport
from tcompile.tracer.state import data_sizes

from . import blocks, drawing, facts, kernels_tab, line_map
from .model import CellRun, CellSource
from .style import SAVED_COPY_CLASS, SAVED_COPY_CSS

CODE_SOURCES = {
    "glue": "glue (the frame's new code)",
    "resume": "resume functions",
    "guards": "guard check",
    "backend": "backend code",
}
EXCERPT_CONTEXT = 2  # cell lines shown above and below a pinned error's line
NOTEBOOK_FULLGRAPH_OFF = (
    "Turn the widget's fullgraph (or error_on_graph_break) toggle off, or drop that flag from "
    "the %%tcompile line or the tc.compile call, to let tcompile break the graph here and run "
    "this part eagerly."
)


# -- what a run holds -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Mark:
    """A marked line of the cell: "break" (a graph break there), "skip" (the first line of a
    function that ran eagerly for a reason other than a break), "plain" (a split loop that runs
    as plain Python) or "call" (a call on the way to a break inside the called function)."""

    kind: str
    note: str


def _cell_frame(record: BreakRecord, source: CellSource) -> FrameLoc | None:
    """The innermost frame of the break's stack that is in the cell: where the cell breaks."""
    return next((loc for loc in reversed(record.stack) if facts.in_cell(loc, source)), None)


def _break_loc(record: BreakRecord, source: CellSource) -> FrameLoc | None:
    """Where a break shows: its innermost frame in the cell, else its innermost frame."""
    return _cell_frame(record, source) or record.location


def _source_line(loc: FrameLoc, source: CellSource) -> str:
    if facts.in_cell(loc, source):
        return dict(source.lines()).get(loc.lineno, "").strip()
    return loc.source_line


def _frame_text(loc: FrameLoc, source: CellSource) -> str:
    """``Cell In[5], line 3, in f`` and the source line under it, as in a traceback."""
    text = f"{facts.where(loc.filename, loc.lineno, source)}, in {loc.funcname}"
    line = _source_line(loc, source)
    return f"{text}\n    {line}" if line else text


def _line_marks(run: CellRun) -> dict[int, list[_Mark]]:
    """Cell line -> its marks: each break's line, the calls leading to it, skipped frames."""
    marks: dict[int, list[_Mark]] = {}
    for record in facts.unique_breaks(run):
        in_cell = [loc for loc in record.stack if facts.in_cell(loc, run.source)]
        if in_cell:
            marks.setdefault(in_cell[-1].lineno, []).append(_Mark("break", record.reason))
        for loc in in_cell[:-1]:
            note = f"calls into the break at line {in_cell[-1].lineno}"
            marks.setdefault(loc.lineno, []).append(_Mark("call", note))
    for report in facts.skipped(run):
        if not report.breaks and report.filename == run.source.filename:
            note = f"{report.function} runs eagerly: {report.eager_reason}"
            marks.setdefault(report.firstlineno, []).append(_Mark("skip", note))
    for loop in facts.plain_loops(run):
        if loop.filename == run.source.filename:
            note = f"the loop runs as plain Python: {loop.reason}"
            marks.setdefault(loop.lineno, []).append(_Mark("plain", note))
    return marks


def _hints(record: BreakRecord) -> tuple[str, ...]:
    """The hints ``tc.Unsupported`` prints for the record."""
    return (*_cell_hints(record), NOTEBOOK_FULLGRAPH_OFF)


def _cell_hints(record: BreakRecord) -> tuple[str, ...]:
    """The record's hints in a notebook's words: its fullgraph is a flag and a toggle."""
    return tuple(h for h in record.all_hints() if h != HINT_FULLGRAPH_OFF)


# -- summary ------------------------------------------------------------------------------------
def summary(run: CellRun) -> str:
    """One line: functions compiled, graphs, breaks, skipped frames, loops run as plain Python,
    guards, times."""
    compiled = {(r.filename, r.firstlineno) for r in run.reports if r.outcome == GRAPH}
    errors = sum(r.outcome == ERROR for r in run.reports)
    parts = [
        f"{blocks.plural(len(compiled), 'function')} compiled",
        blocks.plural(len(facts.shown_graphs(run)), "graph"),
        blocks.plural(len(facts.unique_breaks(run)), "graph break"),
        f"{blocks.plural(len(facts.skipped(run)), 'frame')} skipped (ran eagerly)",
        blocks.plural(sum(len(r.guards) for r in run.reports), "guard"),
        f"compile {blocks.ms(sum(r.compile_time for r in run.reports))}",
        f"cell {blocks.ms(run.seconds)}",
    ]
    plain = len(facts.plain_loops(run))
    if plain:
        parts.insert(4, f"{blocks.plural(plain, 'loop')} run as plain Python")
    if errors:
        parts.insert(4, f"{blocks.plural(errors, 'compile')} failed (tc.Unsupported)")
    if run.timing is not None:
        parts.append(f"calls {blocks.ms(run.timing.compiled_s)} compiled, {blocks.ms(run.timing.plain_s)} "
                     f"plain")  # fmt: skip
    if run.error is not None:
        parts.append(f"raised {type(run.error).__name__}")
    return " · ".join(parts)


def summary_html(run: CellRun) -> str:
    """The summary line as HTML (class ``tc-summary``)."""
    return f'<div class="tc-summary"><b>tcompile</b> · {escape(summary(run))}</div>'


# -- HTML building blocks -------------------------------------------------------------------------


# A line's class by its strongest mark: a break, then a skipped frame, then a loop run plainly,
# then a call on the way.
_LINE_CLASSES = (
    ("break", "tc-break-line"),
    ("skip", "tc-break-line tc-skip-line"),
    ("plain", "tc-plain-line"),
    ("call", "tc-call-line"),
)


def _listing(lines: list[tuple[int, str]], marks: dict[int, list[_Mark]]) -> str:
    """Source lines with their numbers; marked lines highlighted, with ``->`` and a note."""
    rows = []
    for lineno, text in lines:
        here = marks.get(lineno, [])
        kinds = {m.kind for m in here}
        cls = next((c for k, c in _LINE_CLASSES if k in kinds), "")
        arrow = "->" if kinds & {"break", "skip"} else ""
        note = "; ".join(m.note for m in here)
        note_html = f'<span class="tc-line-note">{escape(note)}</span>' if note else ""
        rows.append(
            f'<div class="tc-line {cls}"><span class="tc-mark">{arrow}</span>'
            f'<span class="tc-lineno">{lineno}</span>{escape(text)}{note_html}</div>'
        )
    return f'<div class="tc-source">{"".join(rows)}</div>'


# -- the sections ---------------------------------------------------------------------------------
def _graphs_body(run: CellRun) -> str:
    shown = facts.shown_graphs(run)
    plain = _plain_loops_html(run)
    failed = [r for r in run.reports if r.outcome == ERROR]
    if not shown and failed:
        names = ", ".join(dict.fromkeys(r.function for r in failed))
        return blocks.empty(f"No graph: the compile of {names} stopped at a graph break, which its "
                      "options make an error (see the Breaks tab).")  # fmt: skip
    if not shown:
        return blocks.empty("No graph captured: no compiled frame ran a NumPy operation.") + plain
    drawn = "".join(
        _graph_block(report, title, graph, run.source) for report, title, graph in shown
    )
    return drawn + plain


def _plain_loops_html(run: CellRun) -> str:
    """The split loops that run as plain Python: compiling their bodies did not pay."""
    return _described_list(facts.plain_loops(run), "tc-plain-loops", "Loops run as plain Python")


def _described_list(records: list, css_class: str, title: str) -> str:
    """A titled list of records, each as its ``describe()`` says; "" for none."""
    if not records:
        return ""
    items = "".join(f"<li>{escape(record.describe())}</li>" for record in records)
    return f'<div class="tc-loops {css_class}">{title}:<ul>{items}</ul></div>'


def _graph_block(report: CompileReport, title: str, graph: Graph, source: CellSource) -> str:
    drawn = drawing.draw(graph, title, source.label_of)
    where = facts.where(report.filename, report.firstlineno, source)
    heading = blocks.title(title, f"{blocks.plural(graph.op_count(), 'op')} · {where}")
    if drawn.svg is not None:
        row = f'<div class="tc-graph-svg">{drawn.svg}</div>{blocks.pre(str(graph))}'
        heading += _ZOOM
    elif graph.op_count() > drawing.DRAW_LIMIT:
        row = f"<div>{_graph_summary(graph, drawn.note, source)}</div>{_code_head(graph)}"
    else:
        row = f'<div class="tc-error">{escape(drawn.note)}</div>{blocks.pre(str(graph))}'
    # <details>: a click on the title folds the graph away, with no script (saved copies too)
    return f'<details class="tc-graph" open><summary>{heading}</summary>' \
        f'<div class="tc-graph-row">{row}</div>{_loops_html(report)}{_conds_html(report)}' \
        f"{_sizes_html(graph)}</details>"  # fmt: skip


# A drawing fits a short box; this box shows it at full size (CSS alone: `style.CSS`).
_ZOOM = '<label class="tc-zoom"><input type="checkbox"> full size</label>'


def large_graphs(run: CellRun) -> list[tuple[str, Graph]]:
    """(title, graph) of the graphs too large to draw with the report."""
    return [(title, graph) for _, title, graph in facts.shown_graphs(run)
            if graph.op_count() > drawing.DRAW_LIMIT]  # fmt: skip


def drawing_html(graph: Graph, title: str, source: CellSource) -> str:
    """A large graph drawn on request (with `drawing.ON_DEMAND_BUDGET_S`), or why it was not."""
    drawn = drawing.draw(graph, title, source.label_of, on_request=True)
    if drawn.svg is None:
        return blocks.page(f'<div class="tc-error">{escape(drawn.note)}</div>')
    took = blocks.title(title, f"drawn in {blocks.ms(drawn.seconds)}")
    return blocks.page(f'{took}<div class="tc-graph-svg">{drawn.svg}</div>')


def _graph_summary(graph: Graph, note: str, source: CellSource) -> str:
    """A large graph in a form that scales: its ops by kind and by source line."""
    kinds = blocks.table(("op", "count"), ((kind, str(n)) for kind, n in drawing.op_kinds(graph)))
    lines = blocks.table(("line", "ops", "kinds"), ((where, str(n), kinds_text) for where, n, kinds_text
                                              in drawing.ops_by_line(graph, source.label_of)))  # fmt: skip
    return f'<div class="tc-note">{escape(note)}.</div>{blocks.title("Ops by kind")}{kinds}' \
        f'{blocks.title("Ops by line")}{lines}'  # fmt: skip


def _code_head(graph: Graph) -> str:
    """The graph's code, up to `drawing.CODE_LINES` lines (the summary covers the rest)."""
    return blocks.pre_head(str(graph))


def _loops_html(report: CompileReport) -> str:
    """The loops this compile met: loop nodes (trip count, body size, the body's code) and the
    loops it unrolled, with why."""
    if not report.loops:
        return ""
    items = "".join(
        f"<li>{escape(loop.describe())}"
        + (
            f"<details open><summary>body</summary>{blocks.pre(loop.body)}</details>"
            if loop.captured
            else ""
        )  # fmt: skip
        + "</li>"
        for loop in report.loops
    )
    return f'<div class="tc-loops">Loops:<ul>{items}</ul></div>'


def _conds_html(report: CompileReport) -> str:
    """The branches on data this compile made cond nodes: where, what they set, and the
    ``if`` statement with both sides as the graph runs it."""
    if not report.conds:
        return ""
    items = "".join(
        f"<li>{escape(cond.describe())}<details open><summary>both sides</summary>"
        f"{blocks.pre(cond.sides)}</details></li>"
        for cond in report.conds
    )
    return f'<div class="tc-loops tc-conds">Branches:<ul>{items}</ul></div>'


def _sizes_html(graph: Graph) -> str:
    """The operations of the graph whose results' sizes follow array values."""
    return _described_list(data_sizes.made_in(graph), "tc-sizes", "Sizes from data")


def _guards_body(run: CellRun) -> str:
    entries = [r for r in run.reports if r.guards or r.recompile_reasons]
    if not entries:
        return blocks.empty("No guards: no frame of this cell was compiled.")
    return "".join(_guard_entry(r, run.source) for r in entries)


def _guard_entry(report: CompileReport, source: CellSource) -> str:
    recompiled = ""
    if report.recompile_reasons:
        reasons = blocks.bullets(report.recompile_reasons)
        recompiled = f"<div>Recompiled because a guard failed:</div>{reasons}"
    rows = [(str(i), g.kind, g.source.name(), g.describe()) for i, g in enumerate(report.guards, 1)]
    table = blocks.table(("#", "kind", "source", "guard"), rows) if rows else ""
    title = blocks.report_title(report, source, f" · {blocks.plural(len(report.guards), 'guard')}")
    return f'<div class="tc-entry">{title}{recompiled}{table}</div>'


def _breaks_body(run: CellRun) -> str:
    breaks = facts.unique_breaks(run)
    skipped = facts.skipped(run)
    parts = [_listing(run.source.lines(), _line_marks(run))]
    if breaks:
        parts.extend(
            _break_block(record, reports, run.source) for record, reports in breaks.items()
        )
    else:
        parts.append(blocks.empty("No graph breaks."))
    if skipped:
        rows = [
            (
                r.function,
                r.compile_id,
                facts.where(r.filename, r.firstlineno, run.source),
                r.eager_reason,
            )
            for r in skipped
        ]
        parts.append(blocks.title("Skipped frames (ran eagerly)"))
        parts.append(blocks.table(("function", "compile", "where", "reason"), rows))
    return "".join(parts)


def _break_block(record: BreakRecord, reports: list[CompileReport], source: CellSource) -> str:
    loc = _break_loc(record, source)
    where = f"{facts.where(loc.filename, loc.lineno, source)} · " if loc else ""
    ids = ", ".join(f"{r.function} {r.compile_id}" for r in reports)
    failed = " (raised tc.Unsupported)" if any(r.outcome == ERROR for r in reports) else ""
    return (
        f'<div class="tc-break"><div class="tc-title">{escape(record.kind.title)} '
        f'<span class="tc-kind-id">[{escape(record.kind.id)}]</span></div>'
        f"<div>{escape(record.explanation)}</div>"
        f'<div class="tc-muted">{escape(where)}seen in {escape(ids)}{failed}</div>'
        f"{_chain_html(record, source)}<div>Try:</div>{blocks.bullets(_cell_hints(record))}</div>"
    )


def _chain_html(record: BreakRecord, source: CellSource) -> str:
    if not record.stack:
        return ""
    head = "User code (innermost last):" if len(record.stack) > 1 else "User code:"
    return f"<div>{head}</div>" + blocks.pre(
        "\n".join(_frame_text(loc, source) for loc in record.stack)
    )


def _code_body(run: CellRun) -> str:
    entries = [r for r in run.reports if any(r.sources.get(k) for k in CODE_SOURCES)]
    if not entries:
        return blocks.empty("No generated code: no frame of this cell was compiled.")
    return "".join(_code_entry(r, run.source) for r in entries)


def _code_entry(report: CompileReport, source: CellSource) -> str:
    parts = [
        f"<details{' open' if key == 'backend' else ''}><summary>{escape(label)}</summary>"
        f"{blocks.pre_head(report.sources[key])}</details>"
        for key, label in CODE_SOURCES.items()
        if report.sources.get(key)
    ]
    return f'<div class="tc-entry">{blocks.report_title(report, source)}{"".join(parts)}</div>'


def _timings_body(run: CellRun) -> str:
    phases = list(dict.fromkeys(name for r in run.reports for name in r.phases))
    rows = [
        (
            r.function,
            r.compile_id,
            *(blocks.ms(r.phases.get(p, 0.0)) for p in phases),
            blocks.ms(r.compile_time),
        )
        for r in run.reports
    ]
    total = sum(r.compile_time for r in run.reports)
    rows.append(("all compiles", "", *("" for _ in phases), blocks.ms(total)))
    table = blocks.table(("function", "compile", *phases, "total"), rows)
    graphs = [graph for _, _, graph in facts.shown_graphs(run)]
    drawn = f"Drawing the graphs (this report, after the cell ran): " \
        f"{blocks.ms(drawing.drawing_seconds(graphs))}"  # fmt: skip
    return f"{table}<div>{escape(run_time(run))}</div><div>{escape(drawn)}</div>"


def run_time(run: CellRun) -> str:
    """What the cell's run cost, compiling apart, and whether compiling paid off: with
    ``--timeit`` its calls warm, compiled and plain; else how to find out."""
    compiling = sum(r.compile_time for r in run.reports)
    text = (f"The cell ran in {blocks.ms(run.seconds)}, of which compiling took {blocks.ms(compiling)}: "
            f"its code ran in {blocks.ms(max(run.seconds - compiling, 0.0))}.")  # fmt: skip
    timing = run.timing
    if timing is None:
        if run.options.timeit:
            return text + " --timeit had nothing to time (no call of a function it defines, " \
                "or a run raised)."  # fmt: skip
        return text + " Add --timeit to the %%tcompile line to compare its calls with the " \
            "plain code."  # fmt: skip
    verdict = f"{timing.speedup:.2f}x faster" if timing.speedup >= 1 else \
        f"{1 / timing.speedup:.2f}x slower"  # fmt: skip
    return text + (f" Its calls again (--timeit, median of {timing.runs} runs each): compiled "
                   f"{blocks.ms(timing.compiled_s)}, plain {blocks.ms(timing.plain_s)}: compiled is "
                   f"{verdict}.")  # fmt: skip


def lines_html(run: CellRun) -> str:
    """Every line of the cell marked by what became of it (in a graph, a loop node, a break,
    glue, a skipped frame, a loop run plainly, not compiled); a line opens on its ops."""
    return blocks.page(line_map.map_body(run))


def graphs_html(run: CellRun) -> str:
    """Each captured graph: its drawing (SVG) next to its Python code."""
    return blocks.page(_graphs_body(run))


def guards_html(run: CellRun) -> str:
    """Per compile, a table of its guards, and for a recompile the guards that failed."""
    return blocks.page(_guards_body(run))


def breaks_html(run: CellRun) -> str:
    """The cell's source with break lines marked; each break explained; the skipped frames."""
    return blocks.page(_breaks_body(run))


def code_html(run: CellRun) -> str:
    """Per compile, the generated glue, resume functions, guard check and backend code."""
    return blocks.page(_code_body(run))


def timings_html(run: CellRun) -> str:
    """Per compile, milliseconds per phase; the cell's wall time."""
    return blocks.page(_timings_body(run))


# The map of lines first: it answers "what became of my code" for the whole cell at once, and
# each other tab is a closer look at one of its colours.
SECTIONS: tuple[tuple[str, Callable[[CellRun], str]], ...] = (
    ("Lines", lines_html),
    ("Graphs", graphs_html),
    ("Guards", guards_html),
    ("Breaks", breaks_html),
    ("Kernels", kernels_tab.kernels_html),
    ("Code", code_html),
    ("Timings", timings_html),
)  # the widget's tabs and the static page's sections, in order


def note_html(text: str) -> str:
    """A note on top of the report (a preview's options)."""
    return blocks.page(f'<div class="tc-note tc-preview">{escape(text)}</div>')


def cell_error_html(run: CellRun) -> str:
    """The ``tc.Unsupported`` the cell raised, pinned to its line ("" if none): the widget shows
    it on top, in place of an output of its own."""
    if not isinstance(run.error, Unsupported):
        return ""
    return blocks.page(_pinned_error_body(run.error.record, run.error_source or run.source))


def static_html(run: CellRun, pages: Sequence[str] | None = None) -> str:
    """Everything in one page of sections, the cell's ``tc.Unsupported`` on top: what a saved
    or nbconvert-ed notebook shows. ``pages``: the sections' HTML already made for ``run`` (a
    widget's tabs), else made here."""
    if pages is None:
        pages = [html(run) for _, html in SECTIONS]
    body = "".join(
        blocks.section(title, page) for (title, _), page in zip(SECTIONS, pages, strict=True)
    )
    error = _pinned_error_body(run.error.record, run.error_source or run.source) \
        if isinstance(run.error, Unsupported) else ""  # fmt: skip
    return blocks.page(f"{summary_html(run)}{error}{body}")


def saved_copy(run: CellRun, pages: Sequence[str] | None = None) -> dict[str, str]:
    """The display bundle of the report's saved copy: an output of its own just above the live
    widget, hidden while the widget shows (`style.SAVED_COPY_CSS`). A saved notebook reopened
    without a kernel, or viewed on GitHub, nbviewer or after nbconvert, has no widget model (Jupyter
    does not save widget state by default): there the copy shows, and the widget's output,
    which could only say "model not found", is hidden."""
    note = ('<div class="tc-note tc-muted">A saved copy of the %%tcompile report: run the cell '
            "for the live widget.</div>")  # fmt: skip
    html = (f'<div class="{SAVED_COPY_CLASS}"><style>{SAVED_COPY_CSS}</style>'
            f"{static_html(run, pages)}{blocks.page(note)}</div>")  # fmt: skip
    return {"text/html": html, "text/plain": text_report(run)}


# -- a tc.Unsupported pinned to its cell line ----------------------------------------------------
def break_error(record: BreakRecord, source: CellSource) -> tuple[str, str]:
    """(html, text) for a ``tc.Unsupported`` raised by the cell, in place of a traceback.

    The text reads like::

        tc.Unsupported: I/O or printing inside the compiled region [io_call]
        call to print()
        Cell In[3], line 4:
           3     y = x * 2
        -> 4     print(y)
        ...
        Try:
          - Move the code out of the compiled region, ...
    """
    text = [f"tc.Unsupported: {record.kind.title} [{record.kind.id}]", record.explanation]
    loc = _cell_frame(record, source)
    if loc is not None:
        text.append(f"{facts.where(loc.filename, loc.lineno, source)}:")
        for n, line in _excerpt(source, loc.lineno):
            text.append(f"{'->' if n == loc.lineno else '  '} {n:>3} {line}".rstrip())
    if record.stack:
        text.append("User code (innermost last):" if len(record.stack) > 1 else "User code:")
        text += ["  " + _frame_text(f, source).replace("\n", "\n  ") for f in record.stack]
    text += ["Try:", *(f"  - {hint}" for hint in _hints(record))]
    return blocks.page(_pinned_error_body(record, source)), "\n".join(text)


def _pinned_error_body(record: BreakRecord, source: CellSource) -> str:
    loc = _cell_frame(record, source)
    excerpt = ""
    if loc is not None:
        marks = {loc.lineno: [_Mark("break", record.kind.title)]}
        excerpt = _listing(_excerpt(source, loc.lineno), marks)
    return (
        f'<div class="tc-error tc-pinned-error">'
        f'<div class="tc-title">tc.Unsupported: {escape(record.kind.title)} '
        f'<span class="tc-kind-id">[{escape(record.kind.id)}]</span></div>'
        f"<div>{escape(record.explanation)}</div>{excerpt}{_chain_html(record, source)}"
        f"<div>Try:</div>{blocks.bullets(_hints(record))}</div>"
    )


def _excerpt(source: CellSource, lineno: int) -> list[tuple[int, str]]:
    return [(n, t) for n, t in source.lines() if abs(n - lineno) <= EXCERPT_CONTEXT]


# -- plain text ------------------------------------------------------------------------------------
def text_report(run: CellRun) -> str:
    """A readable plain-text summary for terminal IPython and nbconvert to text."""
    lines = [f"tcompile: {summary(run)}"]
    for _, title, graph in facts.shown_graphs(run):
        conds = sum(isinstance(n.target, Cond) for n in graph.nodes)
        branches = f" ({blocks.plural(conds, 'cond node')}: a branch on data)" if conds else ""
        lines.append(f"  graph {title}: {blocks.plural(graph.op_count(), 'op')}{branches}")
    for report in kernels_tab.compiled_reports(run):
        name = f"{report.function} {report.compile_id}"
        lines.append(
            f"  kernels {name} ({report.compiled.backend}): {kernels_tab.kernel_counts(report.compiled)}"
        )
    for record in facts.unique_breaks(run):
        loc = _break_loc(record, run.source)
        where = facts.where(loc.filename, loc.lineno, run.source) if loc else "unknown location"
        lines.append(f"  graph break at {where} [{record.kind.id}]: {record.reason}")
        if loc and _source_line(loc, run.source):
            lines.append(f"      {_source_line(loc, run.source)}")
        lines += [f"      Try: {hint}" for hint in _cell_hints(record)]
    for report in facts.skipped(run):
        where = facts.where(report.filename, report.firstlineno, run.source)
        lines.append(f"  skipped {report.function} ({where}): {report.eager_reason}")
    for loop in facts.plain_loops(run):
        where = facts.where(loop.filename, loop.lineno, run.source)
        lines.append(f"  loop at {where} runs as plain Python: {loop.reason}")
    for report in run.reports:
        for reason in report.recompile_reasons:
            lines.append(f"  recompiled {report.function} {report.compile_id}: {reason}")
    if isinstance(run.error, Unsupported):
        lines.append(break_error(run.error.record, run.error_source or run.source)[1])
    elif run.error is not None:
        first = next(iter(str(run.error).splitlines()), "")
        lines.append(f"  error: {type(run.error).__name__}: {first}")
    return "\n".join(lines)
