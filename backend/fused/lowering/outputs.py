"""The graph's outputs: each as the caller gets it (its own array, a view NumPy makes of one,
a buffer, a host value), and values in memory laid out as NumPy lays them out."""

from __future__ import annotations

from tcompile.tracer.ir.node import Node, memory_order

from ... import lowering_kinds
from ..dtypes import Unlowerable
from ..plan import HostValue, Known, Output
from ..tensors import BufferTensor, Tensor, is_whole, strided
from . import registry


def lower_outputs(lowering, node: Node) -> None:
    inputs = list(lowering.graph.inputs)
    for arg in node.args[0]:
        value = lowering.values[arg]
        scalar = bool(arg.tensor and arg.tensor.kind == "scalar")
        if arg in inputs:
            lowering.plan.outputs.append(Output(inputs.index(arg)))
        elif isinstance(value, (Known, HostValue)):
            lowering.plan.outputs.append(Output(value, scalar))
        elif isinstance(value, Tensor):
            lowering.plan.outputs.append(_tensor_output(lowering, value, scalar, arg))
        else:
            raise Unlowerable(f"output {arg.name} is {type(value).__name__}")


def _tensor_output(lowering, value: Tensor, scalar: bool, node: Node) -> Output:
    plan = lowering.plan
    layout = strided(value)
    if layout is not None and layout[0] in plan.inputs:
        # a view of the caller's array: the same memory
        buffer, offset, strides = layout
        position = plan.inputs.index(buffer)
        if not lowering.device_inputs[position]:  # NumPy makes it from the caller's array
            return Output(position, scalar, replay=node)
        if all(s >= 0 for s in strides):  # a view of the device array's own memory
            return Output(position, scalar, (offset, strides, value.shape))
        # torch has no negative strides: the view's values, in an array of its own
    base = _viewed(node)
    if (
        base is not None
        and isinstance(lowering.values[base], Tensor)
        and not scalar
        and not any(lowering.device_inputs)
    ):
        # a view of a value computed here (``(x * 2).T``, ``np.broadcast_to(x + 1, s)``):
        # that value in memory, and the view NumPy makes of it, with NumPy's strides and
        # flags (broadcast_to's is read-only), a copy where NumPy copies (a reshape)
        return Output(_whole(lowering, base).buffer, replay=node, base=base)
    if layout is not None:
        buffer, offset, strides = layout
        if is_whole(buffer, offset, strides, value.shape) and not scalar:
            return Output(buffer, scalar)
        if not scalar and all(s >= 0 for s in strides):
            return Output(buffer, scalar, (offset, strides, value.shape))
    return Output(_whole(lowering, node).buffer, scalar)


def in_memory(lowering, node: Node) -> Tensor:
    """``node``'s value in memory as NumPy has it: a view NumPy makes of a value computed
    here is a view of that value in memory (``np.sort((x * 2).T)`` sorts a Fortran-ordered
    array); another value is computed into memory laid out as NumPy lays it out."""
    value = lowering.values[node]
    if strided(value) is not None:
        return value
    if _is_view(node) and isinstance(lowering.values[node.args[0]], Tensor):
        in_memory(lowering, node.args[0])
        # lowered again, over that memory
        value = lowering.values[node] = registry.find(node)(lowering, node)
        if strided(value) is not None:
            return value
    return _whole(lowering, node)


def _whole(lowering, node: Node) -> BufferTensor:
    """``node``'s value in a buffer of its own, laid out as NumPy lays it out."""
    value = lowering.values[node]
    if isinstance(value, BufferTensor) and is_whole(value.buffer, value.offset,
                                                    value.strides, value.shape):  # fmt: skip
        return value
    realized = lowering.realize(value, node.name, _numpy_layout(node, value))
    lowering.values[node] = realized
    return realized


def _viewed(node: Node) -> Node | None:
    """The value a chain of views starts from, where NumPy makes ``node`` as a view (basic
    indexing, transposes, reshapes, broadcast_to: what `views` lowers), else None:
    ``(x * 2)[::2].T`` views ``x * 2``."""
    if not _is_view(node):
        return None
    while _is_view(node):
        node = node.args[0]
    return node


def _is_view(node) -> bool:
    return (
        isinstance(node, Node)
        and node.op in ("getitem", "call")
        and bool(node.args)
        and isinstance(node.args[0], Node)
        and lowering_kinds.lowering_kind(node.op, node.target, node.args) == lowering_kinds.VIEW
    )


def _numpy_layout(node: Node, value: Tensor) -> tuple | None:
    """The strides (in elements) of the array NumPy made for ``node`` when the trace saw it:
    a result keeps NumPy's memory order (``x.T + 1`` is Fortran-ordered), if it is dense; with
    sizes known only at run time, dense in the order the trace saw, for these sizes."""
    meta = node.tensor
    if meta is None or meta.kind != "array" or len(meta.shape) != len(value.shape):
        return None
    itemsize = meta.dtype.itemsize
    if meta.strides is not None:
        if meta.shape != value.shape or memory_order(meta.shape, meta.strides, itemsize) is None:
            return None
        return tuple(max(s, 0) // itemsize for s in meta.strides)
    if meta.order is None:
        return None
    strides, step = [0] * len(value.shape), 1
    for d in meta.order:
        strides[d] = step
        step *= max(value.shape[d], 1)
    return tuple(strides)
