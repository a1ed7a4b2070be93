"""Real `CellRun`s for the widget tests: a cell's code compiled under a cell file name, run
while its compile reports are collected, as the ``%%tcompile`` extension does."""

from __future__ import annotations

import itertools
import linecache
import textwrap
import time

from tcompile.tracer import report
from tcompile.widgets import CellOptions, CellRun, CellSource

_cells = itertools.count(1)


def run_cell(body: str, *, options: CellOptions | None = None) -> CellRun:
    """Run ``body`` as cell ``In[n]`` under ``%%tcompile``; its compile reports, the error it
    raised and its wall time make the `CellRun`. Line numbers in the reports are cell lines:
    the body starts at line 2, under the magic line. ``options`` are only recorded in the run:
    the cell's own decorators say how its functions compile."""
    body = textwrap.dedent(body).strip("\n") + "\n"
    n = next(_cells)
    filename = f"<tcompile-test-cell-{n}>"
    cell = "%%tcompile\n" + body
    linecache.cache[filename] = (len(cell), None, cell.splitlines(True), filename)
    source = CellSource(body, first_line=2, filename=filename, label=f"Cell In[{n}]")
    code = compile("\n" + body, filename, "exec")
    error = None
    start = time.perf_counter()
    with report.collecting() as reports:
        try:
            exec(code, {"__name__": "__main__"})
        except Exception as e:  # the cell's own error, shown by the widget
            error = e
    seconds = time.perf_counter() - start
    return CellRun(source, options or CellOptions(), tuple(reports), error, seconds)
