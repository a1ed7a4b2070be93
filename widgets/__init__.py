"""The notebook face of tcompile: a ``%%tcompile`` cell's reports as a widget, HTML and text.

`render` turns a `CellRun` (the cell's frozen compile reports) into HTML sections and text,
from what `facts` finds in the run, with the building blocks of `blocks`; `line_map` makes the
Lines tab (every line of the cell by what became of it) and `kernels_tab` the Kernels tab;
`dot`, `svg` and `drawing` draw graphs; `style` holds the CSS; and `CellWidget` composes those
into an ipywidgets view with option toggles, shown with a saved copy for saved notebooks. Importing this package does not import ipywidgets: ``CellWidget`` loads it on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dot import graph_to_dot
from .model import BackendChoice, CellOptions, CellRun, CellSource
from .render import (
    break_error,
    breaks_html,
    code_html,
    graphs_html,
    guards_html,
    lines_html,
    static_html,
    summary,
    text_report,
    timings_html,
)
from .svg import GraphvizError, render_svg

if TYPE_CHECKING:
    from .cell_widget import CellWidget

__all__ = [
    "BackendChoice",
    "CellOptions",
    "CellRun",
    "CellSource",
    "CellWidget",
    "GraphvizError",
    "break_error",
    "breaks_html",
    "code_html",
    "graph_to_dot",
    "graphs_html",
    "guards_html",
    "lines_html",
    "render_svg",
    "static_html",
    "summary",
    "text_report",
    "timings_html",
]


def __getattr__(name: str):
    if name == "CellWidget":
        from .cell_widget import CellWidget

        return CellWidget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
