"""tcompile: the torch.compile programming model for NumPy code.

import numpy as np
import tcompile as tc

@tc.compile
def f(x):
    return np.sin(x) * 2 + 1

f(np.ones(8))                      # traced into a graph, guarded, cached
print(tc.explain(f)(np.ones(8)))   # graphs, breaks, guards
"""

from __future__ import annotations

from tcompile.tracer.config import config
from tcompile.tracer.errors import TCompileError, Unsupported
from tcompile.tracer.frames.entry import run
from tcompile.tracer.hatches import (
    allow_in_graph,
    custom_op,
    disable,
    disallow_in_graph,
    error_on_graph_break,
    nonstrict_trace,
    skip_frame,
)
from tcompile.tracer.markers import graph_break
from tcompile.tracer.report import compile_times, configure_from_environment, set_logs

from ._api import CompileProfiler, compile, counters, explain, reset

__all__ = [
    "CompileProfiler",
    "TCompileError",
    "Unsupported",
    "compile",
    "compile_times",
    "config",
    "counters",
    "explain",
    "graph_break",
    "skip_frame",
    "error_on_graph_break",
    "nonstrict_trace",
    "custom_op",
    "disable",
    "allow_in_graph",
    "disallow_in_graph",
    "run",
    "reset",
    "set_logs",
]


def load_ipython_extension(ipython) -> None:
    """``%load_ext tcompile``: the ``%%tcompile`` magics (IPython is imported only here)."""
    from tcompile.jupyter_ext import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython) -> None:
    from tcompile.jupyter_ext import unload_ipython_extension as unload

    unload(ipython)


configure_from_environment()
