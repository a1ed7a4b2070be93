"""A region's kernel as Dask tasks call it: the per-chunk backend's compiled code for the
region's graph, built once per process.

Dask pickles a task's function to send it to a worker. A `ChunkKernel` pickles as its key and
its region graph; a worker builds the kernel the first time it meets the key (the CPU
backend's machine code from its disk cache, when the client or another worker made it before)
and every later task with that key reuses it. A worker then lets go of the compiler's pages
(`worker_memory`).
"""

from __future__ import annotations

import hashlib
import pickle
import threading

from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import Node, TensorMeta

from . import worker_memory

_BUILT: dict[str, object] = {}  # key -> the compiled region, in this process
_LOCK = threading.Lock()  # a worker's threads may meet a new key at once


class ChunkKernel:
    """``kernel(*chunks_and_constants)`` -> the region's sink for one chunk."""

    def __init__(self, graph: Graph, backend, payload: bytes | None = None):
        self.graph = graph
        self.backend = backend
        self.payload = payload or pickle.dumps((graph, backend))
        self.key = hashlib.sha1(self.payload).hexdigest()
        self.compiled = None

    def build(self, example_inputs) -> object:
        """The per-chunk backend's CompiledGraph for the region (made once per process)."""
        compiled = _BUILT.get(self.key)
        if compiled is None:
            with _LOCK:
                compiled = _BUILT.get(self.key)
                if compiled is None:
                    compiled = _BUILT[self.key] = self.backend(self.graph, list(example_inputs))
        self.compiled = compiled
        return compiled

    def __call__(self, *inputs):
        compiled = self.compiled or self.build(inputs)
        result = compiled.fn(*inputs)[0]
        worker_memory.settle()  # LLVM's pages go, once the kernel is built
        return result

    def __reduce__(self):
        return _unpickle, (self.key, self.payload)

    def __dask_tokenize__(self):
        return self.key


def _unpickle(key: str, payload: bytes) -> ChunkKernel:
    built = _BUILT.get(key)
    graph, backend = pickle.loads(payload) if built is None else (None, None)
    kernel = ChunkKernel(graph, backend, payload)
    kernel.compiled = built
    return kernel


def region_graph(name: str, inputs: list[Node], nodes: list[Node], chunk_of: dict) -> Graph:
    """A graph of ``nodes`` (a region) that takes ``inputs`` and returns the last node: what one
    chunk runs. ``chunk_of`` maps each node to an example of its value for one chunk; array
    metas keep dtype and memory order, not sizes (chunks differ in size)."""
    graph = Graph(name)
    copies: dict[int, Node] = {}
    for node in inputs:
        copy = graph.add("input", node.name, name=node.name)
        copy.tensor = _chunk_meta(chunk_of[node])
        copy.meta = copy.tensor.text()
        copies[id(node)] = copy

    def arg(value):
        if isinstance(value, Node):
            return copies[id(value)]
        if isinstance(value, (tuple, list)):
            return type(value)(arg(v) for v in value)
        if isinstance(value, dict):
            return {k: arg(v) for k, v in value.items()}
        return value

    for node in nodes:
        copy = graph.add(node.op, node.target, arg(node.args), arg(node.kwargs), name=node.name,
                         stack=node.stack, risk=node.risk)  # fmt: skip
        copy.errstate = node.errstate
        copy.tensor = _chunk_meta(chunk_of[node])
        copy.meta = copy.tensor.text()
        copies[id(node)] = copy
    graph.add("output", None, ((copies[id(nodes[-1])],),), name="output")
    graph.lint()
    return graph


def _chunk_meta(example) -> TensorMeta:
    return TensorMeta.of(example, symbolic=True)
