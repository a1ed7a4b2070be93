"""Pointwise rules: ufuncs (Python's operators included), ``np.where``, ``np.clip``, casts,
copies, joins (``np.concatenate``/``np.stack``), ``np.outer`` and constant arrays
(``np.zeros``...): each element is an expression of its index, nothing computed yet."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from .. import loop_ir as ir
from ..dtypes import Unlowerable, check_fits
from ..plan import Known
from ..tensors import DataIndex, Lin, Pointwise, Tensor, View, index_value
from .registry import lowers, not_lowered
from .shared import cast, check_dtype, constant_tensor, describe, operand_expr
from .views import flatten

_INT64 = np.dtype(np.int64)


@lowers(kind=lowering_kinds.POINTWISE)
def ufunc_call(lowering, node: Node, ufunc: np.ufunc | None = None):
    """A ufunc (``ufunc``, else the node's target) on tensors and weak Python scalars; with
    ``out=``, stored into the outputs."""
    ufunc = node.target if ufunc is None else ufunc
    if set(node.kwargs) - {"out", "where"} or set(node.kwargs) == {"where"}:
        raise Unlowerable(f"np.{ufunc.__name__} with {', '.join(node.kwargs)}=")
    operands, types = lowering.operands(node.args)
    in_dtypes, out_dtypes = lowering.target.ufunc_loop(ufunc, types)
    shape = np.broadcast_shapes(*(o.shape for o in operands if isinstance(o, Tensor)))

    def compute(index, output=0):
        args = tuple(operand_expr(o, index, d) for o, d in zip(operands, in_dtypes))
        return ir.Op(ufunc, args, in_dtypes, out_dtypes, output)

    results = [Pointwise(out_dtypes[i], shape, lambda index, i=i: compute(index, i))
               for i in range(ufunc.nout)]  # fmt: skip
    if "out" in node.kwargs:
        outs = node.kwargs["out"]
        outs = outs if isinstance(outs, tuple) else (outs,)
        mask = lowering.value(node.kwargs["where"]) if "where" in node.kwargs else None
        for target, result in zip(outs, results):
            if mask is not None:  # elsewhere the output keeps what it holds
                result = _where(
                    lowering.tensor(mask), result, lowering.tensor(lowering.values[target])
                )
            lowering.store(lowering.values[target], result, node)
        return None
    check_dtype(node, results[0] if ufunc.nout == 1 else None)
    return results[0] if ufunc.nout == 1 else tuple(results)


def _where(mask: Tensor, result: Tensor, kept: Tensor) -> Tensor:
    """``result`` where ``mask`` holds, ``kept`` (the output) elsewhere: a ufunc's ``where=``,
    in the output's dtype."""
    return Pointwise(kept.dtype, kept.shape, lambda index: ir.Where(
        operand_expr(mask, index, np.dtype(bool)), operand_expr(result, index, kept.dtype),
        kept.load(index)))  # fmt: skip


@lowers(*(fn for op in operators.OPERATORS if op.ufunc is not None for fn in (op.fn, op.inplace)
          if fn is not None))  # fmt: skip
def operator_call(lowering, node: Node):
    """``a + b``, ``a += b``: the operator's ufunc, with NumPy scalars' arithmetic."""
    if node.kwargs:
        raise not_lowered(node)
    return ufunc_call(lowering, node, operators.of_function(node.target).ufunc)


@lowers(np.where)
def where(lowering, node: Node) -> Tensor:
    if len(node.args) != 3 or node.kwargs:
        raise Unlowerable("np.where with one argument (its shape depends on data)")
    (cond, a, b), types = lowering.operands(node.args)
    dtype = np.result_type(*types[1:])
    shape = np.broadcast_shapes(*(o.shape for o in (cond, a, b) if isinstance(o, Tensor)))

    def compute(index):
        c = operand_expr(cond, index, np.dtype(bool))
        return ir.Where(c, operand_expr(a, index, dtype), operand_expr(b, index, dtype))

    result = Pointwise(dtype, shape, compute)
    check_dtype(node, result)
    return result


@lowers(np.clip)
def clip(lowering, node: Node) -> Tensor:
    bounds = [node.kwargs[k] for k in ("a_min", "a_max") if k in node.kwargs]
    if len(node.args) + len(bounds) != 3 or set(node.kwargs) - {"a_min", "a_max"}:
        raise Unlowerable("np.clip with out=, min=/max= or one bound")
    operands, _ = lowering.operands((*node.args, *bounds))
    if any(isinstance(o, Known) or o is None for o in operands):
        raise Unlowerable("np.clip with a None bound")
    x, low, high = operands
    dtype = node.tensor.dtype
    shape = np.broadcast_shapes(*(o.shape for o in operands if isinstance(o, Tensor)))
    loop = (dtype, dtype)

    def compute(index):
        v = ir.Op(np.maximum, (operand_expr(x, index, dtype), operand_expr(low, index, dtype)),
                  loop, (dtype,))  # fmt: skip
        return ir.Op(np.minimum, (v, operand_expr(high, index, dtype)), loop, (dtype,))

    return Pointwise(dtype, shape, compute)


@lowers(np.ndarray.astype)
def astype(lowering, node: Node) -> Tensor:
    source = lowering.tensor(lowering.value(node.args[0]))
    dtype = np.dtype(lowering.known(node.args[1]) if len(node.args) > 1 else node.kwargs["dtype"])
    extra = set(node.kwargs) - {"dtype", "copy"}
    if extra or len(node.args) > 2:
        raise Unlowerable(f"astype with {', '.join(extra) or 'positional options'}")
    if node.kwargs.get("copy") is False and dtype == source.dtype:
        return source  # the array itself, as NumPy returns it
    lowering.target.check_dtype(dtype)
    return Pointwise(dtype, source.shape, lambda index: cast(source.load(index), dtype))


@lowers(np.copy, np.ndarray.copy, np.ndarray.flatten)
def copy(lowering, node: Node) -> Tensor:
    """A new array with the same values (its layout is NumPy's where it is returned)."""
    options = set(node.kwargs) - {"order"}
    order = lowering.known(node.kwargs.get("order", "C" if node.target is not np.copy else "K"))
    if options or len(node.args) != 1 or (node.target is np.ndarray.flatten and order != "C"):
        raise Unlowerable(f"{describe(node)} with options")
    source = lowering.tensor(lowering.value(node.args[0]))
    shape = (int(np.prod(source.shape)),) if node.target is np.ndarray.flatten else source.shape
    if shape != source.shape:
        source = flatten(lowering, source)
    return Pointwise(source.dtype, shape, source.load)


@lowers(np.outer)
def outer(lowering, node: Node) -> Tensor:
    """``np.outer(a, b)``: ``a.ravel()[:, None] * b.ravel()[None, :]``, as NumPy defines it
    (gemver's rank-one updates: a kernel, not a trip to the host)."""
    if node.kwargs or len(node.args) != 2:
        raise Unlowerable("np.outer with out=")
    operands, types = lowering.operands(node.args)
    if not all(isinstance(o, Tensor) for o in operands):
        raise Unlowerable("np.outer of a Python number")
    a, b = (flatten(lowering, o) for o in operands)
    shape = (a.shape[0], b.shape[0])
    rows, cols = (
        View(a, shape, lambda index: index[:1]),
        View(b, shape, lambda index: index[1:]),
    )
    in_dtypes, out_dtypes = lowering.target.ufunc_loop(np.multiply, types)

    def compute(index):
        args = (
            operand_expr(rows, index, in_dtypes[0]),
            operand_expr(cols, index, in_dtypes[1]),
        )
        return ir.Op(np.multiply, args, in_dtypes, out_dtypes, 0)

    result = Pointwise(out_dtypes[0], shape, compute)
    check_dtype(node, result)
    return result


# Array creation: the fill value of each (None: np.full's own argument).
_CREATIONS = {np.zeros: 0, np.ones: 1, np.empty: 0, np.zeros_like: 0, np.ones_like: 1,
              np.empty_like: 0, np.full: None, np.full_like: None}  # fmt: skip


@lowers(*_CREATIONS, host_args=True)
def creation(lowering, node: Node) -> Tensor:
    """``np.zeros(shape)``, ``np.full(shape, v)``, ``np.ones_like(x)``: a constant tensor
    (realized where memory is needed: a fresh buffer per call)."""
    meta = node.tensor
    if meta is None or meta.kind != "array" or not all(isinstance(d, int) for d in meta.shape):
        raise Unlowerable(f"{describe(node)} of a shape known only at run time")
    fill = _CREATIONS[node.target]
    if fill is None:  # np.full / np.full_like: the fill value is an argument
        value = node.kwargs.get("fill_value", node.args[1] if len(node.args) > 1 else None)
        fill = lowering.known(value)
    if isinstance(fill, np.ndarray) or not isinstance(fill, (bool, int, float, np.generic)):
        raise Unlowerable("np.full with an array fill value")
    lowering.target.check_dtype(meta.dtype)
    check_fits(fill, meta.dtype)  # Unlowerable when it does not fit the dtype
    return constant_tensor(meta.dtype.type(fill), meta.dtype, tuple(meta.shape))


@lowers(np.concatenate, np.stack)
def join(lowering, node: Node) -> Tensor:
    """``np.concatenate``/``np.stack``: each element is one part's, chosen by where its
    index falls along the axis (every part is loaded at a clamped index, then selected)."""
    if set(node.kwargs) - {"axis"} or len(node.args) != 1:
        raise Unlowerable(f"{describe(node)} with options")
    parts = [lowering.tensor(lowering.value(p)) for p in node.args[0]]
    dtype = node.tensor.dtype
    ndim = len(parts[0].shape)
    axis = lowering.known(node.kwargs.get("axis", 0))
    if axis is None:
        raise Unlowerable(f"{describe(node)} with axis=None (it flattens)")
    if node.target is np.stack:
        axis = axis % (ndim + 1)
        parts = [_expand(p, axis) for p in parts]
    else:
        axis = axis % max(ndim, 1)
    if any(len(p.shape) != len(parts[0].shape) for p in parts):
        raise Unlowerable(f"{describe(node)} of arrays of different ranks")
    starts, start = [], 0
    for p in parts:
        starts.append(start)
        start += p.shape[axis]
    shape = parts[0].shape[:axis] + (start,) + parts[0].shape[axis + 1 :]
    if any(p.shape[:axis] + p.shape[axis + 1 :] != shape[:axis] + shape[axis + 1 :]
           for p in parts):  # fmt: skip
        raise Unlowerable(f"{describe(node)} of parts that do not line up (NumPy raises)")

    pieces = [(p, b) for p, b in zip(parts, starts) if p.shape[axis] > 0]  # empty: nothing
    if not pieces:
        return constant_tensor(0, dtype, shape)  # no elements at all

    def compute(index):
        position = index[axis]
        value = None
        for part, begin in reversed(pieces):
            size = part.shape[axis]
            local = _clamped(position, begin, size)
            load = cast(part.load(index[:axis] + (local,) + index[axis + 1 :]), dtype)
            if value is None:
                value = load
            else:
                inside = _index_below(position, begin + size)
                value = ir.Where(inside, load, value)
        return value

    return Pointwise(dtype, shape, compute)


def _clamped(position: Lin, begin: int, size: int) -> DataIndex:
    """``position - begin`` held inside ``[0, size)``: where a part of a join is loaded (its
    value is used only where the position is inside the part)."""
    local = index_value(position.plus(-begin))
    low = ir.Op(np.maximum, (local, ir.Constant(0, _INT64)), (_INT64, _INT64), (_INT64,))
    clamped = ir.Op(np.minimum, (low, ir.Constant(size - 1, _INT64)), (_INT64, _INT64), (_INT64,))
    return DataIndex(clamped, size, checked=False)


def _index_below(position: Lin, limit: int) -> ir.Expr:
    return ir.Op(np.less, (index_value(position), ir.Constant(limit, _INT64)), (_INT64, _INT64),
                 (np.dtype(bool),))  # fmt: skip


def _expand(tensor: Tensor, axis: int) -> Tensor:
    """``np.expand_dims(tensor, axis)`` as a view."""
    shape = tensor.shape[:axis] + (1,) + tensor.shape[axis:]
    return View(tensor, shape, lambda index: index[:axis] + index[axis + 1 :])
