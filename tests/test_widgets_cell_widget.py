"""The cell widget's state, without a kernel or front end: toggles call back with new options,
``update`` refreshes everything, displaying it shows the saved copy (HTML and text) and the
live view."""

from __future__ import annotations

import subprocess
import sys

import ipywidgets as widgets
import pytest
from IPython.display import display
from widget_cells import run_cell

from tcompile.widgets import BackendChoice, CellOptions, CellRun, CellWidget, kernels_tab, render

CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def f(x):
    y = np.sin(x) + 1
    print("step")
    return y * 2

f(np.ones(3))
"""

OTHER_CELL = """
import numpy as np
import tcompile as tc

@tc.compile
def other(x):
    return np.cos(x)

other(np.ones(2))
"""

BACKENDS = [
    BackendChoice("auto"),
    BackendChoice("eager"),
    BackendChoice("triton", usable=False, reason="no CUDA GPU found"),
]


@pytest.fixture(scope="module")
def run():
    return run_cell(CELL)


@pytest.fixture
def asked() -> list[CellOptions]:
    return []


@pytest.fixture
def widget(run, asked) -> CellWidget:
    return CellWidget(run, BACKENDS, on_options=asked.append)


def test_widget_shows_the_summary_tabs_and_an_output_area(widget, run):
    assert "tc-widget" in widget._dom_classes
    assert "tc-summary" in widget.summary._dom_classes
    assert render.summary(run).split(" · ")[0] in widget.summary.value
    assert widget.tabs.titles == (
        "Lines", "Graphs", "Guards", "Breaks", "Kernels", "Code", "Timings"
    )  # fmt: skip
    pages = [page.value for page in widget.tabs.children]
    renderers = (
        render.lines_html,
        render.graphs_html,
        render.guards_html,
        render.breaks_html,
        kernels_tab.kernels_html,
        render.code_html,
        render.timings_html,
    )
    assert pages == [html(run) for html in renderers]
    assert '<div class="tc-graph-svg"><svg' in pages[1] and "tc-break-line" in pages[3]
    assert "tc-lm-legend" in pages[0] and "tc-break-line" in pages[0]
    assert isinstance(widget.output, widgets.Output) and widget.output in widget.children


def test_toggling_fullgraph_asks_for_a_rerun_with_it(widget, asked, run):
    widget.fullgraph.value = True
    assert asked == [run.options.changed(fullgraph=True)]
    assert "%%tcompile --fullgraph" in widget.message.value


def test_options_accumulate_until_the_rerun_arrives(widget, asked):
    widget.fullgraph.value = True
    widget.error_on_graph_break.value = True
    widget.backend.value = "eager"
    assert asked[-1] == CellOptions(fullgraph=True, error_on_graph_break=True, backend="eager")
    assert len(asked) == 3


def test_unusable_backends_are_listed_with_their_reason_and_refused(widget, asked):
    assert widget.backend.options == (
        ("auto", "auto"),
        ("eager", "eager"),
        ("triton (unavailable: no CUDA GPU found)", "triton"),
    )
    widget.backend.value = "triton"
    assert asked == []
    assert widget.backend.value == "auto"
    assert "&#x27;triton&#x27; is not usable here: no CUDA GPU found" in widget.message.value


def test_update_shows_the_new_run_without_asking_again(widget, asked, run):
    new = run_cell(OTHER_CELL, options=CellOptions(fullgraph=True, backend="eager"))
    widget.fullgraph.value = True
    widget.update(new)
    assert len(asked) == 1  # only the user's toggle, not update's
    assert widget.fullgraph.value is True and widget.backend.value == "eager"
    assert widget.message.value == ""
    assert widget.summary.value == render.summary_html(new)
    graphs, breaks = (
        widget.tabs.children[widget.tabs.titles.index(t)] for t in ("Graphs", "Breaks")
    )
    assert "other" in graphs.value and "def f" not in breaks.value
    assert widget.options == new.options
    widget.update(run)  # and back: the toggle follows the run, still silently
    assert widget.fullgraph.value is False and len(asked) == 1


def test_a_backend_the_run_used_is_listed_even_if_not_offered(run):
    widget = CellWidget(CellRun(run.source, CellOptions(backend="mine"), run.reports), [])
    assert widget.backend.options == (("mine", "mine"),) and widget.backend.value == "mine"


def test_controls_work_only_with_a_callback_which_may_come_later(run, asked):
    widget = CellWidget(run)
    controls = (widget.fullgraph, widget.error_on_graph_break, widget.backend)
    assert all(control.disabled for control in controls)
    widget.on_options = asked.append  # as the extension does, once it has the widget
    assert not any(control.disabled for control in controls)
    widget.error_on_graph_break.value = True
    assert asked == [run.options.changed(error_on_graph_break=True)]


def test_display_shows_the_saved_copy_then_the_live_widget(widget, run):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()  # what display publishes to
    with capture_output() as shown:
        display(widget)
    copy, live = (output.data for output in shown.outputs)
    assert copy["text/html"].startswith('<div class="tc-saved-report"><style>')
    assert render.static_html(run) in copy["text/html"]
    assert "run the cell for the live widget" in copy["text/html"]
    assert copy["text/plain"] == render.text_report(run)
    assert live == {"application/vnd.jupyter.widget-view+json": {
        "version_major": 2, "version_minor": 0, "model_id": widget.model_id}}  # fmt: skip


def test_the_saved_copy_is_the_cells_own_run_not_a_preview(widget, run):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    widget.update(run_cell(OTHER_CELL), note="a preview")
    with capture_output() as shown:
        display(widget)
    assert shown.outputs[0].data["text/plain"] == render.text_report(run)
    assert shown.outputs[0].data == render.saved_copy(run)


def test_the_saved_copy_reuses_the_tabs_and_equals_a_fresh_one(widget, run):
    assert widget.saved_copy() == render.saved_copy(run)


def test_importing_tcompile_and_its_widgets_does_not_import_ipython_or_ipywidgets():
    code = (
        "import sys, tcompile, tcompile.widgets\n"
        "from tcompile.widgets import render, CellRun\n"
        "loaded = [m for m in ('IPython', 'ipywidgets') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "from tcompile.widgets import CellWidget\n"
        "assert 'ipywidgets' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
