"""The tutorial notebooks (``notebooks/*.ipynb``) run clean, top to bottom, in a kernel of the
Python running the tests, and show what their documents describe.

Each notebook is executed once per session with nbclient (widget state stored), as
``python -m tcompile.demo`` runs the quick start. Only a cell tagged ``raises-exception`` may
raise, and each such cell must raise. The key cells (found by cell id) are then checked against
what the seed document says happens: counts from the widget's summary line, the pinned
``tc.Unsupported`` and the line it marks, the hints it gives, printed output and values.
"""

from __future__ import annotations

import html
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat
import pytest

from tcompile import demo
from tcompile.widgets.style import SAVED_COPY_CLASS

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(path.name for path in NOTEBOOK_DIR.glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
RAISES = "raises-exception"

_executed: dict[str, object] = {}  # notebook name -> executed notebook, or the error it raised


def executed(name: str):
    """The notebook run once per session (a failed run is remembered, not repeated)."""
    if name not in _executed:
        try:
            _executed[name] = demo.execute_notebook(NOTEBOOK_DIR / name)
        except Exception as error:  # CellExecutionError, a dead kernel...
            _executed[name] = error
    result = _executed[name]
    if isinstance(result, Exception):
        pytest.fail(f"{name} did not run to the end:\n{result}", pytrace=False)
    return result


def code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def tagged(cell, tag: str = RAISES) -> bool:
    return tag in cell.metadata.get("tags", [])


def is_tcompile_cell(cell) -> bool:
    return cell.source.startswith("%%tcompile") and "--no-widget" not in cell.source.split("\n")[0]


def widgets(cell) -> list[dict]:
    return [o.data for o in cell.outputs if WIDGET_VIEW in o.get("data", {})]


def saved_copies(cell) -> list[dict]:
    """The widget's saved copy: an output of its own, just above the widget's."""
    return [
        o.data for o in cell.outputs if SAVED_COPY_CLASS in o.get("data", {}).get("text/html", "")
    ]


def pinned_errors(cell) -> list[dict]:
    """The readable tc.Unsupported the extension showed for the cell: on top of the cell's
    widget (its static copy and text too), else as an output of its own."""
    return [
        o.data
        for o in cell.outputs
        if o.output_type == "display_data" and "tc-pinned-error" in o.data.get("text/html", "")
    ]


def stream(cell, name: str = "stdout") -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == name)


