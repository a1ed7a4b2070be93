"""Cond nodes (a branch on data): one `DeviceCond` step that reads the predicate on the host and
runs the side it picks as a program of its own, on the call's device buffers."""

from __future__ import annotations

from tcompile.tracer.ir.cond_nodes import Cond, side_not_traced
from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from ..plan import DeviceCond, WholeGraphInNumPy
from .externs import extern_arg, host_writes
from .loops import input_memory, result_slots
from .registry import lowers


@lowers(kind=lowering_kinds.COND, op=Cond.op)
def cond(lowering, node: Node) -> tuple:
    """``cond(pred, *read)``: the results are buffers of the step's own, which the side taken
    fills."""
    sides = [body for body in node.target.bodies if not _untraced(body)]
    for body in sides:
        for made in body.output.args[0]:
            if isinstance(made, Node):
                _check_identity(lowering, node, body, made)
    # by position, what a side makes of the graph (the other may give a constant there)
    made = [next((v for v in values if isinstance(v, Node)), values[0])
            for values in zip(*(body.output.args[0] for body in sides))]  # fmt: skip
    results = result_slots(lowering, tuple(made), "the branch")
    pred, *args = (extern_arg(lowering, a) for a in node.args)
    writes = host_writes(lowering, node)
    lowering.plan.steps.append(DeviceCond(node, pred, tuple(args), tuple(results), writes))
    return tuple(results)


def _untraced(body) -> bool:
    """A side that raises (eager code runs it, if a call takes it: `side_not_traced`)."""
    return any(n.target is side_not_traced for n in body.nodes)


def _check_identity(lowering, node: Node, body, made: Node) -> None:
    """A side that gives back an array from before the branch (a side leaving a local alone)
    gives NumPy that very array; the step gives a copy. Where the copy could be told apart (the
    array is the caller's memory, a view, or read after the branch), the graph runs in NumPy."""
    given = input_memory(made)
    if given is None:
        return
    arg = node.args[1 + body.inputs.index(given)]
    if isinstance(arg, Node) and (
        input_memory(arg) is not None
        or (arg.tensor is not None and arg.tensor.view_of)
        or lowering.last_use.get(arg, -1) > lowering.position
    ):
        raise WholeGraphInNumPy(f"a side of the branch gives back {arg.name} itself, which the "
                                "caller or the code after the branch holds")  # fmt: skip
