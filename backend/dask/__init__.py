"""Graphs on Dask arrays: a compiled function called with ``dask.array`` arrays returns lazy
Dask arrays, each chunk-local region of its graph one task per chunk running the chosen
backend's kernel (`regions`, `chunk_kernels`, `runner`; stencils' halos and slices' windows:
`halos`, `windows`; for loops: `unrolling`). A worker keeps no more of the compiler resident
than its kernels need (`worker_memory`).

Every built-in backend takes Dask arrays through `OnDask`: the tracer then traces them as
NumPy arrays of their shape and dtype (guarded on their chunks), and a graph with a Dask input
is built into a Dask graph whose chunks that backend computes. Dask itself is imported only when
such a graph is compiled (``pip install 'tcompile[dask]'``).
"""

from __future__ import annotations

from tcompile.tracer.ir.compiled_graph import CompiledGraph


def has_dask_input(graph) -> bool:
    return any(n.tensor is not None and n.tensor.placement == "dask" for n in graph.inputs)


class OnDask:
    """``backend`` that also runs graphs whose inputs include Dask arrays: those are built into
    Dask graphs whose chunk kernels ``backend`` makes; any other graph goes to ``backend``."""

    dask_arrays = True

    def __init__(self, backend):
        self.backend = backend
        self.__name__ = backend.__name__
        self.__doc__ = backend.__doc__

    def __getattr__(self, name: str):  # what the backend declares (loop_nodes, device_arrays)
        return getattr(self.backend, name)

    def __call__(self, graph, example_inputs) -> CompiledGraph:
        if has_dask_input(graph):
            from .runner import compile_dask_graph

            return compile_dask_graph(graph, example_inputs, self.backend)
        return self.backend(graph, example_inputs)

    def __repr__(self) -> str:
        return f"OnDask({self.__name__})"


__all__ = ["OnDask", "has_dask_input"]
