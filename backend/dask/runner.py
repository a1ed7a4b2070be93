"""A graph run on Dask arrays: each call builds one Dask graph, whose chunk-local regions are
tasks of the per-chunk backend's kernels and whose other nodes are Dask's own operations; the
results are lazy Dask arrays, computed by whatever scheduler the caller uses.

The plan is made once per compiled entry, from stand-ins of the inputs (zeros chunked as the
traced inputs: the chunks are guarded, so every call that reaches the entry has them).
"""

from __future__ import annotations

import inspect
import warnings
from types import MappingProxyType

import numpy as np

from tcompile.tracer.ir.compiled_graph import CompiledGraph, KernelInfo
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.node import Node, nodes_in, user_lines

from ..fused.host_nodes import run_node
from ..fused.plan import map_leaves
from .chunk_kernels import ChunkKernel, region_graph
from .halos import Halos, region_depth
from .regions import (
    Region,
    chunk_local,
    drops_axes,
    is_dask_array,
    partial_reduction,
    reduced_axes,
    region_chunks,
    regions,
)
from .unrolling import unrolled
from .windows import Unaligned, Windows
from .windows import region_depth as window_depth


class RegionStep:
    """A region as one ``map_blocks`` task per chunk of its sink: ``map_overlap``, where its
    rolls cross chunks (``depth`` elements of periodic halo per axis), or its inputs overlapped
    where its slices cross chunks (``overlap``: elements before and after per axis, none at the
    array's ends: `windows`)."""

    def __init__(self, region: Region, kernel: ChunkKernel, values: dict, overlap: dict):
        self.region = region
        self.kernel = kernel
        self.depth = region_depth(region.nodes, values)
        self.overlap = overlap
        sink = region.sink
        self.chunks = values[sink].chunks
        self.meta = values[sink]._meta
        self.dtype = values[sink].dtype
        # a reduction that drops axes: its tasks drop them from the region's chunks
        self.drop_axis = reduced_axes(sink, values[sink.args[0]].ndim) if drops_axes(sink) else ()

    def run(self, env: dict) -> None:
        import dask.array as da

        args = [_value(env, node) for node in self.region.inputs]
        if self.depth:
            arrays = [a for a in args if is_dask_array(a)]
            kernel = ArraysFirst(self.kernel, [(is_dask_array(a), a) for a in args])
            periodic = dict.fromkeys(self.depth, "periodic")  # np.roll wraps around
            env[self.region.sink] = da.map_overlap(kernel, *arrays, depth=self.depth,
                                                   boundary=periodic, trim=True,
                                                   allow_rechunk=False, dtype=self.dtype,
                                                   meta=self.meta)  # fmt: skip
            return
        if self.overlap:
            ndim = len(self.chunks)
            args = [_overlapped(a, self.overlap, ndim) if is_dask_array(a) else a for a in args]
        env[self.region.sink] = da.map_blocks(self.kernel, *args, chunks=self.chunks,
                                              drop_axis=self.drop_axis, dtype=self.dtype,
                                              meta=self.meta)  # fmt: skip

    def info(self, index: int) -> KernelInfo:
        nodes = self.region.nodes
        blocks = " x ".join(str(len(c)) for c in self.chunks) or "1"
        notes = (f"one task per chunk: {blocks} chunks of {_chunk_text(self.chunks)}",
                 f"its kernel: {len(nodes)} ops by the {self.kernel.backend.__name__.removesuffix('_backend')} backend")  # fmt: skip
        if self.depth:
            halo = ", ".join(f"{d} along axis {a}" for a, d in sorted(self.depth.items()))
            notes += (f"each chunk with a periodic halo of its neighbours' elements ({halo}): "
                      "da.map_overlap",)  # fmt: skip
        if self.overlap:
            halo = ", ".join(f"{before} before and {after} after along axis {a}"
                             for a, (before, after) in sorted(self.overlap.items()))  # fmt: skip
            notes += (f"each chunk with a halo of its neighbours' elements for its slices "
                      f"({halo}; none at the array's ends): da.overlap",)  # fmt: skip
        return KernelInfo(self.kernel.graph.name, "chunk kernel", self.kernel.graph.python_code(),
                          user_lines(nodes), notes)  # fmt: skip


