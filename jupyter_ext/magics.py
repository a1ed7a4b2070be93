"""The ``%%tcompile`` cell magic and the ``%tcompile`` line magic, and what the extension shows.

After a ``%%tcompile`` cell has run (its value displayed as the cell's ``Out`` first), its
widget is displayed: a view over the cell's compile reports, whose toggles run the cell again
with other options. A `tc.Unsupported` raised in any cell is shown as a readable error pinned
to the user's line, not as a raw traceback.
"""

from __future__ import annotations

import linecache
from dataclasses import replace

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

import tcompile as tc
from tcompile.backend import backend_choices
from tcompile.widgets import render
from tcompile.widgets.model import CellOptions, CellRun, CellSource

from . import cell as cells
from . import timeit
from .options import parse, tcompile
from .session_log import SessionLog


@magics_class
class TcompileMagics(Magics):
    def __init__(self, shell):
        super().__init__(shell)
        self.defaults = CellOptions()
        self.definitions = cells.Definitions()
        self._pending = None  # the widget to show once the cell has finished
        self.last_widget = None
        self._widgets: dict[str, object] = {}  # cell id -> the widget it shows
        self._names_before: dict | None = None  # IPython's cell file names as a cell started
        self.cell_labels = cells.CellLabels(shell)
        self.session_log = SessionLog(self.running_cell)

    @cell_magic("tcompile")
    def tcompile_cell(self, line: str, cell: str):
        __tracebackhide__ = True  # noqa: F841 - IPython hides this frame in tracebacks
        options = parse(line, self.defaults)
        source = cells.register(self.shell, line, cell, self._names_before)
        value, run = self._run(source, options)
        if options.timeit and run.error is None:
            tree = cells.parsed(self.shell, source)
            timing = timeit.measure(self.shell, tree, source.filename, cells.defined_names(tree))
            run = replace(run, timing=timing)
        if options.widget:
            self._pending = self._widget(run)
        if run.error is not None:
            raise run.error
        return value

    @line_magic("tcompile")
    def tcompile_line(self, line: str):
        """``%tcompile OPTIONS`` sets the session's defaults; bare ``%tcompile`` shows them;
        ``%tcompile log`` shows every compile of the session (``%tcompile log clear`` forgets
        them)."""
        words = line.split()
        if words[:1] == ["log"]:
            if words[1:] == ["clear"]:
                self.session_log.clear()
            elif words[1:]:
                raise UsageError(f"%tcompile log: unknown argument {' '.join(words[1:])!r}; "
                                 "use %tcompile log, or %tcompile log clear")  # fmt: skip
            return self.session_log
        if line.strip():
            self.defaults = parse(line, self.defaults)
        flags = self.defaults.flags() or "(none: the defaults)"
        print(f"%%tcompile session defaults: {flags}")

    def _run(self, source: CellSource, options: CellOptions, namespace: dict | None = None):
        definitions = self.definitions if namespace is None else cells.Definitions()
        value, run = cells.run(self.shell, source, options, definitions, namespace)
        if isinstance(run.error, tc.Unsupported):  # its pinned error shows the file it broke in
            run = replace(run, error_source=source_of(run.error.record, self.shell))
        return value, run

    def _widget(self, run: CellRun):
        from tcompile.widgets.cell_widget import CellWidget  # ipywidgets only when shown

        widget = CellWidget(run, backend_choices(), on_options=None)
        widget.on_options = lambda options: self._rerun(widget, run.source, options)
        # A cell run again replaces its widget: close the old one (ipywidgets keeps every open
        # widget alive), so re-running a cell hundreds of times does not pile them up.
        previous = self._widgets.pop(self._cell_key(run.source), None)
        if previous is not None:
            previous.close()
        self._widgets[self._cell_key(run.source)] = widget
        self.last_widget = widget
        return widget

    def _cell_key(self, source: CellSource) -> str:
        """The cell's id in the notebook (Jupyter sends it), else its text."""
        kernel = getattr(self.shell, "kernel", None)
        parent = kernel.get_parent() if kernel is not None else {}
        return parent.get("metadata", {}).get("cellId") or source.text

    def _rerun(self, widget, source: CellSource, options: CellOptions) -> None:
        """A toggle changed: a preview of the cell with ``options``, run in a copy of the
        user's namespace (what the cell defines or rebinds stays in the copy: the notebook's
        source, its ``Out`` and the kernel's names keep agreeing), its output in the widget;
        back to the cell's own options, its own run again, without running anything."""
        widget.output.clear_output()
        own = widget.cell_run
        if options == own.options:
            widget.update(own)
            return
        with widget.output:
            value, run = self._run(source, options, dict(self.shell.user_ns))
            if run.error is not None and not isinstance(run.error, tc.Unsupported):
                raise run.error  # the Output widget shows its traceback
            if value is not None:
                display(value)
        flags = options.flags()
        widget.update(run, note=(
            f"Preview with %%tcompile {flags}".rstrip() + ": the cell ran again in a copy of "
            "your namespace, so your variables and functions are as the cell's own run left "
            "them. To keep these options, put them on the cell's %%tcompile line and run it."))  # fmt: skip

    def note_cell_start(self, info=None) -> None:
        """IPython's pre_run_cell event: remember its cell file names (`cells.cell_number`)."""
        self._names_before = dict(getattr(self.shell.compile, "_filename_map", {}))

    def running_cell(self) -> int | None:
        """The number of the cell being run, for the session log."""
        if self._names_before is None:
            return None
        return cells.cell_number(self.shell, self._names_before)

    def show_pending(self, result=None) -> None:
        """IPython's post_run_cell event: show the widget of the cell that just ran."""
        widget, self._pending = self._pending, None
        if widget is not None:
            display(widget)

    def unsupported(self, shell, etype, value, tb, tb_offset=None):
        """IPython's custom handler for tc.Unsupported: the error pinned to the user's line, on
        top of the cell's widget when one follows (else an output of its own), and a one-line
        traceback (the cell's error status)."""
        if self._pending is None or self._pending.run.error is not value:
            display(pinned_error(value, source_of(value.record, shell)))
        line = f"{etype.__name__}: {value.record.reason}"
        where = value.record.location
        stb = [f"{line} (line {where.lineno})" if where else line]
        shell._showtraceback(etype, value, stb)
        return stb


TcompileMagics.tcompile_cell.__doc__ = tcompile.__doc__  # what %%tcompile? shows


class PinnedError:
    """A tc.Unsupported shown as the user's code with the break line marked, the kind, the
    explanation and the hints (HTML in a notebook, text in a terminal)."""

    def __init__(self, html: str, text: str):
        self.html, self.text = html, text

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": self.text}


def pinned_error(error: tc.Unsupported, source: CellSource) -> PinnedError:
    return PinnedError(*render.break_error(error.record, source))


def source_of(record, shell) -> CellSource:
    """The whole source of the file a break happened in: a cell IPython cached (the magic
    line included, so line numbers are the cell's), or a module."""
    filename = record.location.filename if record.location else ""
    labels = cells.CellLabels(shell)
    return CellSource("".join(linecache.getlines(filename)), 1, filename,
                      labels.get(filename, filename), labels)  # fmt: skip