def value(cell) -> str | None:
    results = [o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result"]
    return results[-1] if results else None


def errors(cell) -> list:
    return [o for o in cell.outputs if o.output_type == "error"]


# -- every notebook ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_without_outputs_for_the_python3_kernel(name):
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in code_cells(nb):
        assert cell.outputs == [] and cell.execution_count is None, f"{name}: {cell.id} has output"
    ids = [cell.id for cell in nb.cells]
    assert len(ids) == len(set(ids)), f"{name}: duplicate cell ids"


def test_every_notebook_is_checked_below():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"
    assert set(NOTEBOOKS) == set(EXPECTED), "give each notebook its expectations in EXPECTED"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_clean_in_this_python(name):
    nb = executed(name)
    # the kernel was this interpreter, not whatever "python3" kernelspec is installed
    assert nb.metadata.language_info.version == platform.python_version()
    state = nb.metadata.widgets[WIDGET_STATE]["state"]
    for cell in code_cells(nb):
        where = f"{name}, cell {cell.id!r}"
        if tagged(cell):
            assert errors(cell), f"{where} is tagged {RAISES!r} but raised nothing"
        else:
            assert not errors(cell), f"{where} raised {errors(cell)[0].ename}"
        assert not stream(cell, "stderr"), f"{where} wrote to stderr:\n{stream(cell, 'stderr')}"
        if is_tcompile_cell(cell):
            (bundle,) = widgets(cell)  # one widget per %%tcompile cell
            assert bundle[WIDGET_VIEW]["model_id"] in state, f"{where}: widget state not stored"
            (saved,) = saved_copies(cell)
            assert cell.outputs.index(next(o for o in cell.outputs if o.get("data") is bundle)) \
                == cell.outputs.index(next(o for o in cell.outputs if o.get("data") is saved)) + 1, \
                f"{where}: the saved copy is not just above the widget"  # fmt: skip
            assert saved["text/plain"].startswith("tcompile: "), where
            assert 'class="tc-report"' in saved["text/html"], where
        else:
            assert not widgets(cell) and not saved_copies(cell), (
                f"{where}: a widget for a plain cell"
            )


# -- what each document describes, cell by cell -------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """What one cell shows. Counts are read from the widget's summary line (an int, or a range
    where the document only says "at least"); ``marked`` is the source line the pinned
    ``tc.Unsupported`` marks with ``->``."""

    functions: int | range | None = None
    graphs: int | range | None = None
    breaks: int | range | None = None
    skipped: int | range | None = None
    raises: str | None = None  # the error's class name; None: the cell must not raise
    marked: str | None = None
    hints: tuple[str, ...] = ()  # in the pinned error's text
    shows: tuple[str, ...] = ()  # in the widget's text report
    hides: tuple[str, ...] = ()  # not in the widget's text report
    prints: tuple[str, ...] = ()  # in the cell's stdout
    value: str | None = None  # the cell's Out (text/plain), exactly


def at_least(n: int) -> range:
    return range(n, 1000)


SUMMARY = {
    "functions": r"(\d+) functions? compiled",
    "graphs": r"(\d+) graphs? ·",
    "breaks": r"(\d+) graph breaks?\b",
    "skipped": r"(\d+) frames? skipped",
}

UNSUPPORTED = Expect(raises="Unsupported", functions=0, graphs=0, breaks=1)


def unsupported(marked: str, *hints: str, **more) -> Expect:
    """A fullgraph / error_on_graph_break cell that raises at ``marked``."""
    return replace(UNSUPPORTED, marked=marked, hints=hints, **more)


EXPECTED: dict[str, dict[str, Expect]] = {
    "00_quickstart.ipynb": {
        "softmax": Expect(
            functions=1, graphs=1, breaks=0, skipped=0, value="array([1., 1., 1., 1.])"
        ),
        "graph-break": Expect(
            functions=1,
            graphs=2,
            breaks=1,
            skipped=0,
            shows=("[io_call]",),
            prints=("mean of the first row:",),
        ),
        "fullgraph": unsupported(
            'print("mean of the first row:", mean[0, 0])',
            "Move the code out of the compiled region",
        ),
        "fullgraph-fixed": Expect(
            functions=1, graphs=1, breaks=0, prints=("mean of the first row",)
        ),
        "branch": Expect(functions=1, graphs=1, breaks=0),  # a cond node
        "explain": Expect(prints=("Graph Count: 2", "Graph Break Count: 1", "columns centered")),
        "explain-counts": Expect(value="(2, 1)"),
    },
    "01_skipped_functions.ipynb": {
        # fn is skipped; inner1 and inner2 are compiled when the eager fn calls them
        "skip-frame": Expect(
            functions=2, graphs=2, skipped=1, shows=("skipped fn ", "graph inner1", "graph inner2")
        ),
        # the loop runs split: fn's graph, then its body's, compiled once for every iteration
        "loop-break": Expect(
            graphs=at_least(2), breaks=at_least(1), skipped=0, shows=("fn (loop body at line 3)",)
        ),
        "loop-unrolled": Expect(graphs=at_least(2), breaks=at_least(1), skipped=0),
        "ctx-break": Expect(graphs=0, breaks=1, skipped=1, shows=("[context_manager]",)),
        "ctx-moved": Expect(functions=1, graphs=2, breaks=1, skipped=0),
        "ctx-supported": Expect(functions=1, graphs=2, breaks=1, skipped=0),
        "try-break": Expect(graphs=0, breaks=1, skipped=1, shows=("[try_block]",)),
        "try-moved": Expect(functions=1, graphs=2, breaks=1, skipped=0),
        "isolate": Expect(
            graphs=at_least(1), breaks=1, skipped=1, shows=("skipped fn.<locals>.problematic_code",)
        ),
    },
    "02_fullgraph_strategies.ipynb": {
        "next-input": unsupported("a = next(xs)", "Rewrite"),
        "next-rewritten": Expect(functions=1, graphs=1, breaks=0),
        "g-fullgraph": unsupported("tc.graph_break()", "nonstrict_trace"),
        "g-nonstrict": Expect(functions=1, graphs=1, breaks=0, shows=(": 3 ops",)),  # 3 sins
        "square-fullgraph": unsupported("return square_cpu(x)", "custom_op"),
        "square-custom-op": Expect(functions=1, graphs=1, breaks=0, shows=(": 1 op",)),
        "save-fullgraph": unsupported(
            "np.save(path, y)", "Move the code out of the compiled region"
        ),
        "save-split": Expect(functions=2, graphs=2, breaks=0, shows=("graph g ", "graph h ")),
        "cleanup": Expect(prints=("[",)),
    },
    "03_error_on_graph_break.ipynb": {
        "false-decorator": Expect(breaks=at_least(1), skipped=0),
        "false-context": Expect(graphs=2, breaks=1, skipped=0),
        "monkey-patch": Expect(breaks=at_least(1), skipped=0),
        # fn's own break is allowed (one graph before it), inner2's raises
        "true-decorator": unsupported("tc.graph_break()  # error", functions=1, graphs=1, breaks=2),
        "nested": Expect(breaks=at_least(1), skipped=0),
        "innermost": Expect(breaks=at_least(1), skipped=0),
        "fullgraph-over-false": unsupported("tc.graph_break()"),
        "fullgraph-over-callee": unsupported("tc.graph_break()"),
        "fullgraph-callee": unsupported("tc.graph_break()"),
    },
    "04_nonstrict_trace.ipynb": {
        "fullgraph-error": unsupported("tc.graph_break()", "nonstrict_trace"),
        "decorator-works": Expect(functions=1, graphs=1, breaks=0, prints=("[42.",)),
        "inline-works": Expect(functions=1, graphs=1, breaks=0, prints=("[42.",)),
        "explain": Expect(prints=("Graph Count: 1", "Graph Break Count: 0")),
    },
    "05_faq.ipynb": {
        "backend-eager": Expect(graphs=1, value="True"),
        "compile-times": Expect(prints=("trace",)),
        "profiler": Expect(prints=("Recompiles: 2", "dtype mismatch")),
        "frozen": Expect(prints=("frames compiled by the frozen calls: 0",)),
        "explain": Expect(prints=("Graph Count: 2", "Graph Break Count: 1", "Op Count: 6")),
        "explain-counts": Expect(value="(2, 1, 6)"),
        "toy-widget": Expect(graphs=2, breaks=1, shows=("[io_call]",), prints=("woo",)),
        "toy-fullgraph": unsupported('print("woo")'),
        "dynamic": Expect(functions=1, graphs=2, breaks=0, shows=("recompiled normalize",)),
        "allow-in-graph": Expect(graphs=1, breaks=0, shows=(": 1 op",)),
        "numpy-semantics": Expect(graphs=1, value="('float64', True, dtype('float32'), 'tuple')"),
        "fallback": Expect(prints=("True",)),
        "numpy-fn": Expect(graphs=1, breaks=0),
        "trace-numpy": Expect(prints=("True",)),
        "disable": Expect(breaks=1, shows=("tc.disable()d",), hides=("graph aa_fn", "graph ab_fn")),
        "disallow": Expect(graphs=2, breaks=1, shows=("disallow_in_graph",)),
        "not-inlined": Expect(breaks=1, skipped=0, shows=("graph not_inlined",)),
        "disable-nonrecursive": Expect(breaks=1, shows=("graph aa_fn", "graph ab_fn")),
    },
}


CASES = [(nb, cell_id) for nb, cells in EXPECTED.items() for cell_id in cells]


@pytest.mark.parametrize("name, cell_id", CASES, ids=[f"{n[:2]}-{c}" for n, c in CASES])
def test_cell_shows_what_the_document_describes(name, cell_id):
    nb = executed(name)
    cells = {cell.id: cell for cell in nb.cells}
    assert cell_id in cells, f"{name} has no cell {cell_id!r}"
    cell, expect = cells[cell_id], EXPECTED[name][cell_id]

    raised = [e.ename for e in errors(cell)]
    assert raised == ([expect.raises] if expect.raises else []), raised
    assert tagged(cell) == bool(expect.raises), f"tag the cells that raise {RAISES!r}, only those"

    report = saved_copies(cell)[0]["text/plain"] if is_tcompile_cell(cell) else ""
    for field, pattern in SUMMARY.items():
        wanted = getattr(expect, field)
        if wanted is None:
            continue
        count = int(re.search(pattern, report).group(1))
        assert count in wanted if isinstance(wanted, range) else count == wanted, (
            f"{field}: {count}, expected {wanted}\n{report}"
        )
    for text in expect.shows:
        assert text in report, f"{text!r} not in the widget's report:\n{report}"
    for text in expect.hides:
        assert text not in report, f"{text!r} in the widget's report:\n{report}"
    for text in expect.prints:
        assert text in stream(cell), f"{text!r} not printed:\n{stream(cell)}"
    if expect.value is not None:
        assert value(cell) == expect.value

    if expect.raises == "Unsupported":
        (pinned,) = pinned_errors(cell)  # shown in place of a traceback
        text = pinned["text/plain"]
        marked = [line.split(None, 2)[2] for line in text.splitlines() if line.startswith("->")]
        assert marked == [expect.marked], text
        assert expect.marked in html.unescape(pinned["text/html"])
        for hint in expect.hints:
            assert hint in text, f"{hint!r} not among the hints:\n{text}"
        assert "raised Unsupported" in report


# -- the quick start's widget, and the demo that exports it ---------------------------------------------


def quickstart_cell(cell_id: str):
    return next(c for c in executed("00_quickstart.ipynb").cells if c.id == cell_id)


def test_quickstart_widget_draws_the_graph_and_marks_the_break_in_its_static_html():
    (softmax,) = saved_copies(quickstart_cell("softmax"))
    assert softmax["text/html"].count("<svg") == 1
    (breaking,) = saved_copies(quickstart_cell("graph-break"))
    page = html.unescape(breaking["text/html"])
    assert page.count("<svg") == 2
    assert 'class="tc-line tc-break-line"' in page
    assert 'print("mean of the first row:", mean[0, 0])' in page
    assert "2 graphs · 1 graph break" in breaking["text/plain"]


def test_demo_exports_an_offline_page_and_summarizes_each_tcompile_cell():
    nb = executed("00_quickstart.ipynb")
    page = demo.export_html(nb)
    graphs, marks = demo.check_html(page)
    assert graphs == 5  # softmax 1, the break 2, the fixed layer norm 1, the branch 1 (a cond)
    assert marks >= 3  # the print (Breaks tab and pinned error) and the branch
    assert "tc-pinned-error" in page
    # the saved copies, not widgets that need a CDN
    assert f'<script type="{WIDGET_VIEW}">' not in page and "tc-saved-report" in page
    summary = "\n".join(demo.cell_summaries(nb))
    assert len([line for line in summary.splitlines() if line.startswith("In [")]) == 5
    assert "2 graphs · 1 graph break" in summary
    assert "[io_call]" in summary and "(1 cond node: a branch on data)" in summary
    assert "raised Unsupported" in summary


def test_demo_command_writes_the_html(tmp_path):
    output = tmp_path / "quickstart.html"
    cmd = [sys.executable, "-m", "tcompile.demo", "--output", str(output)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert str(output) in done.stdout
    assert "<svg" in output.read_text(encoding="utf-8")
    assert (tmp_path / "quickstart.ipynb").is_file()
