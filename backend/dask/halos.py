"""Rolls across chunk boundaries: ``np.roll(u, 1, axis=0)`` where axis 0 is cut into chunks
is chunk-local once each chunk carries a halo of its neighbours' elements (a periodic one:
roll wraps around), as ``da.map_overlap`` gives it. A region's halo along an axis is the
largest sum of the shifts along any path of rolls through it (a time loop of four steps of
``np.roll(u, ±1)``: 4); each task computes its chunk with the halo, then drops the halo.

A halo may not be longer than the shortest chunk along its axis (a task would need more than
its neighbours), and arrays of fewer dims (broadcast along leading ones) may not meet values
that carry one, so that axes are numbered alike in the whole region.
"""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node, nodes_in

from .regions import drops_axes, is_dask_array, is_reduction, reduced_axes


def roll_shifts(node: Node, values: dict) -> dict[int, int]:
    """How far ``np.roll`` shifts along each axis cut into several chunks ({} for anything
    else, or a roll along whole axes only)."""
    if node.op != "call" or node.target is not np.roll or not node.args:
        return {}
    source = values.get(node.args[0])
    shift, axis = node.kwargs.get("shift"), node.kwargs.get("axis")
    if not is_dask_array(source) or axis is None or not isinstance(shift, (int, tuple)):
        return {}
    axes = axis if isinstance(axis, tuple) else (axis,)
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    reach: dict[int, int] = {}
    for a, s in zip(axes, shifts):
        a %= source.ndim
        if len(source.chunks[a]) > 1:
            reach[a] = reach.get(a, 0) + abs(s)
    return reach


class Halos:
    """The halo each chunk-local value needs (``reach``: axis -> elements), as the nodes are
    planned in order."""

    def __init__(self):
        self.reach: dict[int, dict[int, int]] = {}  # id(node) -> axis -> elements

    def reach_of(self, node: Node, values: dict) -> dict[int, int] | None:
        """``node``'s halo if it may be chunk-local given its operands' halos (None if not);
        the caller records it in ``reach`` once the node is admitted."""
        operands = [u for u in nodes_in((node.args, node.kwargs)) if is_dask_array(values[u])]
        reach = self._reach(node, values, operands)
        if reach:
            if drops_axes(node):
                return None  # a task drops its halo after computing: its axes must stay
            if is_reduction(node) and set(reduced_axes(node, values[operands[0]].ndim)) & set(
                reach
            ):
                return None  # a chunk's partial result over its halo
            ndim = max(values[u].ndim for u in operands)
            if any(values[u].ndim != ndim for u in operands):
                return None
            chunks = values[operands[0]].chunks
            if any(depth > min(chunks[a]) for a, depth in reach.items()):
                return None
        return reach

    def _reach(self, node: Node, values: dict, operands) -> dict[int, int]:
        """``node``'s halo: the largest of its operands' (those this tracks), plus its shift."""
        reach: dict[int, int] = {}
        for u in operands:
            for a, d in self.reach.get(id(u), {}).items():
                reach[a] = max(reach.get(a, 0), d)
        for a, d in roll_shifts(node, values).items():
            reach[a] = reach.get(a, 0) + d
        return reach


def region_depth(nodes: list[Node], values: dict) -> dict[int, int]:
    """The halo a region's tasks need: the reach of its sink through its own nodes (values
    from outside it come whole, without a halo)."""
    halos = Halos()
    for node in nodes:  # operands outside the region are not tracked: no halo
        halos.reach[id(node)] = halos._reach(node, values, nodes_in((node.args, node.kwargs)))
    return halos.reach[id(nodes[-1])]
