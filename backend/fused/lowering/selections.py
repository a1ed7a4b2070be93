"""Boolean-mask selections reduced whole (``x[m].sum()``, ``np.mean(y[m])``, ``x[m].max()``):
the selection's size follows data, which a plan cannot hold, but its reduction is one over the
whole array with the mask, ``sum(where(m, x, 0))``, a kernel like any other. The tracer gives each such
reduction a selection of its own (``sum_selected = x[m]``) and writes an element-wise operation
on a selection as the masked ufunc it is (``np.greater(y, 0, out=..., where=m)``), so a
selection read by reductions alone is the common form.

Any other operation whose size follows data (a selection read otherwise, ``np.nonzero``,
``np.unique``...), and every one that takes its result, runs in NumPy on the host as an extern
step (`reduced_whole` tells them apart)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from tcompile.tracer.ir.node import Node, nodes_in

from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..tensors import Pointwise, Reduction, Tensor
from .shared import binary, cast_tensor

_REDUCTIONS = ("sum", "prod", "any", "all", "mean", "max", "min")
_INT64 = np.dtype(np.int64)


@dataclass(frozen=True)
class Selection:
    """``source[mask]`` (a mask of the source's shape), as its reductions read it."""

    source: Tensor
    mask: Tensor


def reduced_whole(graph, target) -> set[Node]:
    """The nodes whose size follows data that are selections only whole reductions read (the
    others run in NumPy on the host, as extern steps: a plan fixes its buffers' sizes). On a
    target whose float sums follow NumPy's order bit for bit (``exact_float_sums``), a float
    sum, product or mean of a selection runs in NumPy too: the masked one adds the selected
    values in other groups than NumPy's sum of the compacted array."""
    exact = target.exact_float_sums
    users = defaultdict(list)
    for node in graph.nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users[used].append(node)
    return {node for node in graph.nodes if node.sized_by_data and _whole_mask(node)
            and users[node] and all(_reduces(u, node, exact) for u in users[node])}  # fmt: skip


def _whole_mask(node: Node) -> bool:
    if node.op != "getitem" or len(node.args) != 2:
        return False
    source, mask = node.args
    return (
        isinstance(source, Node)
        and isinstance(mask, Node)
        and source.tensor is not None
        and mask.tensor is not None
        and mask.tensor.dtype == np.bool_
        and mask.tensor.shape == source.tensor.shape
        and all(isinstance(d, int) for d in source.tensor.shape)
    )


def _reduces(user: Node, selection: Node, exact: bool) -> bool:
    name = getattr(user.target, "__name__", "")
    ordered = name == "mean" or (name in ("sum", "prod") and selection.tensor.dtype.kind in "fc")
    return (
        user.op == "call"
        and name in _REDUCTIONS
        and user.target is getattr(np, name)
        and user.args == (selection,)
        and not user.kwargs
        and not (exact and ordered)
    )


def select(lowering, node: Node) -> Selection:
    source, mask = (lowering.tensor(lowering.value(a)) for a in node.args)
    return Selection(source, mask)


def reduce(name: str, selection: Selection, result_dtype: np.dtype) -> Tensor:
    """``name`` of the selected elements: a reduction of the whole array, each unselected
    element standing for the reduction's identity (a mean: the sum over the count)."""
    source = selection.source
    if not all(source.shape):
        raise Unlowerable("a reduction of a selection of an empty array")
    mask = selection.mask
    if name == "mean":
        acc = np.dtype(np.float64) if source.dtype.kind in "iub" else source.dtype
        if acc.kind != "f" or acc == np.float16:
            raise Unlowerable(f"np.mean of a selection of {source.dtype}")
        total = _masked_reduction("sum", cast_tensor(source, acc), mask, acc)
        count = _masked_reduction("sum", cast_tensor(mask, acc), mask, acc)
        mean = cast_tensor(binary(np.true_divide, total, count, acc), result_dtype)
        return _when_selected(mean, mask)
    if result_dtype == np.float16:
        raise Unlowerable(f"np.{name} of a selection of float16")
    found = _masked_reduction(name, cast_tensor(source, result_dtype), mask, result_dtype)
    return _when_selected(found, mask) if name in ("max", "min") else found


def _masked_reduction(name: str, body: Tensor, mask: Tensor, dtype: np.dtype) -> Tensor:
    identity = ir.Constant(_identity(name, dtype), dtype)
    masked = Pointwise(
        dtype, body.shape, lambda index: ir.Where(mask.load(index), body.load(index), identity)
    )
    return Reduction(name, masked, tuple(range(len(body.shape))), False, dtype)


def _identity(name: str, dtype: np.dtype):
    """What an unselected element stands for: a value that changes no reduction's result."""
    if name in ("max", "min"):
        if dtype.kind == "f":
            return -np.inf if name == "max" else np.inf
        if dtype.kind == "b":
            return name == "min"
        info = np.iinfo(dtype)
        return info.min if name == "max" else info.max
    return {"sum": 0, "prod": 1, "any": False, "all": True}[name]


def _when_selected(value: Tensor, mask: Tensor) -> Tensor:
    """``value``, setting the plan's error flag where nothing is selected: NumPy raises there
    (``max``, ``min``) or warns (a mean of an empty slice), so the call fails and the frame
    runs eagerly, where the user sees NumPy's own error or warning. The flag is raised by a
    checked cast of NaN to int64 (item assignment raises for NaN: `loop_ir.Cast`)."""
    count = _masked_reduction("sum", cast_tensor(mask, _INT64), mask, _INT64)
    f64, b = np.dtype(np.float64), np.dtype(bool)

    def checked(index):
        empty = ir.Op(np.equal, (count.load(index), ir.Constant(0, _INT64)), (_INT64, _INT64), (b,))
        flag = ir.Where(empty, ir.Constant(np.nan, f64), ir.Constant(0.0, f64))
        passed = ir.Op(np.equal, (ir.Cast(flag, _INT64, checked=True), ir.Constant(0, _INT64)),
                       (_INT64, _INT64), (b,))  # fmt: skip
        found = value.load(index)
        return ir.Where(passed, found, found)

    return Pointwise(value.dtype, value.shape, checked)