def _overlapped(array, overlap: dict, ndim: int):
    """``array`` whose chunks carry ``overlap`` elements of their neighbours (before, after) on
    the axes it is cut along, numbered as the sink's (``ndim`` dims; an array of fewer dims
    aligns from the right, an axis of size 1 broadcasts: no halo)."""
    from dask.array.overlap import overlap as with_halo

    shift = ndim - array.ndim
    depth = {d - shift: halo for d, halo in overlap.items()
             if d >= shift and len(array.chunks[d - shift]) > 1}  # fmt: skip
    if not depth:
        return array
    return with_halo(array, depth=depth, boundary="none", allow_rechunk=False)


class ArraysFirst:
    """A kernel called by ``map_overlap``, which passes the Dask arrays alone: ``slots`` are
    the region's inputs in order, ``(True, _)`` where an array goes, ``(False, value)`` for a
    constant."""

    def __init__(self, kernel: ChunkKernel, slots: list):
        self.kernel = kernel
        self.constants = [(is_array, None if is_array else v) for is_array, v in slots]

    def __call__(self, *arrays):
        it = iter(arrays)
        return self.kernel(*[next(it) if is_array else v for is_array, v in self.constants])

    def __dask_tokenize__(self):
        return (self.kernel.key, repr(self.constants))


class NodeStep:
    """A node run as its NumPy call on Dask arrays (Dask's implementation of it)."""

    def __init__(self, node: Node):
        self.node = node

    def run(self, env: dict) -> None:
        node = self.node
        args = [_value(env, a) for a in node.args]
        kwargs = {k: _value(env, v) for k, v in node.kwargs.items()}
        if getattr(node.target, "__objclass__", None) is np.ndarray and is_dask_array(args[0]):
            # a method the graph names by NumPy's descriptor (np.ndarray.copy): Dask's own
            env[node] = getattr(args[0], node.target.__name__)(*args[1:], **kwargs)
            return
        if node.op == "call" and kwargs:
            args, kwargs = _positional(node.target, args, kwargs)
        env[node] = run_node(node, args, kwargs)

    def info(self, index: int) -> KernelInfo:
        del index
        node = self.node
        text = node.graph.format_node(node)
        return KernelInfo(node.name, "dask", text, user_lines(node),
                          ("not chunk-local: dask.array's own operation, as plain Dask runs it",))  # fmt: skip


def _positional(target, args: list, kwargs: dict) -> tuple[list, dict]:
    """``args, kwargs`` with the keywords that NumPy's signature also takes by position moved
    there: the graph names arguments (``np.clip(x, a_min=0, a_max=1)``) by NumPy's names, which
    Dask's implementations do not all share (``da.clip(x, min, max)``)."""
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a ufunc, a builtin: its keywords are the same for Dask
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for parameter in parameters[len(args) :]:
        if parameter.kind is not parameter.POSITIONAL_OR_KEYWORD or parameter.name not in kwargs:
            break
        args.append(kwargs.pop(parameter.name))
    return args, kwargs


def _value(env: dict, obj):
    """``obj`` (a node's argument) with the values of the nodes in it."""
    return map_leaves(obj, lambda v: env[v] if isinstance(v, Node) else v)


def _chunk_text(chunks: tuple) -> str:
    """The first chunk's shape: ``(60, 90)``."""
    return str(tuple(c[0] for c in chunks))


class DaskGraph:
    """The compiled graph's callable on Dask inputs (and constants): ``steps`` compute the
    values that ``outputs`` (the graph's output tuple, of nodes and constants) names;
    ``nodes`` are the graph's, its for loops unrolled, which the steps run."""

    def __init__(self, inputs: list[Node], nodes: list[Node], steps: list, outputs: tuple):
        self.inputs = inputs
        self.nodes = nodes
        self.steps = steps
        self.outputs = outputs

    def __call__(self, *inputs):
        env = dict(zip(self.inputs, inputs))
        for step in self.steps:
            step.run(env)
        return _value(env, self.outputs)


