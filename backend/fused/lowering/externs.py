"""Extern steps: what the kernels cannot do runs as the node's own NumPy call on host copies of
its arguments (exact, exceptions included), marked "extern" in the report with the reason."""

from __future__ import annotations

from tcompile.tracer.ir.node import Node

from .. import loop_ir as ir
from ..plan import Extern, HostValue, Known, NumpyScalar, map_leaves
from ..tensors import BufferTensor, Tensor, strided
from .outputs import in_memory
from .shared import written_args


def extern(lowering, node: Node, reason: str):
    """``node`` run by NumPy on the host: its arguments realized, its results uploaded."""
    args = tuple(extern_arg(lowering, a, host=True) for a in node.args)
    kwargs = {k: extern_arg(lowering, v, host=True) for k, v in node.kwargs.items()}
    writes = host_writes(lowering, node)
    results = _results(lowering, node)
    step = Extern(node, args, kwargs, results, writes, reason)
    lowering.plan.steps.append(step)
    lowering.plan.externs.append(step)
    return results[0] if node.has_value and results else None


def host_writes(lowering, node: Node) -> tuple[ir.Buffer, ...]:
    """The buffers a step run outside the kernels (an extern, a loop) writes in place; the
    pending values that read them are computed first."""
    writes = tuple(
        lowering.values[n].buffer
        for n in written_args(node)
        if isinstance(lowering.values.get(n), BufferTensor)
    )
    for buffer in writes:
        lowering.before_write(buffer)
        lowering.note_written(buffer)
    return writes


def extern_arg(lowering, arg, host: bool = False):
    """``arg`` as a step outside the kernels takes it: tensors in memory; for NumPy on the
    host (``host``), in NumPy's memory of them (`in_memory`), and a value the trace saw
    as a NumPy scalar as one (`NumpyScalar`)."""

    def leaf(item):
        if not isinstance(item, Node):
            return Known(item)
        value = lowering.values[item]
        if isinstance(value, Tensor) and strided(value) is None:
            # a loop's body takes device views, which have no negative strides
            value = in_memory(lowering, item) if host else lowering.realize(value, item.name)
        scalar = host and item.tensor is not None and item.tensor.kind == "scalar"
        return NumpyScalar(value) if scalar and isinstance(value, Tensor) else value

    return map_leaves(arg, leaf)


def _results(lowering, node: Node) -> tuple:
    meta = node.tensor
    if not node.has_value:
        return ()
    if meta is None:  # a Python value (a loop's float counter taken from its tuple)
        return (HostValue(lowering.fresh(node.name)),)
    if (
        meta.kind == "array"
        and lowering.target.holds(meta.dtype)
        and all(isinstance(d, int) for d in meta.shape)
    ):
        buffer = lowering.buffer(node.name, meta.dtype, tuple(meta.shape))
        return (BufferTensor.whole(buffer),)
    return (HostValue(lowering.fresh(node.name), meta.dtype if meta.kind == "scalar" else None),)
