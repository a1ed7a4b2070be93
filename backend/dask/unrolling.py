"""For loops over Dask arrays, unrolled into the graph's nodes before its regions are found.

A loop over Dask arrays builds a Dask graph either way: Dask has no loop. Unrolled, a time loop
whose body is chunk-local (a stencil along an axis in one chunk, an element-wise update) becomes
part of one region, so each chunk runs every iteration in one task of the chunk kernel, with no
task per iteration and no chunk leaving its worker in between. A loop that does not unroll here
(a ``while``, a loop over an array's rows, a count computed in the graph, more than
`MAX_ITERATIONS`) runs as the graph prints it, its body's NumPy calls on Dask arrays: unrolled
into Dask's tasks as plain Dask code is.
"""

from __future__ import annotations

import dataclasses

from tcompile.tracer.ir.loop_nodes import ForLoop
from tcompile.tracer.ir.node import Node

from ..fused.plan import map_leaves

MAX_ITERATIONS = 64  # beyond this, a task graph per iteration costs more than it saves


def unrolled(graph) -> tuple[list[Node], object]:
    """``graph``'s nodes (but inputs and output) with each for loop of a constant count
    unrolled into copies of its body's nodes, and the graph's outputs in terms of them."""
    nodes: list[Node] = []
    rename: dict[int, object] = {}
    for node in graph.nodes:
        if node.op in ("input", "output"):
            continue
        _add(node, rename, nodes)
    return nodes, _renamed(graph.output.args[0], rename)


def _add(node: Node, rename: dict, nodes: list) -> None:
    args, kwargs = _renamed(node.args, rename), _renamed(node.kwargs, rename)
    if node.op == "getitem" and isinstance(args[0], _Unrolled):
        rename[id(node)] = args[0].outputs[args[1]]
        return
    if _unrolls(node, args):
        rename[id(node)] = _unroll(node.target, args, nodes)
        return
    copy = dataclasses.replace(node, args=args, kwargs=kwargs)
    rename[id(node)] = copy
    nodes.append(copy)


def _unrolls(node: Node, args: tuple) -> bool:
    loop = node.target
    return (
        node.op == ForLoop.op
        and not loop.over_rows
        and all(type(a) is int for a in args[:2])
        and 0 <= args[1] <= MAX_ITERATIONS
    )


@dataclasses.dataclass
class _Unrolled:
    """What an unrolled loop node stands for: its results (nodes or values), by position."""

    outputs: tuple


def _unroll(loop: ForLoop, args: tuple, nodes: list) -> _Unrolled:
    first, count = args[:2]
    carried, read = list(args[2 : 2 + loop.carried]), list(args[2 + loop.carried :])
    outputs = tuple(carried) if len(loop.returned()) == loop.carried else ()
    body_inputs = loop.body.inputs
    for k in range(first, first + count):
        rename = {id(n): v for n, v in zip(body_inputs, [k, *carried, *read])}
        for body_node in loop.body.nodes:
            if body_node.op not in ("input", "output"):
                _add(body_node, rename, nodes)
        outputs = _renamed(loop.body.output.args[0], rename)
        carried = list(outputs[: loop.carried])
    return _Unrolled(outputs)


def _renamed(obj, rename: dict):
    return map_leaves(obj, lambda v: rename.get(id(v), v) if isinstance(v, Node) else v)
