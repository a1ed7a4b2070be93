"""Boolean-mask selections reduced whole (``x[m].sum()``, ``np.mean(y[m])``): the selection's
size follows data, which a plan cannot hold, but its reduction is one over the whole array
with the mask, ``sum(where(m, x, 0))``, a kernel like any other. The tracer gives each such
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

# reductions of a selection, by name: the value an unselected element stands for (mean: a sum
# and a count)
_IDENTITY = {"sum": 0, "prod": 1, "any": False, "all": True, "mean": 0}


@dataclass(frozen=True)
class Selection:
    """``source[mask]`` (a mask of the source's shape), as its reductions read it."""

    source: Tensor
    mask: Tensor


def reduced_whole(graph) -> set[Node]:
    """The nodes whose size follows data that are selections only whole reductions read (the
    others run in NumPy on the host, as extern steps: a plan fixes its buffers' sizes)."""
    users = defaultdict(list)
    for node in graph.nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users[used].append(node)
    return {node for node in graph.nodes if node.sized_by_data and _whole_mask(node)
            and users[node] and all(_reduces(u, node) for u in users[node])}  # fmt: skip


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


def _reduces(user: Node, selection: Node) -> bool:
    name = getattr(user.target, "__name__", "")
    return (
        user.op == "call"
        and name in _IDENTITY
        and user.target is getattr(np, name)
        and user.args == (selection,)
        and not user.kwargs
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
    if name == "mean":
        acc = np.dtype(np.float64) if source.dtype.kind in "iub" else source.dtype
        if acc.kind != "f" or acc == np.float16:
            raise Unlowerable(f"np.mean of a selection of {source.dtype}")
        total = _masked_reduction("sum", cast_tensor(source, acc), selection.mask, acc)
        count = _masked_reduction("sum", cast_tensor(selection.mask, acc), selection.mask, acc)
        return cast_tensor(binary(np.true_divide, total, count, acc), result_dtype)
    if result_dtype == np.float16:
        raise Unlowerable(f"np.{name} of a selection of float16")
    body = cast_tensor(source, result_dtype)
    return _masked_reduction(name, body, selection.mask, result_dtype)


def _masked_reduction(name: str, body: Tensor, mask: Tensor, dtype: np.dtype) -> Tensor:
    identity = ir.Constant(_IDENTITY[name], dtype)
    masked = Pointwise(dtype, body.shape,
                       lambda index: ir.Where(mask.load(index), body.load(index), identity))  # fmt: skip
    return Reduction(name, masked, tuple(range(len(body.shape))), False, dtype)
