"""The widget of a cell whose function runs on Dask arrays: the Kernels tab shows each chunk
kernel (one task per chunk, the chunks, its code), each step Dask runs as it is, and the plan
with the task count against plain Dask's."""

from __future__ import annotations

import html

from widget_cells import run_cell

from tcompile.widgets.kernels_tab import kernel_counts, kernels_html

CELL = """
import dask.array as da
import numpy as np
import tcompile as tc

@tc.compile(backend="eager")
def centred(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True), x.sum(axis=0)

result = centred(da.ones((400, 300), chunks=(100, 300)))
"""


def test_kernels_tab_shows_chunk_kernels_and_dask_steps():
    run = run_cell(CELL)
    assert run.error is None
    (report,) = [r for r in run.reports if r.compiled is not None]
    assert report.compiled.backend == "dask+eager"
    assert kernel_counts(report.compiled) == "1 (1 chunk kernel), 1 run by dask.array"
    page = html.unescape(kernels_html(run))
    assert "chunk kernel: one Dask task per chunk" in page
    assert "one task per chunk: 4 x 1 chunks of (100, 300)" in page
    assert "its kernel: 5 ops by the eager backend" in page
    assert "dask: dask.array's own tasks" in page
    assert "after Dask's optimizer (plain dask.array: " in page
    assert "truediv = da.map_blocks(centred_graph_chunk_0, x)  # chunks (100, 300)" in page
    assert "e = np.exp(sub)" in page and "def centred_graph_chunk_0(x):" in page  # its code
