"""Compactions: a lazy selection (`selections.planned`) that nodes other than whole reductions
read, and the positions ``np.nonzero`` gives, each made by one kernel. ``np.sqrt(x[m] ** 2 +
y[m] ** 2)`` is the expression computed on the whole arrays where ``m`` holds, its values
written in order (`loop_ir.Compacted`): no mask, no selection of ``x`` or ``y``, no temporary
is made in memory. Its result's size follows data, so what reads it runs in NumPy on the host
(`plan.Compaction` gives NumPy arrays)."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node

from .. import loop_ir as ir
from ..plan import Compaction, HostValue
from ..tensors import Lin, Pointwise, Tensor, broadcast_index
from .selections import Selection
from .shared import cast


def compact(lowering, node: Node, selection: Selection) -> HostValue:
    """The step that makes ``node``'s value, the selected elements of ``selection``."""
    source = selection.source
    xvars, index, selected = _space(lowering, node, selection.mask)
    if _reduces(source.load(index)):
        source = lowering.realize(source, f"{node.name}_values")
    value = cast(source.load(broadcast_index(index, source.shape)), node.tensor.dtype)
    (result,) = _step(lowering, node, xvars, selected, [value])
    return result


# np.where of one argument is np.nonzero; np.flatnonzero the positions in the flattened array
_POSITIONS = {id(np.nonzero): "dims", id(np.ndarray.nonzero): "dims", id(np.where): "dims",
              id(np.flatnonzero): "flat"}  # fmt: skip


def positions(lowering, node: Node) -> HostValue | tuple | None:
    """``np.nonzero(m)`` (a tuple of positions per dim), ``np.where(m)`` and
    ``np.flatnonzero(m)`` as one compaction kernel that stores positions (None for any
    other node): the truth of ``m``'s elements the selection, their index the values."""
    how = _POSITIONS.get(id(node.target)) if node.op == "call" else None
    if how is None or len(node.args) != 1 or node.kwargs:
        return None
    tensor = lowering.tensor(lowering.value(node.args[0]))
    if not tensor.shape:
        return None  # NumPy deprecates np.nonzero of a 0-d array: let it say so
    truth = tensor if tensor.dtype == np.bool_ else _nonzero(tensor)
    xvars, _, selected = _space(lowering, node, truth)
    intp = np.dtype(np.intp)
    if how == "flat":
        strides = np.cumprod((1, *tensor.shape[:0:-1]))[::-1]
        terms = tuple((v, ir.Param(int(s), "s")) for v, s in zip(xvars, strides, strict=True))
        (result,) = _step(
            lowering, node, xvars, selected, [ir.IndexValue(ir.Affine(None, terms), intp)]
        )
        return result
    values = [ir.IndexValue(ir.Affine(None, ((v, ir.Param(1, "s")),)), intp) for v in xvars]
    return _step(lowering, node, xvars, selected, values)  # a tuple, an array per dim


def _nonzero(tensor: Tensor) -> Tensor:
    """Each element's truth (NaN is true, as in NumPy)."""
    dtype, b = tensor.dtype, np.dtype(np.bool_)
    zero = ir.Constant(0, dtype)
    return Pointwise(b, tensor.shape, lambda index: ir.Op(
        np.not_equal, (tensor.load(index), zero), (dtype, dtype), (b,)))  # fmt: skip


def _space(lowering, node: Node, mask: Tensor):
    """A compaction's space (the mask's), its index, and the mask's element there: a
    compaction's space has no rows to reduce over, so a mask that reduces is made first."""
    xvars = tuple(ir.IterVar(ir.Param(size, "n")) for size in mask.shape)
    index = tuple(Lin.of(v) for v in xvars)
    if _reduces(mask.load(index)):
        mask = lowering.realize(mask, f"{node.name}_mask")
    return xvars, index, mask.load(index)


def _step(lowering, node: Node, xvars, selected: ir.Expr, values: list) -> tuple:
    """The compaction step storing each of ``values`` where ``selected`` holds; its results,
    NumPy arrays of a size known only from the count."""
    condition = ir.Compacted(selected)
    stores, results = [], []
    for value in values:
        name = lowering.fresh(node.name)
        stores.append(ir.Store(ir.Buffer(name, value.dtype, (0,), (1,)), condition, value))
        results.append(HostValue(name, value.dtype, (None,)))
    kernel = ir.Kernel(lowering.fresh(f"k_{node.name}"), xvars, (), stores,
                       lines=lowering.lines())  # fmt: skip
    kernel.verify(formed=False)
    lowering.plan.steps.append(Compaction(kernel, tuple(results)))
    return tuple(results)


def _reduces(expr: ir.Expr) -> bool:
    return any(isinstance(n, ir.Reduce) for n in ir.walk(expr))
