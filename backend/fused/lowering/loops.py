"""Loop nodes (``loop``, ``while_loop``): one `DeviceLoop` step whose body runs as a program of
its own, its arrays staying on the device between iterations."""

from __future__ import annotations

from tcompile.tracer.ir import numpy_table
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import LOOP_OPS, ForLoop, WhileLoop
from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from ..dtypes import Unlowerable
from ..plan import DeviceLoop, HostValue, WholeGraphInNumPy
from ..tensors import BufferTensor
from .externs import extern_arg, host_writes
from .registry import lowers
from .shared import traced_order


@lowers(kind=lowering_kinds.LOOP, op=ForLoop.op)
@lowers(kind=lowering_kinds.LOOP, op=WhileLoop.op)
def loop(lowering, node: Node) -> tuple:
    """A body making values kernels cannot hold runs as an extern instead."""
    _check_loop_identity(node, lambda arg: lowering.last_use.get(arg, -1) > lowering.position)
    for start, end in zip(node.target.carried_inputs(), node.target.returned()):
        shape = start.tensor.shape if start.tensor is not None else ()
        if all(isinstance(d, int) for d in shape) and \
                traced_order(end.tensor, shape) not in (None, traced_order(start.tensor, shape)):  # fmt: skip
            # the layout of what follows from it is only known once the loop ran
            raise WholeGraphInNumPy(f"the loop's {start.name} changes its memory order in "
                                    "an iteration: NumPy lays it out after the count")  # fmt: skip
    results = result_slots(lowering, node.target.returned(), "the loop's body")
    args = tuple(extern_arg(lowering, a) for a in node.args)
    writes = host_writes(lowering, node)
    lowering.plan.steps.append(DeviceLoop(node, args, tuple(results), writes))
    return tuple(results)


def result_slots(lowering, made: tuple, what: str) -> list:
    """Where a step running a body graph (a loop's, a cond side's) puts each value ``made``:
    a buffer of its own for an array, a host value for a number."""
    results = []
    for value in made:
        if not isinstance(value, Node):  # a constant a side gives (the other, another one)
            results.append(HostValue(lowering.fresh("value")))
            continue
        meta = value.tensor
        if meta is None and value.meta in ("int", "float", "bool"):
            results.append(HostValue(lowering.fresh(value.name)))  # a counter (``sweeps += 1``)
            continue
        if meta is None or not all(isinstance(d, int) for d in meta.shape or ()):
            raise Unlowerable(f"{what} makes {value.meta} (not a sized array)")
        if meta.kind == "array" and lowering.target.holds(meta.dtype):
            results.append(BufferTensor.whole(lowering.buffer(value.name, meta.dtype, meta.shape)))
        elif meta.kind == "scalar" and lowering.target.holds(meta.dtype):
            results.append(HostValue(lowering.fresh(value.name), meta.dtype))
        else:
            raise Unlowerable(f"{what} makes {value.meta}")
    return results


def _check_loop_identity(node: Node, used_later) -> None:
    """A loop node's results are new device buffers. Where NumPy's would be arrays that exist
    already (a body giving back its inputs themselves or views of them, a while loop whose zero
    iterations give back an input or a value used later), the graph runs in NumPy as a whole:
    identity and aliasing follow from the run, not from the plan."""
    loop = node.target
    if any(input_memory(made) is not None for made in loop.returned()):
        raise WholeGraphInNumPy("a loop's body gives back its inputs (or views of them)")
    if isinstance(loop, WhileLoop):
        for arg in node.args[1 : 1 + loop.carried]:
            if isinstance(arg, Node) and (
                arg.op == "input" or (arg.tensor and arg.tensor.view_of) or used_later(arg)
            ):
                raise WholeGraphInNumPy(
                    f"with no iteration a while loop gives back {arg.name} itself, which the "
                    "caller or the code after the loop holds"
                )


def input_memory(node: Node) -> Node | None:
    """The graph input whose memory ``node``'s value is, if any: the input, a view of it, or
    what an operation writing into it (``out=``, ``+=``) returns. A number is no memory (a
    counter's ``sweeps += 1`` makes a new int)."""
    if node.tensor is None or node.tensor.kind != "array":
        return None
    while node.op != "input":
        out = node.kwargs.get("out")
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        if isinstance(out, Node):
            node = out
        elif node.op == "getitem" and getattr(node.args[0], "op", None) == Cond.op:
            node = _cond_item_memory(node.args[0], node.args[1])  # a side may give one back
            if node is None:
                return None
        elif node.op == "inplace" or (
            node.op in ("getitem", "call", "method", *LOOP_OPS)
            and node.args
            and isinstance(node.args[0], Node)
            and not numpy_table.returns_new_memory(node.op, node.target)
        ):
            node = node.args[0]
        else:
            return None
    return node


def _cond_item_memory(cond: Node, item: int) -> Node | None:
    """The argument of the cond node whose memory its item ``item`` may be: the one a side
    gives back there (itself, or a view of it)."""
    for body in cond.target.bodies:
        made = body.output.args[0]
        given = input_memory(made[item]) if isinstance(made[item], Node) else None
        if given is not None:
            return cond.args[1 + body.inputs.index(given)]
    return None
