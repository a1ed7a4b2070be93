"""A cell's report never stalls the kernel (issue 20, part 1): graphs too large to draw are
summarised (ops by kind and by line, the head of their code) and drawn only on request; every
drawing has a time budget, and Ctrl-C stops it, as the user's Interrupt does in Jupyter."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time

import pytest
from widget_cells import run_cell

from tcompile.widgets import CellWidget, drawing, graph_to_dot, render_svg, static_html, svg
from tcompile.widgets.render import large_graphs, saved_copy

# An unrolled loop (it branches on ``k % 2``): two graph ops per term; bench/widget_render.py
# times its report at several sizes.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
from widget_render import SERIES_CELL  # noqa: E402


def series_run(terms: int):
    return run_cell(SERIES_CELL.format(terms=terms))


@pytest.fixture(scope="module")
def huge_run():
    return series_run(4500)  # 9,001 ops, inside the trace's op budget


def only_graph(run):
    return next(g for r in run.reports for g in r.graphs if g.op_count())


def test_a_9000_op_graphs_report_is_built_in_under_a_second(huge_run):
    # the report's own time: not the collection of what the tests before it left alive (in
    # the whole suite, numba's compiled loops among them, a collection took most of a second)
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        page = saved_copy(huge_run)["text/html"]
        CellWidget(huge_run)._repr_mimebundle_()
        took = time.perf_counter() - start
    finally:
        gc.enable()
    assert took < 1.0, took  # drawing it would take more than 16 minutes
    assert only_graph(huge_run).op_count() == 9001
    assert "<svg" not in page and "not drawn: 9001 ops is more than" in page
    assert len(page) < 150_000  # the saved notebook keeps the summary and the code's head


def test_a_large_graph_is_summarised_by_kind_and_line(huge_run):
    page = static_html(huge_run)
    kinds = dict(drawing.op_kinds(only_graph(huge_run)))
    assert kinds == {"np.add": 2250, "np.subtract": 2250, "np.multiply": 2251, "np.divide": 2250}
    assert "Ops by kind" in page and "Ops by line" in page
    by_line = {
        where: n for where, n, _ in drawing.ops_by_line(only_graph(huge_run), lambda f: "Cell")
    }
    assert by_line == {"Cell:7": 1, "Cell:10": 4500, "Cell:12": 4500}
    assert "# ... 8804 more lines" in page  # the code's head, not all 9,000 lines


def test_drawing_time_is_counted_in_the_timings_tab():
    run = series_run(5)
    page = static_html(run)
    took = drawing.drawing_seconds([only_graph(run)])
    assert took > 0 and "Drawing the graphs (this report, after the cell ran)" in page


def slow_dot() -> str:
    return graph_to_dot(only_graph(series_run(70)))  # about 200 ops: seconds of layout


def test_a_drawing_past_its_budget_is_stopped_and_the_next_one_works():
    dot = slow_dot()
    start = time.perf_counter()
    with pytest.raises(svg.DrawingTooSlow, match="did not finish within 0.2 s"):
        render_svg(dot, 0.2)
    assert time.perf_counter() - start < 1.5
    assert render_svg("digraph { a -> b }", 0.3).startswith("<svg")


def test_ctrl_c_stops_a_drawing_at_once():
    dot = slow_dot()
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        render_svg(dot, 30.0)
    assert time.perf_counter() - start < 2.0
    assert render_svg("digraph { c -> d }").startswith("<svg")


def test_the_widget_draws_a_large_graph_when_asked(monkeypatch):
    monkeypatch.setattr(drawing, "DRAW_LIMIT", 5)  # a small graph counts as large
    run = series_run(3)
    widget = CellWidget(run)
    assert [title for title, _ in large_graphs(run)] == [t for t, _ in widget.large_graphs.options]
    graphs = widget.tabs.children[widget.tabs.titles.index("Graphs")].value
    assert widget.drawer.layout.display is None and "<svg" not in graphs
    widget.draw_button.click()
    assert "<svg" in widget.large_drawing.value and "drawn in" in widget.large_drawing.value


def test_the_widget_says_when_a_drawing_on_request_ran_out_of_time(monkeypatch):
    monkeypatch.setattr(drawing, "DRAW_LIMIT", 5)
    monkeypatch.setattr(drawing, "ON_DEMAND_BUDGET_S", 0.1)
    widget = CellWidget(series_run(70))
    widget.draw_button.click()
    assert "did not finish within 0.1 s" in widget.large_drawing.value


def test_no_drawer_when_every_graph_is_drawn():
    widget = CellWidget(series_run(3))
    assert widget.drawer.layout.display == "none"
