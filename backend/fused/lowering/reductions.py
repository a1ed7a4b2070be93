"""Reduction rules: NumPy's reductions and ``ufunc.reduce``, argmax/argmin, and mean, var and
std as NumPy's ``_methods`` computes them; rows reduce in the kernel that needs them."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..tensors import Lin, Pointwise, Reduction, Tensor, View
from . import selections
from .registry import lowers
from .shared import binary, cast_tensor
from .views import flatten

# ``ufunc.reduce`` as the reduction it computes.
_UFUNC_REDUCTIONS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                     np.logical_or: "any", np.logical_and: "all"}  # fmt: skip


@lowers(kind=lowering_kinds.REDUCTION)
def reduction(lowering, node: Node) -> Tensor:
    target = node.target
    kwargs = dict(node.kwargs)
    selection = selections.reduced(lowering, node)
    if selection is not None:  # x[m].sum()
        return selections.reduce(target.__name__, selection, node.tensor.dtype)
    source = lowering.tensor(lowering.value(node.args[0]))
    if len(node.args) > 1:
        raise Unlowerable("reduction with positional options")
    name = getattr(target, "__name__", "")
    default_axis = None
    if isinstance(getattr(target, "__self__", None), np.ufunc):  # np.add.reduce(x, axis=0)
        name = _UFUNC_REDUCTIONS.get(target.__self__)
        if name is None:
            raise Unlowerable(f"np.{target.__self__.__name__}.reduce")
        default_axis = 0
    axis = lowering.known_kw(kwargs, "axis", default_axis)
    keepdims = bool(lowering.known_kw(kwargs, "keepdims", False))
    ddof = lowering.known_kw(kwargs, "ddof", 0)
    dtype_arg = lowering.known_kw(kwargs, "dtype", None)
    if kwargs:
        raise Unlowerable(f"np.{target.__name__} with {', '.join(kwargs)}=")
    ndim = len(source.shape)
    axes = tuple(range(ndim)) if axis is None else tuple(
        a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))  # fmt: skip
    if any(source.shape[a] == 0 for a in axes):
        raise Unlowerable("a reduction over an empty axis (NumPy decides what it gives)")
    result_dtype = node.tensor.dtype
    if name in ("argmax", "argmin"):
        if axis is not None and len(axes) != 1:
            raise Unlowerable("argmax over several axes")
        if axis is None:
            flat = flatten(lowering, source)
            return Reduction(name, flat, (0,), keepdims, np.dtype(np.intp))
        return Reduction(name, source, axes, keepdims, np.dtype(np.intp))
    if name in ("mean", "var", "std"):
        return _moments(name, source, axes, keepdims, dtype_arg, ddof, result_dtype)
    if name not in ir.REDUCTIONS:
        raise Unlowerable(f"the reduction {name or target!r}")
    # float16 sums accumulate in float32, closer to NumPy's pairwise sum than a float16 one
    wide = name in ("sum", "prod") and result_dtype == np.float16
    acc = np.dtype(np.float32) if wide else result_dtype
    body = source if source.dtype == acc else cast_tensor(source, acc)
    return cast_tensor(Reduction(name, body, axes, keepdims, acc), result_dtype)


def _moments(name, source, axes, keepdims, dtype_arg, ddof, result_dtype):
    """mean, var and std as NumPy's ``_methods`` computes them: sums in the accumulation
    dtype, divided by the count; var subtracts the mean first (two passes)."""
    count = int(np.prod([source.shape[a] for a in axes]))
    if source.dtype.kind in "iub":
        acc = np.dtype(dtype_arg) if dtype_arg is not None else np.dtype(np.float64)
    elif source.dtype == np.float16 and dtype_arg is None:
        acc = np.dtype(np.float32)
    else:
        acc = np.dtype(dtype_arg) if dtype_arg is not None else source.dtype
    if acc.kind != "f":
        raise Unlowerable(f"np.{name} accumulating in {acc}")
    body = source if source.dtype == acc else cast_tensor(source, acc)
    total = Reduction("sum", body, axes, True, acc)
    mean = _divide_by(total, count, acc)
    if name == "mean":
        return cast_tensor(_squeeze(mean, axes, keepdims), result_dtype)
    if count - ddof <= 0:
        raise Unlowerable(f"np.{name} with ddof={ddof} over {count} values (NumPy warns)")
    centered = binary(np.subtract, body, mean, acc)
    squares = binary(np.multiply, centered, centered, acc)
    var = _divide_by(Reduction("sum", squares, axes, keepdims, acc), max(count - ddof, 0), acc)
    if name == "std":
        var = Pointwise(acc, var.shape, lambda index, v=var: ir.Op(np.sqrt, (v.load(index),),
                                                                    (acc,), (acc,)))  # fmt: skip
    return cast_tensor(var, result_dtype)


def _divide_by(tensor: Tensor, count: int, dtype: np.dtype) -> Tensor:
    divisor = ir.Constant(count, dtype)
    loop = (dtype, dtype)
    return Pointwise(dtype, tensor.shape,
                     lambda index: ir.Op(np.true_divide, (tensor.load(index), divisor), loop, (dtype,)))  # fmt: skip


def _squeeze(tensor: Tensor, axes: tuple[int, ...], keepdims: bool) -> Tensor:
    if keepdims:
        return tensor
    shape = tuple(s for i, s in enumerate(tensor.shape) if i not in axes)

    def remap(index):
        it = iter(index)
        return tuple(Lin() if i in axes else next(it) for i in range(len(tensor.shape)))

    return View(tensor, shape, remap)
