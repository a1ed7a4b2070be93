"""The Lines tab (`widgets.line_map`): every line of a real ``%%tcompile`` cell, run through
the magic in an IPython shell, marked by what became of it, read back from the rendered HTML:
its row's kind, its note, and the graph code it opens on."""

from __future__ import annotations

import html
import os
import re
import sys
import textwrap
import time
from dataclasses import dataclass

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from widget_cells import run_cell

from tcompile.widgets import CellWidget, line_map, render
from tcompile.widgets.model import CellOptions

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
from widget_render import SERIES_CELL  # noqa: E402


@pytest.fixture(autouse=True)
def fresh(shell):
    shell.display_pub = CapturingDisplayPublisher()
    magics().defaults = CellOptions()
    shell.run_cell("import numpy as np; import tcompile as tc")


def magics():
    return InteractiveShell.instance().magics_manager.registry["TcompileMagics"]


@dataclass
class Row:
    """One line of the map as the HTML shows it."""

    lineno: int
    kind: str  # "graph", "loop", "break", "glue", "skip", "plain", "none"; "" for a blank line
    text: str
    note: str
    opened: str  # what the line opens on (its <details>), as text; "" if it does not open


ROW = re.compile(
    r'<(div|details) class="(?:tc-line )?tc-lm-row(?: tc-lm-(\w+))?[^"]*">(.*?)</\1>', re.S
)


def rows(page: str) -> dict[str, Row]:
    """The map's rows by their source line's text (stripped)."""
    found = {}
    for tag, kind, inner in ROW.findall(page):
        lineno = int(re.search(r'<span class="tc-lineno">(\d+)</span>', inner).group(1))
        head, _, opened = inner.partition("</summary>") if tag == "details" else (inner, "", "")
        text = re.search(r'<span class="tc-lineno">\d+</span>(.*?)(?:<span|$)', head, re.S)
        note = re.search(r'<span class="tc-line-note" title="([^"]*)"', head)
        row = Row(lineno, kind or "", html.unescape(text.group(1)),
                  html.unescape(note.group(1)) if note else "",
                  html.unescape(re.sub(r"<[^>]+>", "\n", opened)))  # fmt: skip
        found.setdefault(row.text.strip(), row)
    return found