def plan(graph, stand_ins: list, chunk_backend) -> DaskGraph:
    """The runner of ``graph`` on inputs like ``stand_ins``. For loops of a constant count are
    unrolled first (`unrolling`). A pass over the nodes finds each one's chunks without
    computing anything: a chunk-local node's from its value for the first chunk (of zeros),
    any other's by Dask's operation on the stand-ins. Where a region's windows do not line up
    from its own inputs (`windows`), that node runs as plain Dask and the plan is made again."""
    plain: set = set()  # the keys (`_chunk_values`) of the nodes that run as plain Dask
    while True:
        nodes, outputs = unrolled(graph)
        nodes, keys, values, blocks = _chunk_values(graph.inputs, stand_ins, nodes, plain)
        found = regions(nodes, {id(n) for n in blocks})
        try:
            overlaps = [window_depth(r.nodes, values) for r in found]
        except Unaligned as error:
            plain.add(keys[id(error.node)])
            continue
        break
    sinks = {id(r.sink): (r, overlap) for r, overlap in zip(found, overlaps)}
    inside = {id(n) for r in found for n in r.nodes}
    steps = []
    for node in nodes:
        region, overlap = sinks.get(id(node), (None, None))
        if region is not None:
            examples = [blocks.get(n, _block_of(values[n])) for n in region.inputs]
            chunk_of = {**dict(zip(region.inputs, examples)), **blocks}
            kernel_graph = region_graph(f"{graph.name}_chunk_{len(steps)}", region.inputs,
                                        region.nodes, chunk_of)  # fmt: skip
            kernel = ChunkKernel(kernel_graph, chunk_backend)
            kernel.build(examples)
            steps.append(RegionStep(region, kernel, values, overlap))
        elif id(node) not in inside:
            steps.append(NodeStep(node))
    return DaskGraph(graph.inputs, nodes, steps, outputs)


def _chunk_values(inputs: list[Node], stand_ins: list, nodes: list[Node], plain: set):
    """The nodes to run, with the first step of a reduction's tree split off where it may end
    a region (`partial_reduction`), and what is known of each one's value (Dask arrays chunked
    as the regions will make them, constants) and, for each chunk-local node, its value for
    the first chunk (zeros). A node's key is its position in ``nodes`` (the first step of a
    reduction's: ``("chunks", position)``); the nodes whose keys are in ``plain`` are not
    chunk-local."""
    values: dict = dict(zip(inputs, stand_ins))
    blocks: dict = {}  # a chunk-local node -> its value for the first chunk
    halos, windows = Halos(), Windows()
    planned: list[Node] = []
    keys: dict[int, object] = {}

    def admitted(node: Node) -> bool:
        reach = halos.reach_of(node, values)
        found = windows.windows_of(node, values) if reach is not None else None
        if found is None or (reach and found[0]):  # a halo wraps around (np.roll) or not
            return False
        halos.reach[id(node)] = reach
        windows.record(node, *found)
        block = _first_block(node, values, blocks)
        values[node] = _zeros(block.dtype, windows.chunks(node, region_chunks(node, values, block)))
        blocks[node] = block
        return True

    for position, node in enumerate(nodes):
        partial = partial_reduction(node, values, blocks)
        if partial is not None and ("chunks", position) not in plain and admitted(partial):
            keys[id(partial)] = ("chunks", position)
            planned.append(partial)
            node.args = (partial,)  # a copy of the graph's node (`unrolled`)
        local = position not in plain and chunk_local(node, values, windows.grids)
        if not (local and admitted(node)):
            _plain(node, values)
        keys[id(node)] = position
        planned.append(node)
    return planned, keys, values, blocks


def _plain(node: Node, values: dict) -> None:
    """``node``'s value by Dask's own operation, where it can be known without computing."""
    if node.op == Cond.op or any(u not in values for u in nodes_in((node.args, node.kwargs))):
        return  # a cond reads its predicate's value: never computed while planning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dask's, about functions it runs in NumPy: at the call
        try:
            NodeStep(node).run(values)
        except Exception:  # noqa: BLE001 - the call raises it again, as plain Dask does
            return


def _first_block(node: Node, values: dict, blocks: dict):
    """``node``'s value for the first chunk of its operands (zeros; their errors and warnings
    are not the user's)."""
    env = {u: blocks[u] if u in blocks else _block_of(values[u])
           for u in nodes_in((node.args, node.kwargs))}  # fmt: skip
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        NodeStep(node).run(env)
    return np.asarray(env[node])


