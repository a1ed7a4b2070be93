"""View rules: basic indexing, transposes, reshapes, ``np.broadcast_to``: the same memory read
through remapped indices (a reshape NumPy cannot view copies, as NumPy's does)."""

from __future__ import annotations

import operator

import numpy as np

from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from ..dtypes import Unlowerable
from ..tensors import BufferTensor, Lin, Tensor, View, broadcast_index, contiguous_strides, strided
from .registry import lowers
from .shared import describe


def _source(lowering, node: Node) -> Tensor:
    return lowering.tensor(lowering.value(node.args[0]))


@lowers(kind=lowering_kinds.VIEW, op="getitem")
def basic_index(lowering, node: Node) -> Tensor:
    return index_view(_source(lowering, node), lowering.known(node.args[1]))


@lowers(np.transpose)
def transpose(lowering, node: Node) -> Tensor:
    source = _source(lowering, node)
    axes = node.kwargs.get("axes", node.args[1] if len(node.args) > 1 else None)
    return _transpose(source, lowering.known(axes) if axes is not None else None)


@lowers(np.swapaxes)
def swapaxes(lowering, node: Node) -> Tensor:
    source = _source(lowering, node)
    a1, a2 = (lowering.known(node.kwargs[k]) for k in ("axis1", "axis2"))
    perm = list(range(len(source.shape)))
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return _transpose(source, tuple(perm))


@lowers(np.broadcast_to)
def broadcast_to(lowering, node: Node) -> Tensor:
    source = _source(lowering, node)
    shape = _sized(node)
    return View(source, shape, lambda index: broadcast_index(index, source.shape))


@lowers(np.expand_dims, np.squeeze, np.reshape, np.ravel, np.moveaxis)
def reshape(lowering, node: Node) -> Tensor:
    """A view where NumPy makes one (the same elements in C order), else NumPy's copy."""
    source = _source(lowering, node)
    shape = _sized(node)
    if node.target is np.moveaxis:
        raise Unlowerable("np.moveaxis")
    if lowering.known(node.kwargs.get("order", "C")) != "C":
        raise Unlowerable(f"{describe(node)} in another order than C")
    layout = strided(source)
    if layout is not None:
        buffer, offset, strides = layout
        new = _reshaped_strides(source.shape, strides, shape)
        if new is not None:
            return BufferTensor(buffer, shape, new, offset)
        if node.target is not np.ravel and node.kwargs.get("copy") is False:
            raise Unlowerable("reshape(copy=False) of a layout NumPy cannot view")
    flat = lowering.realize(source, "reshaped")  # a copy, as NumPy makes one
    return BufferTensor(flat.buffer, shape, contiguous_strides(shape), 0)


@lowers(np.real)
def real(lowering, node: Node) -> Tensor:
    source = _source(lowering, node)
    if source.dtype.kind != "c":
        return source
    raise Unlowerable(f"{describe(node)} as a view")


@lowers(kind=lowering_kinds.VIEW)
def other_view(lowering, node: Node) -> Tensor:
    _source(lowering, node)  # a value no kernel reads says so first
    raise Unlowerable(f"{describe(node)} as a view")


def _sized(node: Node) -> tuple[int, ...]:
    shape = tuple(node.tensor.shape) if node.tensor else None
    if shape is None or any(not isinstance(d, int) for d in shape):
        raise Unlowerable("a view whose shape is only known at run time")
    return shape


def flatten(lowering, source: Tensor) -> Tensor:
    """``source.ravel()`` (C order): a view where the layout allows one, else a copy."""
    n = int(np.prod(source.shape))
    layout = strided(source)
    if layout is not None:
        buffer, offset, strides = layout
        flat = _reshaped_strides(source.shape, strides, (n,))
        if flat is not None:
            return BufferTensor(buffer, (n,), flat, offset)
    realized = lowering.realize(source, "flat")
    return BufferTensor(realized.buffer, (n,), (1,), 0)


def _transpose(source: Tensor, axes) -> Tensor:
    ndim = len(source.shape)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(a % ndim for a in axes)
    shape = tuple(source.shape[a] for a in axes)

    def remap(index):
        out = [None] * ndim
        for position, axis in enumerate(axes):
            out[axis] = index[position]
        return tuple(out)

    return View(source, shape, remap)


def index_view(source: Tensor, index) -> Tensor:
    """``source[index]`` for ints, slices, None and Ellipsis: a view."""
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (np.ndarray, list, bool, np.bool_)) for i in index):
        raise Unlowerable("advanced indexing with a constant array")
    explicit = sum(1 for i in index if i is not None and i is not Ellipsis)
    if Ellipsis in index:
        at = index.index(Ellipsis)
        index = index[:at] + (slice(None),) * (len(source.shape) - explicit) + index[at + 1 :]
    index = index + (slice(None),) * (len(source.shape) - sum(1 for i in index if i is not None))
    plan = []  # per source dim: ("int", i) or ("slice", start, step); plus ("new",) for None
    shape = []
    dim = 0
    for part in index:
        if part is None:
            plan.append(("new",))
            shape.append(1)
            continue
        size = source.shape[dim]
        if isinstance(part, slice):
            start, stop, step = part.indices(size)
            plan.append(("slice", start, step))
            shape.append(len(range(start, stop, step)))
        else:
            i = operator.index(part)
            if not -size <= i < size:
                raise Unlowerable("an index out of range (NumPy raises IndexError)")
            plan.append(("int", i % size))
        dim += 1

    def remap(out_index):
        it = iter(out_index)
        result = []
        for entry in plan:
            if entry[0] == "new":
                next(it)
            elif entry[0] == "int":
                result.append(Lin(entry[1]))
            else:
                result.append(next(it).scaled(entry[2]).plus(entry[1]))
        return tuple(result)

    return View(source, tuple(shape), remap)


def _reshaped_strides(shape, strides, new_shape):
    """Strides viewing an array of ``shape``/``strides`` as ``new_shape`` in C order, as
    NumPy's ``_attempt_nocopy_reshape`` finds them, or None when a copy is needed."""
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    new = [s for s in new_shape]
    if int(np.prod(shape)) != int(np.prod(new_shape)):
        return None
    if int(np.prod(shape)) == 0:
        return contiguous_strides(new_shape)
    result = [0] * len(new)
    oi, ni = 0, 0
    while oi < len(old) and ni < len(new):
        np_, op_ = new[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= new[nj]
                nj += 1
            else:
                op_ *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):  # the merged old dims must be contiguous among themselves
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        result[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            result[k - 1] = result[k] * new[k]
        ni, oi = nj, oj
    for k in range(ni, len(new)):  # trailing size-1 dims
        result[k] = 1
    return tuple(result)
