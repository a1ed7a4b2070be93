"""Plain data the widgets show: a notebook cell, the options it ran with, and its compile reports.

Everything here is built by the Jupyter extension (`tcompile.jupyter_ext`) and read by the
renderers and the widget; nothing here imports IPython or ipywidgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from tcompile.backend import BackendChoice  # noqa: F401 - part of the model the widget shows


@dataclass(frozen=True)
class CellOptions:
    """The options of a ``%%tcompile`` cell (``--fullgraph``, ``--backend eager``...)."""

    fullgraph: bool = False
    error_on_graph_break: bool = False
    backend: str = "auto"
    dynamic: bool | None = None
    widget: bool = True
    timeit: bool = False  # time the cell's calls compiled and plain (`jupyter_ext.timeit`)

    def changed(self, **fields) -> CellOptions:
        return replace(self, **fields)

    def flags(self) -> str:
        """The options as ``%%tcompile`` arguments, e.g. ``--fullgraph --backend eager``."""
        parts = ["--fullgraph"] if self.fullgraph else []
        parts += ["--error-on-graph-break"] if self.error_on_graph_break else []
        parts += [] if self.backend == "auto" else ["--backend", self.backend]
        parts += {None: [], True: ["--dynamic"], False: ["--no-dynamic"]}[self.dynamic]
        parts += [] if self.widget else ["--no-widget"]
        parts += ["--timeit"] if self.timeit else []
        return " ".join(parts)


@dataclass(frozen=True)
class CellSource:
    """Where a cell's code lives: its text (the body under the magic line), the cell line of
    the body's first line, and the file name its code was compiled under (``linecache`` holds
    the whole cell there; break records and graph nodes name it)."""

    text: str
    first_line: int  # 2 when the body follows a ``%%tcompile`` line
    filename: str
    label: str = ""  # "Cell In[5]"
    # other files' names as the user knows them (other cells: "Cell In[3]"), by file name
    file_labels: Mapping[str, str] = field(default_factory=dict, compare=False)

    def label_of(self, filename: str) -> str | None:
        """How to name ``filename``: this cell's label, another cell's, or None (a module)."""
        if filename == self.filename:
            return self.label or "cell"
        return self.file_labels.get(filename)

    def lines(self) -> list[tuple[int, str]]:
        """(cell line number, text) for each line of the body."""
        return [(self.first_line + i, text) for i, text in enumerate(self.text.splitlines())]


@dataclass(frozen=True)
class CellTiming:
    """``--timeit``: the cell's statements other than its definitions, run again with its
    functions compiled (warm) and plain: the median seconds of ``runs`` runs each."""

    compiled_s: float
    plain_s: float
    runs: int

    @property
    def speedup(self) -> float:
        return self.plain_s / self.compiled_s if self.compiled_s > 0 else float("inf")


@dataclass(frozen=True)
class CellRun:
    """One execution of a cell: its reports, the error it raised (if any), its wall time."""

    source: CellSource
    options: CellOptions
    reports: tuple = ()  # CompileReport, in the order they were published
    error: BaseException | None = None
    seconds: float = 0.0  # wall time of the cell's code, compiles and calls included
    # the whole file a tc.Unsupported the cell raised broke in (this cell, another one, a
    # module): what its pinned error shows; None: the cell's own source
    error_source: CellSource | None = None
    timing: CellTiming | None = None  # with --timeit: compiled and plain, warm