def _block_of(value):
    """A Dask array's first chunk as zeros, at most 16 long on dims cut into several chunks (the
    chunks may be large; only a slice across chunks changes their length, by less than a
    chunk); anything else as it is."""
    if is_dask_array(value):
        return np.zeros(tuple(c[0] if len(c) == 1 else min(c[0], 16) for c in value.chunks),
                        value.dtype)  # fmt: skip
    return value


def _zeros(dtype, chunks: tuple):
    """A Dask array of zeros that takes no memory, read in one task per chunk as a loaded
    array is (the stand-in of an input, or of a value the regions make)."""
    import itertools

    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    # (not da.zeros, whose tasks Dask's optimizer fuses into their users; nor da.from_array,
    # which copies its array: a stand-in may be larger than this process's memory)
    name = f"zeros-{tokenize(dtype.str, chunks)}"
    tasks = {
        (name, *place): (np.zeros, tuple(c[i] for c, i in zip(chunks, place)), dtype)
        for place in itertools.product(*(range(len(c)) for c in chunks))
    }
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=())
    return da.Array(graph, name, chunks, dtype=dtype, meta=np.empty((0,) * len(chunks), dtype))


def compile_dask_graph(graph, example_inputs, chunk_backend) -> CompiledGraph:
    """``graph`` (some of its inputs Dask arrays) as a CompiledGraph that builds Dask graphs."""
    stand_ins = []
    for node, example in zip(graph.inputs, example_inputs):
        meta = node.tensor
        if meta is not None and meta.placement == "dask":
            stand_ins.append(_zeros(meta.dtype, meta.chunks))
        else:
            stand_ins.append(example)
    runner = plan(graph, stand_ins, chunk_backend)
    steps = runner.steps
    infos = tuple(step.info(i) for i, step in enumerate(steps))
    backend = getattr(chunk_backend, "__name__", "").removesuffix("_backend")
    tasks = ""
    if not any(n.op == Cond.op for n in graph.nodes):  # building them computes no predicate
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Dask's: the call shows them
            ours = task_count(runner(*stand_ins))
        plain = dict(zip(graph.inputs, stand_ins))
        for node in runner.nodes:
            _plain(node, plain)
        theirs = task_count(_value(plain, runner.outputs))
        tasks = (f"# {ours} tasks after Dask's optimizer (plain dask.array: {theirs}), on inputs "
                 "made in one task per chunk\n")  # fmt: skip
    sources = {"plan": tasks + _describe(steps, backend)}
    kernels = [s.kernel for s in steps if isinstance(s, RegionStep)]
    for kernel in kernels:
        sources.update({f"{kernel.graph.name} {k}": v for k, v in kernel.compiled.sources.items()})
    return CompiledGraph(runner, f"dask+{backend}", MappingProxyType(sources), infos)


def task_count(results) -> int:
    """The tasks Dask runs to compute the Dask arrays among ``results`` (after its optimizer
    fuses neighbouring tasks)."""
    import dask

    keys: set = set()
    for array in dask.optimize(*[r for r in results if is_dask_array(r)]):
        keys.update(dict(array.__dask_graph__()))
    return len(keys)


def _describe(steps: list, backend: str) -> str:
    """The plan as text (the Code tab): a line per step."""
    lines = [f"# on Dask arrays: chunk kernels by the {backend} backend, one task per chunk"]
    for step in steps:
        if isinstance(step, RegionStep):
            names = ", ".join(n.name for n in step.region.inputs)
            call = "map_overlap" if step.depth else "map_blocks"
            halo = f", depth={step.depth}, boundary='periodic'" if step.depth else ""
            if step.overlap:  # each Dask input overlapped alike (not along a dim of size 1)
                names = ", ".join(f"overlap({n.name}, depth={step.overlap}, boundary='none')"
                                  for n in step.region.inputs)  # fmt: skip
            lines.append(f"{step.region.sink.name} = da.{call}({step.kernel.graph.name}, "
                         f"{names}{halo})  # chunks {_chunk_text(step.chunks)}")  # fmt: skip
        else:
            lines.append(f"{step.node.graph.format_node(step.node)}  # dask.array")
    return "\n".join(lines) + "\n"
