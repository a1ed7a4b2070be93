"""The CPU backend: a captured graph compiled to machine code by numba (``backend="cpu"``).

Today its loop nodes are compiled whole (`native_loops`): a Python loop of scalar indexing and
arithmetic, or of array statements, runs as one native function, checked against the trace's
types (`numba_types`) after numba typed it, its source printed from the graph for numba
(`native_source`). The rest of the graph runs as the eager backend's NumPy code. numba is an
optional dependency (``pip install 'tcompile[cpu]'``), imported only when the backend runs.
"""

from __future__ import annotations

import importlib.util
from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph

from ..eager import eager_backend

_INSTALL = "pip install 'tcompile[cpu]'"


def unavailable() -> str:
    """Why the cpu backend cannot run here ("" when it can)."""
    if importlib.util.find_spec("numba") is None:
        return f"the cpu backend needs numba, which is not installed here: {_INSTALL}"
    return ""


def cpu_backend(graph, example_inputs) -> CompiledGraph:
    """The eager backend's code for ``graph``, each loop node's function compiled by numba
    (where it can be, exactly: see `native_loops`)."""
    from .native_loops import native_loops

    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    eager = eager_backend(graph, example_inputs)
    loops = native_loops(graph, eager.loop_functions)
    sources = dict(eager.sources)
    native = [loop.source for loop in loops if loop.dispatcher is not None]
    if native:
        sources["native loops"] = "\n\n".join(native)
    return CompiledGraph(eager.fn, "cpu", MappingProxyType(sources),
                         tuple(loop.info() for loop in loops), eager.loop_functions)  # fmt: skip


cpu_backend.loop_nodes = True  # a loop node is compiled whole, or runs as the eager code's loop
