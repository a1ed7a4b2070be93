"""Cond nodes (a branch on data). Where both sides are pure and cheap (element-wise operations and
views of a few nodes, nothing written, nothing that raises), a select: both sides lowered in
place and each result chosen element by element (``np.where(pred, then, else)``), so they fuse
into the kernels around them and the predicate is never read on the host. Otherwise one
`DeviceCond` step that reads the predicate on the host and runs the side it picks as a program
of its own, on the call's device buffers."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.cond_nodes import Cond, side_not_traced
from tcompile.tracer.ir.node import RAISE, Node

from ... import lowering_kinds
from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..plan import DeviceCond, WholeGraphInNumPy
from ..tensors import Pointwise, Tensor, broadcast_index
from .externs import extern_arg, host_writes
from .loops import input_memory, result_slots
from .registry import lowers

# A select computes both sides: each may hold this many operations at most.
SELECT_OPS = 8
_SELECTABLE = (lowering_kinds.POINTWISE, lowering_kinds.VIEW)


@lowers(kind=lowering_kinds.COND, op=Cond.op)
def cond(lowering, node: Node) -> tuple:
    """``cond(pred, *read)``: a select where both sides allow it, else a host branch whose
    results are buffers of the step's own, which the side taken fills."""
    sides = [body for body in node.target.bodies if not _untraced(body)]
    for body in sides:
        for made in body.output.args[0]:
            if isinstance(made, Node):
                _check_identity(lowering, node, body, made)
    selected = _select(lowering, node)
    if selected is not None:
        return selected
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
    gives NumPy that very array; the step (or the select) gives a copy. Where the copy could be
    told apart (the array is the caller's memory, a view, or read after the branch), the graph
    runs in NumPy."""
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


def _select(lowering, node: Node) -> tuple | None:
    """Both sides lowered in place, each result ``where(pred, then, else)``; None where a side
    is not pure and cheap (what it lowered to is dropped then)."""
    bodies = node.target.bodies
    if not all(_selectable(body) for body in bodies):
        return None
    pred = lowering.value(node.args[0])
    if not isinstance(pred, Tensor) or pred.shape != () or pred.dtype != np.bool_:
        return None
    steps, values = len(lowering.plan.steps), dict(lowering.values)
    try:
        sides = [_lowered_in_place(lowering, node, body) for body in bodies]
    except Unlowerable:
        sides = None
    if sides is None or None in sides or len(lowering.plan.steps) != steps:
        # a side made no tensor (a Python number), or needed memory or NumPy
        del lowering.plan.steps[steps:]
        lowering.values = values
        return None
    return tuple(_where(pred, a, b) for a, b in zip(*sides, strict=True))


def _selectable(body) -> bool:
    """A side both of whose runs cost little and change nothing: a few element-wise operations
    and views, none that writes or may raise (a side not taken must not fail)."""
    nodes = [n for n in body.nodes if n.op not in ("input", "output")]
    return len(nodes) <= SELECT_OPS and all(
        not n.mutates and n.risk != RAISE and not n.sized_by_data and _element_wise(n)
        for n in nodes
    )


def _element_wise(node: Node) -> bool:
    if lowering_kinds.lowering_kind(node.op, node.target, node.args) in _SELECTABLE:
        return True
    operator = operators.of_function(node.target) if node.op == "call" else None
    return operator is not None and operator.ufunc is not None  # ``a + b``


def _lowered_in_place(lowering, node: Node, body) -> list[Tensor] | None:
    """The side's outputs as tensors: its inputs stand for the node's arguments, its nodes are
    lowered by their rules into the graph's lowering."""
    for given, arg in zip(body.inputs, node.args[1:], strict=True):
        lowering.values[given] = lowering.value(arg)
    for inner in body.nodes:
        if inner.op not in ("input", "output"):
            lowering.pending.append(inner)  # its line goes into the kernel's comments
            lowering.values[inner] = lowering.lower_node(inner)
    made = [lowering.value(v) for v in body.output.args[0]]  # (a constant: no tensor)
    return made if all(isinstance(v, Tensor) for v in made) else None


def _where(pred: Tensor, then: Tensor, otherwise: Tensor) -> Tensor:
    return Pointwise(then.dtype, then.shape, lambda index: ir.Where(
        pred.load(()), then.load(broadcast_index(index, then.shape)),
        otherwise.load(broadcast_index(index, otherwise.shape))))  # fmt: skip