def map_of(shell, body: str, flags: str = ""):
    """Run ``body`` as a ``%%tcompile`` cell; (its run, its Lines tab's rows, the page)."""
    text = textwrap.dedent(body).strip("\n") + "\n"
    result = shell.run_cell(f"%%tcompile {flags}\n{text}", store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    run = magics().last_widget.cell_run
    page = render.lines_html(run)
    return run, rows(page), page


def kinds(found: dict[str, Row]) -> dict[str, str]:
    return {text: row.kind for text, row in found.items() if text}


BREAK_CELL = """
def f(x):
    y = np.sin(x) + 1
    z = y * 2
    print("between")
    w = np.cos(z)
    return w.sum()

total = f(np.ones(4))
"""


def test_a_print_between_two_graphs_marks_the_lines_before_and_after_it(shell, capsys):
    run, found, page = map_of(shell, BREAK_CELL)
    assert kinds(found) == {
        "def f(x):": "none",
        "y = np.sin(x) + 1": "graph",
        "z = y * 2": "graph",
        'print("between")': "break",
        "w = np.cos(z)": "graph",
        "return w.sum()": "graph",
        "total = f(np.ones(4))": "none",
    }
    assert found["y = np.sin(x) + 1"].note == "graph 1 of f: 2 ops"
    assert found["z = y * 2"].note == "graph 1 of f: 1 op"
    assert found["w = np.cos(z)"].note == "graph 2 of f: 1 op"
    assert found["return w.sum()"].note == "graph 2 of f: 1 op"
    assert found['print("between")'].note == "graph break [io_call]: call to print()"
    assert found["def f(x):"].note == "f: compiled, 2 graphs"
    assert found['print("between")'].lineno == 5  # cell lines: the magic's is line 1
    # the break's line opens on its reason; the break keeps its orange
    assert "I/O or printing inside the compiled region [io_call]: call to print()" in \
        found['print("between")'].opened  # fmt: skip
    assert 'class="tc-line tc-break-line"><span class="tc-mark">-&gt;</span>' in page


def test_clicking_a_line_opens_on_the_graph_code_it_became(shell):
    run, found, page = map_of(shell, BREAK_CELL)
    opened = found["y = np.sin(x) + 1"].opened
    graph_title = f"f {run.reports[0].compile_id}"
    assert f"graph 1 of f · {graph_title} · 2 ops" in opened
    code = [line.split("#")[0].strip() for line in opened.splitlines() if "# f64[4]" in line]
    assert code == ["sin = np.sin(x)", "y = sin + 1"]  # as the graph prints them
    graph = next(g for r in run.reports for g in r.graphs if g.op_count())
    assert all(line in str(graph) for line in opened.splitlines() if "# f64[4]" in line)
    assert '<details class="tc-lm-row tc-lm-graph"><summary' in page  # no JavaScript
    # a line with nothing to show does not open
    assert found["total = f(np.ones(4))"].opened == "" and found["def f(x):"].opened == ""


def test_module_code_and_definitions_are_not_compiled_and_blank_lines_are_unmarked(shell):
    run, found, page = map_of(
        shell,
        '''
        scale = 3  # a module-level line

        def g(x):
            """Twice x, cubed."""
            # a comment
            return (x * 2) ** scale

        g(np.arange(3.0))
        ''',
    )
    assert kinds(found) == {
        "scale = 3  # a module-level line": "none",
        "def g(x):": "none",
        '"""Twice x, cubed."""': "",
        "# a comment": "",
        "return (x * 2) ** scale": "graph",
        "g(np.arange(3.0))": "none",
    }
    assert found[""].kind == "" and len(re.findall(ROW, page)) == 8  # a row per line
    legend = re.search(r'<div class="tc-lm-legend">(.*?)</div>', page).group(1)
    counts = dict(re.findall(r"([^>]+) <b>(\d+)</b>", html.unescape(legend)))
    assert counts["in a graph"] == "1" and counts["not compiled: module code, definitions"] == "3"
    assert "Cell In[" in page and "click a line marked + to see the graph code" in page


def test_a_loop_node_marks_its_line_and_body_and_opens_on_the_body(shell):
    run, found, _ = map_of(
        shell,
        """
        def smooth(u, steps):
            u = u * 1.0
            for t in range(steps):
                u = u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
                u[0] = 0.0
            return u.sum()

        smooth(np.linspace(0.0, 1.0, 8), 40)
        """,
    )
    assert kinds(found) == {
        "def smooth(u, steps):": "none",
        "u = u * 1.0": "graph",
        "for t in range(steps):": "loop",
        "u = u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))": "loop",
        "u[0] = 0.0": "loop",
        "return u.sum()": "graph",
        "smooth(np.linspace(0.0, 1.0, 8), 40)": "none",
    }
    header = found["for t in range(steps):"]
    assert "loop node of graph 1 of smooth, 40 iterations, body of 8 ops" in header.note
    body = found["u = u + 0.25 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))"]
    assert body.note == "loop node of graph 1 of smooth: 7 ops"
    assert "np.roll(u, shift=1)" in body.opened and "np.roll(u, shift=-1)" in body.opened
    assert found["u[0] = 0.0"].note == "loop node of graph 1 of smooth: 1 op"


def test_nested_loop_nodes_each_have_their_own_header(shell):
    _, found, _ = map_of(
        shell,
        """
        def nested(a):
            for i in range(3):
                for j in range(4):
                    a = a + 1.0
            return a

        nested(np.zeros(2))
        """,
    )
    outer, inner = found["for i in range(3):"], found["for j in range(4):"]
    assert outer.kind == inner.kind == found["a = a + 1.0"].kind == "loop"
    # the outer loop node (and the read of its result) is the outer header's op
    assert outer.note.startswith("graph 1 of nested: 2 ops; loop node of graph 1 of nested, 3 ")
    assert "_loop_" in outer.opened
    assert inner.note.endswith("loop node of graph 1 of nested, 4 iterations, body of 1 op")
    assert found["return a"].kind == "glue"


def test_a_loop_lines_mark_is_the_loop_arrow(shell):
    _, _, page = map_of(
        shell,
        """
        def twice(u):
            for _ in range(5):
                u = u * 2.0
            return u
        twice(np.ones(3))
        """,
    )
    assert '<span class="tc-mark">\u21bb</span><span class="tc-lineno">3</span>' in page
    assert "tc-graph-line tc-loop-line" in page


def test_a_skipped_frame_is_yellow_and_its_break_stays_a_break(shell, capsys):
    run, found, _ = map_of(
        shell,
        """
        def guarded(x):
            try:
                x = x + 1
                print("in a try block")
            finally:
                x = x * 2
            return x

        guarded(np.ones(3))
        """,
    )
    assert kinds(found) == {
        "def guarded(x):": "none",
        "try:": "skip",
        "x = x + 1": "skip",
        'print("in a try block")': "break",
        "finally:": "skip",
        "x = x * 2": "skip",
        "return x": "skip",
        "guarded(np.ones(3))": "none",
    }
    assert found["def guarded(x):"].note.startswith("guarded ran eagerly: code inside try/")
    assert "[try_block]" in found['print("in a try block")'].note


@pytest.mark.usefixtures("branches_break")  # a split loop: its branch breaks
def test_a_loop_run_as_plain_python_is_blue_with_its_reason(shell):
    run, found, _ = map_of(
        shell,
        """
        def count_positive(x):
            n = 0
            for v in x:
                if v > 0:
                    n += 1
            return n

        count_positive(np.linspace(-1.0, 1.0, 2000))
        """,
        flags="--backend eager",
    )
    assert "1 loop run as plain Python" in render.summary(run)
    assert kinds(found) == {
        "def count_positive(x):": "none",
        "n = 0": "glue",  # Python outside any graph: the glue runs it, or the trace folds it
        "for v in x:": "plain",
        "if v > 0:": "break",
        "n += 1": "plain",
        "return n": "glue",
        "count_positive(np.linspace(-1.0, 1.0, 2000))": "none",
    }
    assert found["for v in x:"].note.startswith("the loop runs as plain Python: its compiled body")


def test_an_inlined_helper_gives_its_own_lines_the_ops_and_the_call_line_counts_them(shell):
    run, found, _ = map_of(
        shell,
        """
        def helper(x):
            return np.exp(x) - 1

        def f(x):
            y = helper(x) * 2
            return y

        f(np.ones(3))
        """,
    )
    assert found["return np.exp(x) - 1"].kind == "graph"
    assert found["return np.exp(x) - 1"].note == "graph 1 of f: 2 ops"
    assert found["y = helper(x) * 2"].note == "graph 1 of f: 1 op (+2 inlined from calls)"
    assert found["def helper(x):"].note == "helper: inlined where it is called"
    assert found["return y"].kind == "glue"  # no op: what the graph returns


def test_calls_into_other_files_are_listed_not_mapped(shell, tmp_path, monkeypatch):
    (tmp_path / "lm_helpers.py").write_text(
        "import numpy as np\n\ndef norm(x):\n    return np.sqrt((x * x).sum())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    run, found, page = map_of(
        shell,
        """
        from lm_helpers import norm

        def unit(x):
            return x / norm(x)

        unit(np.arange(1.0, 4.0))
        """,
    )
    assert found["return x / norm(x)"].note == "graph 1 of unit: 4 ops"
    listed = html.unescape(page.split("Calls into other files", 1)[1])
    assert f'norm, File "{tmp_path / "lm_helpers.py"}", line 4: 3 ops in graph 1 of unit' in listed


def test_a_9000_op_graphs_map_is_built_in_well_under_its_budget():
    run = run_cell(SERIES_CELL.format(terms=4500))  # 9,001 ops (tests/test_widgets_large_graphs)
    start = time.perf_counter()
    page = render.lines_html(run)
    took = time.perf_counter() - start
    print(f"Lines tab of a 9,001-op graph: {took * 1e3:.1f} ms, {len(page)} characters")
    assert took < 2.0  # about 20 ms; generous: timing tests are flaky
    found = rows(page)
    add = found["s = s + x * k"]
    assert add.kind == "graph" and add.note == "graph 1 of series: 4500 ops"
    listed = [line for line in add.opened.splitlines() if "in series" in line]
    assert len(listed) == line_map.OPS_SHOWN and "# … 4480 more" in add.opened
    assert found["for k in range(4500):"].kind == "glue"  # unrolled, and says why
    assert found["for k in range(4500):"].note.startswith("unrolled: the body uses the loop index")
    assert len(page) < 40_000
    widget = CellWidget(run)  # the widget's tab is the same page
    assert widget.tabs.children[widget.tabs.titles.index("Lines")].value == page


def test_the_saved_notebooks_copy_has_the_map(shell):
    run, _, page = map_of(shell, BREAK_CELL)
    static = render.static_html(run)
    assert '<div class="tc-h">Lines</div>' in static and line_map.map_body(run) in static
    assert static.index("Lines</div>") < static.index("Graphs</div>")


def test_a_cell_with_ipython_syntax_still_maps_its_functions(shell, capsys):
    _, found, _ = map_of(
        shell,
        """
        def f(x):
            return np.sin(x)
        %time f(np.ones(2))
        """,
    )
    assert found["return np.sin(x)"].kind == "graph" and found["%time f(np.ones(2))"].kind == "none"
