"""Indexing rules that read or write through data: a gather (``x[idx]``, ``x[idx, :]``), an
assignment (``x[i:j] = v``) and ``np.add.at``'s scatter of atomic adds."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..tensors import BufferTensor, DataIndex, Lin, Pointwise, Tensor, broadcast_index, strided
from .registry import lowers
from .shared import cast, constant_tensor, reads, store_affine
from .views import index_view


@lowers(kind=lowering_kinds.GATHER, op="getitem")
def gather(lowering, node: Node) -> Tensor:
    source = lowering.memory(lowering.tensor(lowering.value(node.args[0])))  # checked where read
    index = node.args[1] if isinstance(node.args[1], tuple) else (node.args[1],)
    arrays = [i for i, part in enumerate(index) if isinstance(part, Node)
              and lowering.values[part] is not None and isinstance(lowering.value(part), Tensor)]  # fmt: skip
    if (
        len(arrays) != 1
        or arrays[0] != 0
        or any(not isinstance(p, slice) or p != slice(None) for p in index[1:])
    ):
        raise Unlowerable("integer-array indexing other than x[idx] or x[idx, :]")
    idx = lowering.tensor(lowering.value(index[0]))
    if idx.dtype.kind not in "iu":
        raise Unlowerable(f"indexing with a {idx.dtype} array")
    rest = source.shape[1:]
    shape = idx.shape + rest
    size = source.shape[0]
    lowering.plan.checks = True

    def compute(i):
        value = idx.load(i[: len(idx.shape)])
        if value.dtype != np.int64:
            value = ir.Cast(value, np.dtype(np.int64))
        return source.load((DataIndex(value, size), *i[len(idx.shape) :]))

    return Pointwise(source.dtype, shape, compute)


@lowers(kind=lowering_kinds.SCATTER, op="setitem")
def setitem(lowering, node: Node) -> None:
    target, index, value = node.args
    region = index_view(lowering.tensor(lowering.values[target]), lowering.known(index))
    (source,), _ = lowering.operands((value,))
    dtype = region.dtype
    if not isinstance(source, Tensor):  # a Python number: converted now
        source = constant_tensor(_assigned(source, dtype), dtype)
    elif _assigned_as_python(value, source.dtype, dtype):
        number = source
        source = Pointwise(dtype, number.shape,
                           lambda index: ir.Cast(number.load(index), dtype, checked=True))  # fmt: skip
    lowering.store(region, source, node)
    return None


@lowers(np.add.at, host_args=True)
def scatter_add(lowering, node: Node) -> None:
    """``np.add.at(a, idx, b)`` with one integer index array: one kernel over ``idx``'s
    elements (and ``a``'s other dims) whose atomic adds make repeated indices add up, as
    NumPy's unbuffered ``ufunc.at`` does (floats in another order: rounding may differ).
    Indices out of range raise, as NumPy's."""
    if len(node.args) != 3 or node.kwargs:
        raise Unlowerable("np.add.at with other than (a, indices, b)")
    target = lowering.tensor(lowering.value(node.args[0]))
    layout = strided(target)
    if layout is None or not target.shape:
        raise Unlowerable("np.add.at into a value that is not an array in memory")
    adds = lowering.target.accumulate_dtypes
    if target.dtype not in adds:
        raise Unlowerable(f"np.add.at into {target.dtype} (atomic adds: "
                          f"{', '.join(map(str, adds))})")  # fmt: skip
    indices = lowering.value(node.args[1])
    if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
        raise Unlowerable("np.add.at with indices other than one integer array")
    (value,), _ = lowering.operands((node.args[2],))
    if not isinstance(value, Tensor):
        value = constant_tensor(value, target.dtype)
    buffer, offset, strides = layout
    shape = indices.shape + target.shape[1:]
    try:
        broadcast = np.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        broadcast = False
    if not broadcast:
        raise Unlowerable("np.add.at's values do not broadcast to the indexed elements")
    # the adds must not read the memory they change (NumPy computed them before the call)
    indices, value = (lowering.realize(t, f"{node.name}_{what}") if buffer in reads(t) else t
                      for t, what in ((indices, "indices"), (value, "values")))  # fmt: skip
    lowering.before_write(buffer)
    lowering.plan.checks = True
    xvars = tuple(ir.IterVar(ir.Param(s, "n")) for s in shape)
    index = tuple(Lin.of(v) for v in xvars)
    position = cast(indices.load(index[: len(indices.shape)]), np.dtype(np.int64))
    rest = BufferTensor(buffer, target.shape[1:], strides[1:], offset)
    base = store_affine(rest, index[len(indices.shape) :])
    where = ir.Gather(base, position, ir.Param(target.shape[0], "n"), ir.Param(strides[0], "s"))
    added = cast(value.load(broadcast_index(index, value.shape)), target.dtype)
    store = ir.Store(buffer, where, added, accumulate=True)
    lowering.emit(ir.Kernel(lowering.fresh(f"k_{node.name}"), xvars, (), [store],
                            lines=lowering.lines()))  # fmt: skip
    lowering.note_written(buffer)


def _assigned(number, dtype: np.dtype):
    """A Python number as assigning it to an item of a ``dtype`` array stores it (1.5 into
    int64 is 1); where NumPy raises or warns doing so, the node runs in NumPy."""
    item = np.empty((), dtype)
    try:
        with np.errstate(all="raise"):
            item[()] = number
    except (ArithmeticError, ValueError) as why:
        raise Unlowerable(f"{number!r} assigned into {dtype} ({why})") from None
    return item[()]


def _assigned_as_python(value, source: np.dtype, target: np.dtype) -> bool:
    """Whether assigning ``value`` to items of a ``target`` array converts it as a Python
    number, raising for some values: a NumPy scalar (not an array, which casts silently) into
    signed integers that cannot hold every value of its type (an unsigned target wraps)."""
    return (
        isinstance(value, Node)
        and value.tensor is not None
        and value.tensor.kind == "scalar"
        and target.kind == "i"
        and not np.can_cast(source, target)
    )
