"""Which nodes of a graph run chunk by chunk, grouped into regions of one task per chunk.

A node is *chunk-local* when each chunk of its result is computed from the same chunk of each
array it reads: an element-wise operation whose Dask operands are chunked exactly as its result
(on the dims they share, aligned from the right), or a reduction over axes that each lie in one
chunk. A region is a group of chunk-local nodes whose values are only used inside it, but for
its last node (the *sink*): the region runs as one ``map_blocks`` task per chunk of the sink,
its kernel the per-chunk backend's code of the region's nodes. A reduction that drops its axes
(no ``keepdims``) is always a sink: its tasks drop those axes of the region's chunks. Every
other node runs as the same NumPy call on Dask arrays (Dask's own implementation of it, a tree
reduction for a reduction across chunks), which Dask's optimizer fuses with the tasks next to
it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcompile.tracer.ir.node import Node, nodes_in

from .. import lowering_kinds

# Reductions a region may hold: their chunk kernel computes what Dask's tree reduction does over
# an axis in one chunk, bit for bit (NumPy's var and std take another path than Dask's moments).
_REGION_REDUCTIONS = frozenset(id(f) for f in (np.sum, np.prod, np.max, np.min, np.mean, np.any,
                                               np.all))  # fmt: skip
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


def is_dask_array(value) -> bool:
    return type(value).__module__.partition(".")[0] == "dask" and hasattr(value, "chunks")


def chunk_local(node: Node, values: dict) -> bool:
    """Whether each chunk of ``node``'s value (in ``values``, Dask arrays made by the plain
    run) comes from the same chunks of the Dask arrays it reads."""
    result = values.get(node)
    if not is_dask_array(result) or node.op != "call":
        return False
    kind = lowering_kinds.lowering_kind(node.op, node.target, node.args)
    if kind == lowering_kinds.POINTWISE and id(node.target) not in _NOT_ELEMENTWISE:
        return _operands_aligned(node, values, result.chunks)
    if kind == lowering_kinds.REDUCTION and id(node.target) in _REGION_REDUCTIONS:
        return _reduction_in_chunks(node, values, result)
    return False


def _operands_aligned(node: Node, values: dict, chunks: tuple) -> bool:
    """Every array operand is a Dask array chunked as ``chunks`` on its dims (from the right),
    or of size 1 in one chunk on a dim it broadcasts along (each task gets that chunk)."""
    for used in nodes_in((node.args, node.kwargs)):
        value = values.get(used, _UNKNOWN)
        if value is _UNKNOWN:
            return False
        if is_dask_array(value):
            mine = zip(value.chunks, chunks[len(chunks) - value.ndim :])
            if not all(c == r or c == (1,) for c, r in mine):
                return False
        elif isinstance(value, np.ndarray) and value.ndim:
            return False  # a NumPy array among Dask ones: Dask chunks it its own way
    return True


def _reduction_in_chunks(node: Node, values: dict, result) -> bool:
    if len(node.args) != 1 or set(node.kwargs) - {"axis", "keepdims", "dtype"}:
        return False
    source = values.get(node.args[0])
    if not is_dask_array(source) or not source.ndim:
        return False
    axes = reduced_axes(node, source.ndim)
    kept = [source.chunks[d] for d in range(source.ndim) if d not in axes]
    if node.kwargs.get("keepdims") is True:
        kept = [c for d, c in enumerate(result.chunks) if d not in axes] == kept
    else:
        kept = list(result.chunks) == kept
    return kept and all(len(source.chunks[a]) == 1 for a in axes)


def reduced_axes(node: Node, ndim: int) -> tuple[int, ...]:
    """The axes a reduction node reduces, each in ``range(ndim)``."""
    axis = node.kwargs.get("axis")
    axes = range(ndim) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return tuple(sorted({a % ndim for a in axes}))


def drops_axes(node: Node) -> bool:
    """A reduction without ``keepdims``: its result has fewer dims than its operand."""
    return (
        lowering_kinds.lowering_kind(node.op, node.target, node.args) == lowering_kinds.REDUCTION
        and node.kwargs.get("keepdims") is not True
    )


_UNKNOWN = object()


def regions(nodes: list[Node], values: dict) -> list[Region]:
    """Chunk-local nodes grouped from the last node back: a node joins the region of its users
    when they are all in one region; else it is the sink of a region of its own."""
    users: dict[Node, list[Node]] = {}
    for node in nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users.setdefault(used, []).append(node)
    region_of: dict[Node, Region] = {}
    found: list[Region] = []
    for node in reversed(nodes):
        if not chunk_local(node, values):
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
