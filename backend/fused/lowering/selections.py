"""Boolean-mask selections reduced whole (``x[m].sum()``, ``np.mean(y[m])``,
``(x[m] > 1).any()``): the selection's size follows data, which a plan cannot hold, but its
reduction is one over the whole array with the mask, ``sum(where(m, x, 0))``, a kernel like
any other. The tracer makes a selection that is computed on and reduced in its statement at
its read (``x_item = x[m]; gt = x_item > 1; gt.any()``), so a selection read by element-wise
operations with numbers and by whole reductions is the common form: each such operation is
computed on the whole array (`operation`) and the reduction takes the mask.

Any other operation whose size follows data (a selection read otherwise, ``np.nonzero``,
``np.unique``...), and every one that takes its result, runs in NumPy on the host as an extern
step (`reduced_whole` tells them apart)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.node import Node, nodes_in

from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..tensors import Pointwise, Reduction, Tensor
from . import registry
from .shared import binary, cast_tensor, written_args

_REDUCTIONS = ("sum", "prod", "any", "all", "mean", "max", "min")
_INT64 = np.dtype(np.int64)


@dataclass(frozen=True)
class Selection:
    """``source[mask]`` (a mask of the source's shape), as its reductions read it: ``source``
    may be computed from selections of one mask (``x[m] * 2``: ``x * 2``)."""

    source: Tensor
    mask: Tensor


@dataclass(frozen=True)
class Planned:
    """What `planned` decides for a graph's nodes whose size follows data: ``lazy`` are the
    selections and element-wise operations of them whose value is a `Selection` (computed on
    the whole arrays, where they are read); ``compacted`` are those of them that other nodes
    read too (an output, NumPy on the host), which a compaction kernel makes."""

    lazy: frozenset[Node] = frozenset()
    compacted: frozenset[Node] = frozenset()


def planned(graph, target) -> Planned:
    """The nodes whose size follows data that are selections, or element-wise operations of
    selections of one mask and numbers, that whole reductions, such operations and (on a
    target that ``compacts``) compactions read; any other such node runs in NumPy on the host,
    as an extern step (a plan fixes its buffers' sizes). A lazy node read otherwise is
    compacted: its selected values written in order by one kernel, which computes the whole
    expression (``np.sqrt(x[m] ** 2 + y[m] ** 2)``: one kernel over ``x``, ``y`` and ``m``).
    On a target whose float sums follow NumPy's order bit for bit (``exact_float_sums``), a
    float sum of a selection is NumPy's pairwise sum of the selected values alone (a compact
    `ir.Reduce`), and a mean of integers runs in NumPy (it sums float64s cast in buffers).
    """
    exact = target.exact_float_sums
    users = defaultdict(list)
    masks: dict[Node, Node] = {}  # each candidate -> the node of the mask it selects with
    writes = []  # the positions of the nodes that may write memory
    for position, node in enumerate(graph.nodes):
        for used in nodes_in((node.args, node.kwargs)):
            users[used].append(node)
        if written_args(node) or node.mutates or node.op in (*LOOP_OPS, Cond.op):
            writes.append(position)
        if node.sized_by_data:
            mask = _whole_mask(node) or _masked_operation(node, masks)
            if mask is not None:
                masks[node] = mask
    position = {node: i for i, node in enumerate(graph.nodes)}
    # a selection is computed where it is read: memory written in between is read as it is
    # then, not as it was when the selection was made (``t = z[m]; m[:] = True; t.sum()``)
    last = {node: max(position[u] for u in users[node]) for node in masks if users[node]}
    kept = {node for node in last if not any(position[node] < w < last[node] for w in writes)}
    compacted: set[Node] = set()
    changed = True
    while changed:  # until every kept node's users and selected operands are kept too
        changed = False
        for node in list(kept):
            read = all(u in kept or _reduces(u, node, exact) for u in users[node])
            made = all(a in kept for a in node.args
                       if node.op == "call" and isinstance(a, Node) and a in masks)  # fmt: skip
            if made and not read and _compactable(node, masks[node], target):
                compacted.add(node)
            elif not (read and made):
                kept.discard(node)
                compacted.discard(node)
                changed = True
    return Planned(frozenset(kept), frozenset(compacted))


def _compactable(node: Node, mask: Node, target) -> bool:
    return (
        target.compacts
        and len(mask.tensor.shape) >= 1
        and node.tensor is not None
        and node.tensor.kind == "array"
        and len(node.tensor.shape) == 1
        and target.holds(node.tensor.dtype)
    )


def _whole_mask(node: Node) -> Node | None:
    """The mask of ``source[mask]``, a selection of elements by a mask of the source's shape."""
    if node.op != "getitem" or len(node.args) != 2:
        return None
    source, mask = node.args
    whole = (
        isinstance(source, Node)
        and isinstance(mask, Node)
        and source.tensor is not None
        and mask.tensor is not None
        and mask.tensor.dtype == np.bool_
        and mask.tensor.shape == source.tensor.shape
        and all(isinstance(d, int) for d in source.tensor.shape)
    )
    return mask if whole else None


def _masked_operation(node: Node, masks: dict[Node, Node]) -> Node | None:
    """The mask of an element-wise ufunc of selections of one mask and NumPy numbers, or of a
    selection's cast, which may be computed on the whole arrays: it writes nothing and fails
    for no element (an unselected one must not: no integer power; no float cast to an
    integer, NaN's sends the call to NumPy; no Python number computed per call, which may not
    convert to an integer dtype). Its node's risk says nothing here: any operation on a size
    from data may raise where sizes do not fit, which those of one mask always do."""
    if node.op != "call" or node.mutates:
        return None
    if node.target is np.ndarray.astype:  # a cast of each element
        source = node.args[0]
        others = (*node.args[1:], *node.kwargs.values())
        if (
            isinstance(source, Node)
            and source in masks
            and not any(isinstance(a, Node) for a in others)
            and not (source.tensor.dtype.kind == "f" and node.tensor.dtype.kind in "iu")
        ):
            return masks[source]
        return None
    if node.kwargs:
        return None
    operator = operators.of_function(node.target)
    ufunc = operator.ufunc if operator is not None else node.target
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or len(node.args) != ufunc.nin:
        return None
    if ufunc is np.power and node.tensor.dtype.kind in "iub":
        return None
    selected = {masks.get(a) for a in node.args if isinstance(a, Node) and a in masks}
    numbers = all(
        a in masks or (a.tensor is not None and a.tensor.kind != "python" and a.tensor.shape == ())
        if isinstance(a, Node)
        else type(a) in (bool, int, float) or isinstance(a, np.generic)
        for a in node.args
    )
    return selected.pop() if len(selected) == 1 and numbers else None


def _reduces(user: Node, selection: Node, exact: bool) -> bool:
    name = getattr(user.target, "__name__", "")
    # NumPy's mean of integers sums float64s cast in buffers of 8192: another order
    ordered = name == "mean" and selection.tensor.dtype.kind != "f"
    return (
        user.op == "call"
        and name in _REDUCTIONS
        and user.target is getattr(np, name)
        and user.args == (selection,)
        and not user.kwargs
        and not (exact and ordered)
    )


def select(lowering, node: Node) -> Selection:
    """A node `planned` keeps lazy, as the selection it is."""
    if node.op == "getitem":
        source, mask = (lowering.tensor(lowering.value(a)) for a in node.args)
        return Selection(source, mask)
    return operation(lowering, node)


def operation(lowering, node: Node) -> Selection:
    """An element-wise operation of selections and numbers: its rule on the selections' whole
    arrays (each selection's ``source`` stands for it while the rule runs), under their mask."""
    selected = {a: lowering.selected[a] for a in node.args
                if isinstance(a, Node) and a in lowering.selected}  # fmt: skip
    rule = registry.find(node)
    if rule is None:
        raise registry.not_lowered(node)
    values = {a: lowering.values[a] for a in selected}  # a compacted one's is its result
    lowering.values.update((a, v.source) for a, v in selected.items())
    try:
        result = rule(lowering, node)
    finally:
        lowering.values.update(values)
    return Selection(result, next(iter(selected.values())).mask)


def reduced(lowering, node: Node) -> Selection | None:
    """The selection a whole reduction ``node`` reduces (``x[m].sum()``), or None."""
    operand = node.args[0] if node.args else None
    selection = lowering.selected.get(operand) if isinstance(operand, Node) else None
    if selection is None or not _reduces(node, operand, lowering.target.exact_float_sums):
        return None
    return selection


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
    compact = name == "sum" and dtype.kind == "f"  # NumPy's pairwise sum of the selection
    return Reduction(name, masked, tuple(range(len(body.shape))), False, dtype, compact=compact)


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
