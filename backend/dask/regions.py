"""Which nodes of a graph run chunk by chunk, grouped into regions of one task per chunk.

A node is *chunk-local* when each chunk of its result is computed from the same chunk of each
array it reads: an element-wise operation whose Dask operands are chunked exactly as its result
(on the dims they share, aligned from the right); a reduction, or an operation along an axis
(``np.roll``, ``np.cumsum``, ``np.diff``...), over axes that each lie in one chunk (a roll
across chunks too, its tasks given a halo: `halos`); slicing (``u[:, 1:-1]``; across chunks
too, its tasks given a halo: `windows`). A region is a group of chunk-local nodes whose values
are only used inside it, but for its last node (the *sink*): the region runs as one
``map_blocks`` task per chunk of the sink, its kernel the per-chunk backend's code of the
region's nodes. A reduction that drops its axes (no ``keepdims``) is always a sink: its tasks
drop those axes of the region's chunks. Every other node runs as the same NumPy call on Dask
arrays (Dask's own implementation of it, a tree reduction for a reduction across chunks), which
Dask's optimizer fuses with the tasks next to it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from tcompile.tracer.ir.node import Node, nodes_in

from .. import lowering_kinds

# Reductions a region may hold: their chunk kernel computes what Dask's tree reduction does over
# an axis in one chunk, bit for bit (NumPy's var and std take another path than Dask's moments).
_REGION_REDUCTIONS = frozenset(id(f) for f in (np.sum, np.prod, np.max, np.min, np.mean, np.any,
                                               np.all))  # fmt: skip
# Reductions that Dask computes as a tree whose first step is the same call with ``keepdims``
# on each chunk, its later steps the same call on the chunks' results (`partial_reduction`).
_TREE_REDUCTIONS = frozenset(id(f) for f in (np.sum, np.prod, np.max, np.min, np.any, np.all))
# Operations along their ``axis`` argument, each line of it on its own: chunk by chunk where the
# axis lies in one chunk.
# (Not np.sort: Dask runs it in NumPy, and returns a NumPy array.)
_ALONG_AXIS = frozenset(id(f) for f in (np.roll, np.cumsum, np.cumprod, np.diff, np.flip))
# Element-wise by the lowering table, yet not so chunk by chunk (they join or reshape arrays).
_NOT_ELEMENTWISE = frozenset(id(f) for f in (np.concatenate, np.stack, np.outer,
                                             np.ndarray.flatten))  # fmt: skip


@dataclass
class Region:
    """Chunk-local nodes in graph order, the last one the sink (the region's one result);
    ``inputs`` are the values from outside it that they read, in order of first use."""

    nodes: list[Node] = field(default_factory=list)
    inputs: list[Node] = field(default_factory=list)

    @property
    def sink(self) -> Node:
        return self.nodes[-1]


_UNKNOWN = object()


def is_dask_array(value) -> bool:
    return type(value).__module__.partition(".")[0] == "dask" and hasattr(value, "chunks")


def chunk_local(node: Node, values: dict, grids=None) -> bool:
    """Whether each chunk of ``node``'s value comes from the same chunks of the Dask arrays it
    reads (``values``: what is known of the nodes before it: Dask arrays chunked as the regions
    make them, constants; ``grids(node, value)``: the chunks a value lines up by, its own
    unless it is a window of another array's: `windows`)."""
    if node.op not in ("call", "getitem"):
        return False
    used = nodes_in((node.args, node.kwargs))
    operands = [values.get(u, _UNKNOWN) for u in used]
    if any(v is _UNKNOWN for v in operands) or not any(is_dask_array(v) for v in operands):
        return False
    if node.op == "getitem":
        return _slices_in_chunks(node, values)
    if id(node.target) in _ALONG_AXIS:
        return _along_axis_in_chunks(node, values)
    kind = lowering_kinds.lowering_kind(node.op, node.target, node.args)
    if kind == lowering_kinds.POINTWISE and id(node.target) not in _NOT_ELEMENTWISE:
        if any(isinstance(v, np.ndarray) and v.ndim for v in operands):
            return False  # a NumPy array among Dask ones: Dask chunks it its own way
        grids = grids or (lambda u, v: v.chunks)
        return _aligned([grids(u, v) for u, v in zip(used, operands) if is_dask_array(v)])
    if kind == lowering_kinds.REDUCTION and id(node.target) in _REGION_REDUCTIONS:
        return _reduction_in_chunks(node, values)
    return False


def _aligned(chunks: list[tuple]) -> bool:
    """Arrays of these chunks are chunked alike on each dim they share (aligned from the
    right), but for a dim of size 1 in one chunk that one broadcasts along (each task gets
    that chunk)."""
    ndim = max(len(c) for c in chunks)
    for d in range(1, ndim + 1):  # from the last dim
        found = {c[-d] for c in chunks if len(c) >= d and c[-d] != (1,)}
        if len(found) > 1:
            return False
    return True


def _reduction_in_chunks(node: Node, values: dict) -> bool:
    if len(node.args) != 1 or set(node.kwargs) - {"axis", "keepdims", "dtype"}:
        return False
    source = values.get(node.args[0])
    if not is_dask_array(source) or not source.ndim:
        return False
    return all(len(source.chunks[a]) == 1 for a in reduced_axes(node, source.ndim))


def _along_axis_in_chunks(node: Node, values: dict) -> bool:
    source = values.get(node.args[0]) if node.args else None
    axis = node.kwargs.get("axis")
    if not is_dask_array(source) or axis is None or not isinstance(node.args[0], Node):
        return False
    if nodes_in((node.args[1:], node.kwargs)):
        return False  # a shift or an n that is an array of the graph
    if node.target is np.roll:
        return True  # across chunks too, each chunk given a halo (`halos`)
    axes = {a % source.ndim for a in (axis if isinstance(axis, tuple) else (axis,))}
    return all(len(source.chunks[d]) == 1 for d in axes)


def _slices_in_chunks(node: Node, values: dict) -> bool:
    """``x[slices]`` whose bounds are numbers when planning: each chunk of the result is the
    same slice of a chunk of ``x`` where a slice cuts only dims in one chunk; a slice of a dim
    cut into chunks is a window of it (`windows`: admitted there or not)."""
    source = values.get(node.args[0])
    index = slice_index(node.args[1], source.ndim) if is_dask_array(source) else None
    if index is None:
        return False
    bounds = [b for cut in index for b in (cut.start, cut.stop, cut.step)]
    return all(isinstance(values.get(b) if isinstance(b, Node) else b, (int, np.integer, type(None)))
               for b in bounds)  # fmt: skip


def slice_index(index, ndim: int) -> tuple[slice, ...] | None:
    """``index`` as one slice per dim (``...`` and missing dims as ``:``); None unless it is
    made of slices and at most one ``...``."""
    index = index if isinstance(index, tuple) else (index,)
    if not all(i is Ellipsis or isinstance(i, slice) for i in index):
        return None
    if sum(i is Ellipsis for i in index) > 1:
        return None
    if any(i is Ellipsis for i in index):
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (ndim - len(index) + 1) + index[at + 1 :]
    return index + (slice(None),) * (ndim - len(index))


def partial_reduction(node: Node, values: dict, blocks: dict) -> Node | None:
    """For a reduction over axes cut into chunks, of a value a region computes: the first step
    of Dask's tree, the same call with ``keepdims`` on each chunk (its result one element per
    chunk along those axes), which may end that region; the reduction then runs Dask's tree on
    its results, which are the chunk step's results of plain Dask bit for bit. None for
    anything else."""
    if node.op != "call" or id(node.target) not in _TREE_REDUCTIONS or len(node.args) != 1:
        return None
    operand = node.args[0]
    source = values.get(operand)
    if set(node.kwargs) - {"axis", "keepdims", "dtype"} or operand not in blocks:
        return None
    if all(len(source.chunks[a]) == 1 for a in reduced_axes(node, source.ndim)):
        return None  # within chunks: chunk-local as it is
    return dataclasses.replace(node, name=f"{node.name}_chunks",
                               kwargs={**node.kwargs, "keepdims": True})  # fmt: skip


def region_chunks(node: Node, values: dict, block) -> tuple:
    """The chunks of a chunk-local node's value, given ``block``, its value for the first chunk:
    a dim cut into several chunks keeps its operands' chunks (no chunk-local operation changes
    one), a dim in one chunk is as long as the block's."""
    arrays = [values[u] for u in nodes_in((node.args, node.kwargs)) if is_dask_array(values[u])]
    dims: list[list] = [[] for _ in range(block.ndim)]
    if drops_axes(node) and block.ndim < arrays[0].ndim:
        axes = reduced_axes(node, arrays[0].ndim)
        kept = [c for d, c in enumerate(arrays[0].chunks) if d not in axes]
        dims = [[c] for c in kept]
    else:
        for array in arrays:
            for d in range(1, min(array.ndim, block.ndim) + 1):
                dims[-d].append(array.chunks[-d])
    chunks = tuple(
        next((c for c in found if len(c) > 1), (block.shape[d],)) for d, found in enumerate(dims)
    )
    if is_reduction(node) and not drops_axes(node):  # an element per chunk along the axes
        axes = reduced_axes(node, arrays[0].ndim)
        chunks = tuple((1,) * len(arrays[0].chunks[d]) if d in axes else c
                       for d, c in enumerate(chunks))  # fmt: skip
    return chunks


def reduced_axes(node: Node, ndim: int) -> tuple[int, ...]:
    """The axes a reduction node reduces, each in ``range(ndim)``."""
    axis = node.kwargs.get("axis")
    axes = range(ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return tuple(sorted({a % ndim for a in axes}))


def is_reduction(node: Node) -> bool:
    return lowering_kinds.lowering_kind(node.op, node.target, node.args) == lowering_kinds.REDUCTION


def drops_axes(node: Node) -> bool:
    """A reduction without ``keepdims``: its result has fewer dims than its operand."""
    return is_reduction(node) and node.kwargs.get("keepdims") is not True


def regions(nodes: list[Node], local: set[int]) -> list[Region]:
    """The chunk-local nodes (their ids in ``local``) grouped from the last node back: a node
    joins the region of its users when they are all in one region; else it is the sink of a
    region of its own."""
    users: dict[Node, list[Node]] = {}
    for node in nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users.setdefault(used, []).append(node)
    region_of: dict[Node, Region] = {}
    found: list[Region] = []
    for node in reversed(nodes):
        if id(node) not in local:
            continue
        joined = {id(region_of.get(u)) for u in users.get(node, ())}
        joins = node in users and len(joined) == 1 and not drops_axes(node)
        region = region_of.get(users[node][0]) if joins else None
        if region is None:
            region = Region()
            found.append(region)
        region.nodes.insert(0, node)
        region_of[node] = region
    for region in found:
        inside = set(map(id, region.nodes))
        for node in region.nodes:
            for used in nodes_in((node.args, node.kwargs)):
                if id(used) not in inside and used not in region.inputs:
                    region.inputs.append(used)
    return found[::-1]
