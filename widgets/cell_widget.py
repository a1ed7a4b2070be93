"""The ``%%tcompile`` cell widget: a thin ipywidgets view over one `CellRun`, with option toggles.

The widget holds no compile state. It shows the run's reports through `render`; changing
``fullgraph``, ``error_on_graph_break`` or the backend calls ``on_options(new_options)``, and
the extension re-runs the cell and hands the new run to `CellWidget.update`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from html import escape

import ipywidgets as widgets

from . import drawing, render
from .model import BackendChoice, CellOptions, CellRun

OptionsCallback = Callable[[CellOptions], None]
_FIT = {"width": "auto"}  # buttons as wide as their labels, not ipywidgets' fixed 148px


class CellWidget(widgets.VBox):
    """Summary, option toolbar, tabs (Lines, Graphs, Guards, Breaks, Kernels, Code, Timings)
    and an output area.

    Example (what the extension does)::

        widget = CellWidget(run, [BackendChoice("eager"), BackendChoice("triton", False, "no GPU")],
                            on_options=lambda options: rerun_cell(options, widget))
        display(widget)
        ...                    # after a re-run: widget.update(new_run)

    ``on_options`` is called inside ``with widget.output:``, so what it prints or raises shows
    in the widget's output area.
    """

    def __init__(
        self,
        run: CellRun,
        backends: Sequence[BackendChoice] = (),
        on_options: OptionsCallback | None = None,
        **kwargs,
    ):
        self.run = run  # what it shows: the cell's own run, or a preview
        self.cell_run = run  # the cell's own run (its Out, the kernel's names)
        self.options = run.options  # what the controls show: the last options asked for
        self.choices = {choice.name: choice for choice in backends}
        self._syncing = False

        self.summary = _html("tc-summary")
        self.message = _html("tc-message")
        self.fullgraph = widgets.ToggleButton(
            description="fullgraph", tooltip="every graph break is an error", layout=_FIT
        )
        self.error_on_graph_break = widgets.ToggleButton(
            description="error_on_graph_break",
            tooltip="graph breaks raise tc.Unsupported",
            layout=_FIT,
        )
        self.backend = widgets.Dropdown(description="backend")
        self.on_options = on_options
        self.tabs = widgets.Tab(
            children=[_html(f"tc-tab-{title.lower()}") for title, _ in render.SECTIONS],
            titles=[title for title, _ in render.SECTIONS],
        )
        self.output = widgets.Output()
        toolbar = widgets.HBox(list(self._controls()))
        toolbar.add_class("tc-toolbar")
        # graphs too large to draw with the report, drawn when asked (`drawing`)
        self.large_graphs = widgets.Dropdown(description="large graph", layout=_FIT)
        self.draw_button = widgets.Button(description="Draw", tooltip=(
            f"draw it with Graphviz (at most {drawing.ON_DEMAND_BUDGET_S:g} s; Interrupt stops it)"),
            layout=_FIT)  # fmt: skip
        self.draw_button.on_click(self._draw_large)
        self.drawer = widgets.HBox([self.large_graphs, self.draw_button])
        self.drawer.add_class("tc-drawer")
        self.large_drawing = _html("tc-large-drawing")
        super().__init__([self.summary, toolbar, self.message, self.tabs, self.drawer,
                          self.large_drawing, self.output], **kwargs)  # fmt: skip
        self.add_class("tc-widget")
        self.update(run)
        for control in self._controls():
            control.observe(self._on_control, names="value")

    @property
    def on_options(self) -> OptionsCallback | None:
        """Called with the new options when the user changes one; the controls are disabled
        while there is none (the extension may set it after building the widget)."""
        return self._on_options

    @on_options.setter
    def on_options(self, callback: OptionsCallback | None) -> None:
        self._on_options = callback
        for control in self._controls():
            control.disabled = callback is None

    def update(self, run: CellRun, note: str = "") -> None:
        """Show ``run`` (the cell's, or a preview with other options, which ``note`` explains);
        the controls follow its options silently."""
        self.run = run
        self.options = run.options
        self.summary.value = render.summary_html(run)
        for page, (_, html) in zip(self.tabs.children, render.SECTIONS):
            page.value = html(run)
        # a tc.Unsupported the cell raised: on top, with the Breaks tab open where it is
        error = render.cell_error_html(run)
        self.message.value = (render.note_html(note) if note else "") + error
        if error:
            self.tabs.selected_index = [title for title, _ in render.SECTIONS].index("Breaks")
        large = render.large_graphs(run)
        self.large_graphs.options = [(title, i) for i, (title, _) in enumerate(large)]
        self.large_graphs.value = 0 if large else None
        self.drawer.layout.display = None if large else "none"
        self.large_drawing.value = ""
        with self._quiet():
            self.fullgraph.value = run.options.fullgraph
            self.error_on_graph_break.value = run.options.error_on_graph_break
            self.backend.options = self._backend_labels(run.options.backend)
            self.backend.value = run.options.backend

    def _ipython_display_(self) -> None:
        """Two outputs: the report's saved copy (HTML and text: saved notebooks, nbconvert,
        GitHub, terminal IPython), then the live widget, which hides the copy while it shows
        (`render.saved_copy`). The copy is the cell's own run: what its %%tcompile line makes."""
        from IPython.display import display

        display(self.saved_copy(), raw=True)
        display(self._repr_mimebundle_(), raw=True)

    def saved_copy(self) -> dict:
        """The bundle of the report's saved copy, from the tabs already made where they show
        the cell's own run (a 9,000-op graph's sections take a tenth of a second)."""
        shows_own = self.run is self.cell_run
        pages = [page.value for page in self.tabs.children] if shows_own else None
        return render.saved_copy(self.cell_run, pages)

    def _repr_mimebundle_(self, **kwargs) -> dict:
        # The live view alone; no text: terminal IPython prints the copy's text instead.
        bundle = super()._repr_mimebundle_(**kwargs)
        bundle.pop("text/plain", None)
        return bundle

    def _draw_large(self, _button=None) -> None:
        large = render.large_graphs(self.run)
        if self.large_graphs.value is None or not large:
            return
        title, graph = large[self.large_graphs.value]
        self.large_drawing.value = render.drawing_html(graph, title, self.run.source)

    # -- controls ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the widget and every widget inside it (ipywidgets keeps open ones alive)."""
        _close_tree(self)

    def _controls(self) -> tuple[widgets.ValueWidget, ...]:
        return (self.fullgraph, self.error_on_graph_break, self.backend)

    def _backend_labels(self, current: str) -> list[tuple[str, str]]:
        """(label, name) per backend; an unusable one says why in its label (a Dropdown
        cannot disable single options), and the current backend is always listed."""
        choices = dict(self.choices)
        choices.setdefault(current, BackendChoice(current))
        return [
            (c.name if c.usable else f"{c.name} (unavailable: {_why(c)})", c.name)
            for c in choices.values()
        ]

    def _on_control(self, change: dict) -> None:
        if self._syncing:
            return
        choice = self.choices.get(self.backend.value)
        if choice is not None and not choice.usable:
            self._say(f"Backend {choice.name!r} is not usable here: {_why(choice)}")
            with self._quiet():
                self.backend.value = self.options.backend
            return
        self.options = self.options.changed(
            fullgraph=self.fullgraph.value,
            error_on_graph_break=self.error_on_graph_break.value,
            backend=self.backend.value,
        )
        if self.on_options is not None:
            self._say(f"Previewing the cell with %%tcompile {self.options.flags()}".rstrip())
            with self.output:
                self.on_options(self.options)

    def _say(self, text: str) -> None:
        self.message.value = f'<div class="tc-report">{escape(text)}</div>'

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Set controls from the kernel side without treating it as the user's choice."""
        self._syncing = True
        try:
            yield
        finally:
            self._syncing = False


def _why(choice: BackendChoice) -> str:
    return choice.reason or "not usable here"


def _close_tree(widget: widgets.Widget) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    for part in ("layout", "style"):
        if isinstance(getattr(widget, part, None), widgets.Widget):
            getattr(widget, part).close()
    widgets.Widget.close(widget)


def _html(css_class: str) -> widgets.HTML:
    page = widgets.HTML()
    page.add_class(css_class)
    return page
