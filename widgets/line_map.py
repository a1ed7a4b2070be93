"""The Lines tab: every line of a cell marked by what became of it, as ``%%cython -a`` marks
each line by the C it became. `line_map` classifies the lines of a `CellRun`; `map_body`
renders them as a listing whose lines open (``<details>``: no JavaScript) on their graph code.

A line is in a graph (the ops it gave each graph), in a loop node, a graph break, Python with
no graph op in a traced function (glue between graphs, or values the trace folded away), in
a skipped frame, in a loop run as plain Python, or not compiled (module code, definitions).
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from html import escape

from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.node import Node
from tcompile.tracer.report import EAGER, ERROR, GRAPH

from .blocks import plural
from .facts import in_cell, plain_loops, shown_graphs, skipped, unique_breaks, where
from .model import CellRun, CellSource

OPS_SHOWN = 20  # the ops listed under one line; the rest are counted
NOTE_CHARS = 110  # a row's note is cut here; its full text is the row's tooltip and details
# kind -> (legend text, CSS classes, mark): a line shows the first of its kinds in this order
KINDS = {
    "break": ("graph break", "tc-break-line", "->"),
    "plain": ("loop run as plain Python", "tc-plain-line", ""),
    "loop": ("in a loop node", "tc-graph-line tc-loop-line", "\u21bb"),  # the loop arrow
    "graph": ("in a graph", "tc-graph-line", ""),
    "skip": ("skipped frame: ran eagerly", "tc-skip-line", ""),
    "glue": ("Python, no graph op: between graphs, or folded", "tc-plain-line tc-glue-line", ""),
    "none": ("not compiled: module code, definitions", "", ""),
}


@dataclass
class Ops:
    """The ops one line gave one graph (or one graph's loop nodes): ``nodes`` are the line's
    own; ``inlined`` counts ops of the calls it makes, inlined from lines of their own."""

    graph: str  # "graph 1 of f", "loop node of graph 1 of f"
    title: str  # the graph's title in the Graphs tab: "f (resume at line 12) [1/0]"
    nodes: list[Node] = field(default_factory=list)
    inlined: int = 0


@dataclass
class Line:
    """One line of the cell: its kinds (`KINDS`), notes, ops by graph and what details it has."""

    lineno: int
    text: str
    kinds: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    ops: dict[str, Ops] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)  # plain text shown when the line opens
    code: bool = True  # False: blank, a comment, a docstring

    @property
    def kind(self) -> str:
        return next((k for k in KINDS if k in self.kinds), "none")

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def ops_of(self, graph: str, title: str) -> Ops:
        return self.ops.setdefault(graph, Ops(graph, title))


@dataclass
class LineMap:
    """Every line of the cell, by number; the calls into other files; whether it parsed (the
    extents of functions and loops come from its syntax tree)."""

    lines: dict[int, Line]
    others: list[str]
    parsed: bool


# -- the cell's shape, from its syntax tree -------------------------------------------------------
@dataclass
class _Function:
    name: str
    first: int  # its first decorator's line, or its ``def`` line: what its code object says
    body: range  # the lines of its body (a lambda: its lines)


@dataclass
class _Shape:
    functions: list[_Function] = field(default_factory=list)
    loops: dict[int, range] = field(default_factory=dict)  # header line -> the loop's lines
    statement: dict[int, int] = field(default_factory=dict)  # continuation line -> first line
    quiet: set[int] = field(default_factory=set)  # docstring lines
    parsed: bool = False

    def function_of(self, lineno: int) -> _Function | None:
        """The innermost function whose body holds the line."""
        holding = [f for f in self.functions if lineno in f.body]
        return min(holding, key=lambda f: len(f.body)) if holding else None

    def loops_at(self, lineno: int, headers) -> list[int]:
        """The headers among ``headers`` of the loops holding the line, outermost first."""
        return sorted(h for h in headers if lineno in self.loops.get(h, ()))


def _shape(source: CellSource) -> _Shape:
    tree = _parse(source.text)
    shape = _Shape()
    if tree is None:
        return shape
    shape.parsed = True
    ast.increment_lineno(tree, source.first_line - 1)
    _walk(tree, shape, "")
    return shape


def _parse(text: str) -> ast.Module | None:
    """The cell's tree; lines of IPython syntax (``%time f(x)``, ``!ls``) read as ``pass``."""
    try:
        return ast.parse(text)
    except SyntaxError:
        pass
    lines = [
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip()[:1] in ("%", "!") else line
        for line in text.splitlines()
    ]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _walk(node: ast.AST, shape: _Shape, prefix: str) -> None:
    """Record functions (by qualified name, as their code objects say), loops, statements'
    continuation lines and docstrings; ``prefix``: the enclosing qualified name and a dot."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and _is_docstring(body[0]):
        shape.quiet.update(range(body[0].lineno, body[0].end_lineno + 1))
    in_function = prefix.endswith("<locals>.")
    for child in ast.iter_child_nodes(node):
        inner = prefix
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([d.lineno for d in child.decorator_list] + [child.lineno])
            body = range(child.body[0].lineno, child.end_lineno + 1)
            shape.functions.append(_Function(f"{prefix}{child.name}", first, body))
            inner = f"{prefix}{child.name}.<locals>."
        elif isinstance(child, ast.ClassDef):
            inner = f"{prefix}{child.name}."
        elif isinstance(child, ast.Lambda) and not in_function:  # in a def: its line is the def's
            lines = range(child.lineno, child.end_lineno + 1)
            shape.functions.append(_Function(f"{prefix}<lambda>", child.lineno, lines))
        if isinstance(child, (ast.For, ast.AsyncFor, ast.While)):
            shape.loops[child.lineno] = range(child.lineno, child.end_lineno + 1)
        if isinstance(child, ast.stmt):
            first, last = _statement_head(child)
            shape.statement.update((n, first) for n in range(first + 1, last + 1))
        _walk(child, shape, inner)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)  # fmt: skip


def _statement_head(node: ast.stmt) -> tuple[int, int]:
    """A simple statement's lines; a compound one's header lines (decorators included)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body:
        first = min([d.lineno for d in getattr(node, "decorator_list", ())] + [node.lineno])
        return first, max(body[0].lineno - 1, node.lineno)
    return node.lineno, node.end_lineno


# -- classifying ---------------------------------------------------------------------------------
def line_map(run: CellRun) -> LineMap:
    """What became of each line of the run's cell (see the module's docstring).

    Example::

        lines = line_map(run).lines
        lines[4].kind, lines[4].ops["graph 1 of f"].nodes   # ("graph", [%sin, %y])
    """
    return _Classifier(run).classify()


@dataclass(frozen=True)
class _Loc:  # a place shaped as a FrameLoc, for a report's function
    filename: str
    lineno: int
    funcname: str


class _Classifier:
    """One pass over a run's reports, marking the lines they name."""

    def __init__(self, run: CellRun):
        self.run, self.source = run, run.source
        self.shape = _shape(self.source)
        self.lines = {n: Line(n, text) for n, text in self.source.lines()}
        for line in self.lines.values():
            text = line.text.strip()
            line.code = bool(text) and not text.startswith("#") \
                and line.lineno not in self.shape.quiet  # fmt: skip
        self.others = _Others(self.source)
        self.graphs: dict[tuple[str, int], list[str]] = {}  # (file, first line) -> graph names
        self.traced: set[int] = set()  # lines a trace went through: their functions were traced

    def classify(self) -> LineMap:
        for report, title, graph in shown_graphs(self.run):
            mine = self.graphs.setdefault((report.filename, report.firstlineno), [])
            name = f"graph {len(mine) + 1} of {report.function.split(' (')[0]}"
            mine.append(name)
            headers = [loop.lineno for loop in report.loops if loop.captured]
            self.add_graph(graph, name, title, headers, depth=0)
        self.mark_loops()
        self.mark_breaks()
        self.mark_skipped()
        self.mark_plain_loops()
        _continue_statements(self.lines, self.shape)
        self.mark_functions()
        for report in self.run.reports:  # compiles of functions in other files
            if report.filename != self.source.filename and report.outcome == GRAPH:
                shown = sum(1 for g in report.graphs if g.op_count())
                loc = _Loc(report.filename, report.firstlineno, report.function.split(" (")[0])
                self.others.note(loc, f"compiled on its own: {plural(shown, 'graph')}")
        return LineMap(self.lines, self.others.listed(), self.shape.parsed)

    def mark(self, span: range, kind: str) -> None:
        for n in span:
            if n in self.lines and self.lines[n].code:
                self.lines[n].kinds.add(kind)

    def add_graph(self, graph: Graph, name: str, title: str, headers: list[int],
                  depth: int) -> None:  # fmt: skip
        """Each op of ``graph`` under its line: its innermost frame in the cell (a call into
        another file's function: the line of the call); outer cell frames count it as inlined.
        A loop node (and what reads its results) goes to its loop's header: of the captured
        loops holding its line, the one as deep as the graph is in loop bodies."""
        kind = "loop" if depth else "graph"
        for node in graph.nodes:
            if node.op in ("input", "output"):
                continue
            cell_lines = [loc.lineno for loc in node.stack if in_cell(loc, self.source)]
            if len(cell_lines) < len(node.stack):
                self.others.add_op(node, name)
            if node.op in LOOP_OPS:
                body = f"loop node of {name.removeprefix('loop node of ')}"
                self.add_graph(node.target.body, body, title, headers, depth + 1)
            if not cell_lines:
                continue
            own = cell_lines[-1]
            if _of_loop_node(node):
                holding = self.shape.loops_at(own, headers)
                own = holding[min(depth, len(holding) - 1)] if holding else own
            self.traced.update(cell_lines)
            for n in dict.fromkeys([*cell_lines[:-1], own]):
                line = self.lines.get(n)
                if line is None:
                    continue
                line.kinds.add(kind)
                ops = line.ops_of(name, title)
                if n == own:
                    ops.nodes.append(node)
                else:
                    ops.inlined += 1

    def mark_loops(self) -> None:
        """A loop node's header and body lines are "loop"; an unrolled loop's header says why."""
        for report in self.run.reports:
            if report.outcome != GRAPH or report.filename != self.source.filename:
                continue
            for loop in report.loops:
                header = self.lines.get(loop.lineno)
                if header is None or loop.plain:
                    continue
                span = self.shape.loops.get(loop.lineno, range(loop.lineno, loop.lineno + 1))
                if not loop.captured:
                    what = "while loop not captured" if loop.kind == "while" else "unrolled"
                    header.note(f"{what}: {_short(loop.reason)}")
                    header.details.append(loop.describe())
                    continue
                graph = next((g for n in span if n in self.lines for g in self.lines[n].ops
                              if g.startswith("loop node of")), "")  # fmt: skip
                self.mark(span, "loop")
                what = "while_loop node" if loop.kind == "while" else "loop node"
                of = f" of {graph.removeprefix('loop node of ')}" if graph else ""
                trips = f", {loop.trip_count} iterations" if loop.kind != "while" else ""
                header.note(f"{what}{of}{trips}, body of {plural(loop.body_ops, 'op')}")

    def mark_breaks(self) -> None:
        for record, reports in unique_breaks(self.run).items():
            cell_lines = [loc.lineno for loc in record.stack if in_cell(loc, self.source)]
            for loc in record.stack:
                if not in_cell(loc, self.source):
                    self.others.note(loc, f"a graph break: {_short(record.explanation)}")
            self.traced.update(cell_lines)
            if not cell_lines or cell_lines[-1] not in self.lines:
                continue
            line = self.lines[cell_lines[-1]]
            line.kinds.add("break")
            raised = " (raised tc.Unsupported)" if any(r.outcome == ERROR for r in reports) else ""
            line.note(f"graph break [{record.kind.id}]: {_short(record.explanation)}{raised}")
            line.details.append(f"{record.kind.title} [{record.kind.id}]: {record.explanation}"
                                f"{raised}. The Breaks tab says what to try.")  # fmt: skip
            for n in cell_lines[:-1]:
                if n in self.lines:
                    self.lines[n].note(f"calls into the graph break at line {cell_lines[-1]}")

    def mark_skipped(self) -> None:
        for report in skipped(self.run):
            if report.filename != self.source.filename:
                loc = _Loc(report.filename, report.firstlineno, report.function)
                self.others.note(loc, "ran eagerly")
                continue
            function = self.function_at(report.firstlineno)
            self.mark(function.body if function else range(report.firstlineno, 0), "skip")
            first = self.lines.get(report.firstlineno)
            if first is not None:
                first.note(f"{report.function} ran eagerly: {_short(report.eager_reason)}")
                first.details.append(f"{report.function} {report.compile_id} ran eagerly: "
                                     f"{report.eager_reason}")  # fmt: skip

    def mark_plain_loops(self) -> None:
        for loop in plain_loops(self.run):
            if loop.filename != self.source.filename:
                continue
            self.mark(self.shape.loops.get(loop.lineno, range(loop.lineno, loop.lineno + 1)),
                      "plain")  # fmt: skip
            if loop.lineno in self.lines:
                line = self.lines[loop.lineno]
                line.note(f"the loop runs as plain Python: {_short(loop.reason)}")
                line.details.append(loop.describe())

    def function_at(self, first: int) -> _Function | None:
        return next((f for f in self.shape.functions if f.first == first), None)

    def mark_functions(self) -> None:
        """Lines of traced functions with no record are glue; a function's first line says
        what became of it."""
        mine = [r for r in self.run.reports if r.filename == self.source.filename]
        compiled = {r.firstlineno for r in mine if r.outcome == GRAPH}
        failed = {r.firstlineno for r in mine if r.outcome == ERROR} - compiled
        eager = {r.firstlineno for r in mine if r.outcome == EAGER} - compiled
        glued = set()  # traced: compiled, or inlined into a graph (its lines on node stacks)
        for function in self.shape.functions:
            inlined = function.first not in failed | eager \
                and any(n in function.body for n in self.traced)  # fmt: skip
            if function.first in compiled or inlined:
                glued.add(id(function))
        for line in self.lines.values():
            function = self.shape.function_of(line.lineno)
            if not line.kinds and line.code and function and id(function) in glued:
                line.kinds.add("glue")
        for function in self.shape.functions:
            first = self.lines.get(function.first)
            if first is None or function.first in eager:  # a skipped frame's line says why
                continue
            graphs = len(self.graphs.get((self.source.filename, function.first), []))
            if function.first in compiled:
                made = plural(graphs, "graph") if graphs else "no graph op of its own"
                first.note(f"{function.name}: compiled, {made}")
            elif function.first in failed:
                first.note(f"{function.name}: its compile raised tc.Unsupported: nothing ran "
                           "compiled")  # fmt: skip
            elif id(function) in glued:
                first.note(f"{function.name}: inlined where it is called")


class _Others:
    """The functions of other files (modules, other cells) the cell's code reached: the ops
    they gave each graph, their breaks, their own compiles."""

    def __init__(self, source: CellSource):
        self.source = source
        self.seen: dict[tuple[str, str], tuple[str, Counter, list[str]]] = {}

    def _entry(self, loc) -> tuple[str, Counter, list[str]]:
        key = (loc.filename, loc.funcname)
        if key not in self.seen:
            self.seen[key] = (where(loc.filename, loc.lineno, self.source), Counter(), [])
        return self.seen[key]

    def add_op(self, node: Node, graph: str) -> None:
        for loc in node.stack:
            if not in_cell(loc, self.source):
                self._entry(loc)[1][graph] += 1

    def note(self, loc, text: str) -> None:
        notes = self._entry(loc)[2]
        if text not in notes:
            notes.append(text)

    def listed(self) -> list[str]:
        """``helper, File "/lib/util.py", line 4: 12 ops in graph 1 of f`` per function."""
        return [f"{fn}, {place}: " + "; ".join([*(f"{plural(n, 'op')} in {g}" for g, n
                                                  in ops.items()), *notes])
                for (_, fn), (place, ops, notes) in self.seen.items()]  # fmt: skip


def _of_loop_node(node: Node) -> bool:
    if node.op in LOOP_OPS:
        return True
    return node.op == "getitem" and isinstance(node.args[0], Node) \
        and node.args[0].op in LOOP_OPS  # fmt: skip


def _continue_statements(lines: dict[int, Line], shape: _Shape) -> None:
    """A statement's line with no record of its own takes its statement's strongest kind."""
    spans: dict[int, list[int]] = {}
    for n, first in shape.statement.items():
        spans.setdefault(first, [first]).append(n)
    for first, span in spans.items():
        kinds = {k for n in span if n in lines for k in lines[n].kinds}
        strongest = next((k for k in KINDS if k in kinds), None)
        for n in span:
            line = lines.get(n)
            if strongest and line is not None and not line.kinds:
                line.kinds.add(strongest)
                line.note(f"part of the statement at line {first}")


def _short(text: str) -> str:
    first = text.split("; ")[0]
    return first if len(first) <= 80 else first[:79] + "…"


# -- rendering -------------------------------------------------------------------------------------
def map_body(run: CellRun) -> str:
    """The map as HTML: a legend, one row per line (a line with ops or details opens on
    them), then the calls into other files."""
    mapped = line_map(run)
    lines = list(mapped.lines.values())
    texts = _statement_texts(lines)
    label = run.source.label_of(run.source.filename)
    chips = "".join(
        f'<span class="tc-lm-chip {classes}">{escape(text)} '
        f"<b>{sum(line.code and line.kind == kind for line in lines)}</b></span>"
        for kind, (text, classes, _) in KINDS.items()
    )
    legend = (f'<div class="tc-lm-legend">{chips}</div><div class="tc-muted">{escape(label)}: '
              "click a line marked + to see the graph code it became (each op's statement, "
              f"as the Graphs tab prints it; the first {OPS_SHOWN} per line).</div>")  # fmt: skip
    if not mapped.parsed:
        legend += ('<div class="tc-note">The cell did not parse as Python: the extents of its '
                   "functions and loops are unknown, and only lines with a record are marked."
                   "</div>")  # fmt: skip
    rows = "".join(_row(line, texts) for line in lines)
    others = ""
    if mapped.others:
        items = "".join(f"<li>{escape(item)}</li>" for item in mapped.others)
        others = f'<div class="tc-title">Calls into other files</div><ul>{items}</ul>'
    return f'{legend}<div class="tc-source tc-lines">{rows}</div>{others}'


def _row(line: Line, texts: dict[int, str]) -> str:
    kind = line.kind if line.code or line.kinds else ""
    _, classes, mark = KINDS.get(kind, ("", "", ""))
    note = "; ".join([*(_ops_note(ops) for ops in line.ops.values()), *line.notes])
    shown_note = note if len(note) <= NOTE_CHARS else note[: NOTE_CHARS - 1] + "…"
    note_html = f'<span class="tc-line-note" title="{escape(note)}">{escape(shown_note)}</span>' \
        if note else ""  # fmt: skip
    head = (
        f'<span class="tc-mark">{escape(mark)}</span>'
        f'<span class="tc-lineno">{line.lineno}</span>{escape(line.text)}{note_html}'
    )
    row = f"tc-lm-row tc-lm-{kind}" if kind else "tc-lm-row"
    if not (line.ops or line.details):
        return f'<div class="{" ".join(["tc-line", row, classes]).rstrip()}">{head}</div>'
    return (f'<details class="{row}"><summary class="{f"tc-line {classes}".rstrip()}">'
            f"{head}</summary>{_opened(line, texts)}</details>")  # fmt: skip


def _ops_note(ops: Ops) -> str:
    inlined = f" (+{ops.inlined} inlined from calls)" if ops.inlined else ""
    return f"{ops.graph}: {plural(len(ops.nodes), 'op')}{inlined}"


def _opened(line: Line, texts: dict[int, str]) -> str:
    """What an opened line shows: its details, then its ops by graph as their code lines."""
    parts = [f"<div>{escape(text)}</div>" for text in line.details]
    left = OPS_SHOWN
    for ops in line.ops.values():
        head = f"{ops.graph} · {ops.title} · {plural(len(ops.nodes), 'op')}"
        if ops.inlined:
            head += f", and {ops.inlined} inlined from the calls it makes (see their lines)"
        shown = ops.nodes[: max(left, 0)]
        left -= len(shown)
        code = [texts.get(id(node), node.name) for node in shown]
        if len(ops.nodes) > len(shown):
            code.append(f"# … {len(ops.nodes) - len(shown)} more")
        body = f'<pre class="tc-code">{escape(chr(10).join(code))}</pre>' if code else ""
        parts.append(f'<div class="tc-lm-graph-h">{escape(head)}</div>{body}')
    return f'<div class="tc-lm-ops">{"".join(parts)}</div>'


def _statement_texts(lines: list[Line]) -> dict[int, str]:
    """id(node) -> its statement as its graph prints it, for the nodes the rows list: each
    graph is printed up to its last listed node only (names are bound in the graph's order)."""
    wanted: dict[Graph, set[int]] = {}
    for line in lines:
        left = OPS_SHOWN
        for ops in line.ops.values():
            for node in ops.nodes[: max(left, 0)]:
                wanted.setdefault(node.graph, set()).add(id(node))
            left -= len(ops.nodes)
    texts: dict[int, str] = {}
    for graph, ids in wanted.items():
        found = 0
        for node, text in graph.statements():
            if id(node) in ids:
                texts[id(node)] = text
                found += 1
                if found == len(ids):
                    break
    return texts
