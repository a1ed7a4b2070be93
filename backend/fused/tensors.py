"""Arrays during lowering: each is a function from an element's index to a loop-IR expression.

Nothing is computed or stored here: a `Tensor` says how to *load* any element. Pointwise ops
compose functions, views remap indices, reductions nest a `Reduce`; memory is touched only when
a tensor is realized into a buffer (`lowering`). Indices are `Lin` (an int plus int multiples
of iteration variables, with the concrete sizes of this plan) or `DataIndex` (an index read from
an integer array); they become `loop_ir.Affine`/`Gather`, whose numbers are kernel arguments, when
a buffer is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import loop_ir as ir


@dataclass(frozen=True)
class Lin:
    """``const + sum(coefficient * var)`` with concrete ints: one dim's index into an array."""

    const: int = 0
    coeffs: tuple[tuple[ir.IterVar, int], ...] = ()

    @staticmethod
    def of(var: ir.IterVar) -> Lin:
        return Lin(0, ((var, 1),))

    def scaled(self, k: int) -> Lin:
        return Lin(self.const * k, tuple((v, c * k) for v, c in self.coeffs if c * k))

    def plus(self, other: Lin | int) -> Lin:
        if isinstance(other, int):
            return Lin(self.const + other, self.coeffs)
        merged = dict(self.coeffs)
        for v, c in other.coeffs:
            merged[v] = merged.get(v, 0) + c
        return Lin(self.const + other.const, tuple((v, c) for v, c in merged.items() if c))


@dataclass(frozen=True, eq=False)
class DataIndex:
    """An index along a dim of ``size`` elements read from data (NumPy's integer indexing;
    ``checked``: it may be out of range, which raises)."""

    value: ir.Expr
    size: int
    checked: bool = True

    # A view between the index and memory (a join of slices) maps it as it maps any index; a
    # checked index never meets one (gathers read a buffer directly).
    def scaled(self, k: int) -> DataIndex:
        return self._apply(np.multiply, k)

    def plus(self, c: int) -> DataIndex:
        return self._apply(np.add, c)

    def _apply(self, ufunc, number: int) -> DataIndex:
        assert not self.checked, "a checked index through a view"
        int64 = np.dtype(np.int64)
        value = ir.Op(ufunc, (self.value, ir.Constant(number, int64)), (int64, int64), (int64,))
        return DataIndex(value, self.size, checked=False)


Index = tuple  # of Lin | DataIndex, one per dim


class Tensor:
    """An array that can be loaded element by element: ``dtype``, ``shape`` and `load`."""

    dtype: np.dtype
    shape: tuple[int, ...]

    def load(self, index: Index) -> ir.Expr:
        raise NotImplementedError


@dataclass(eq=False)
class BufferTensor(Tensor):
    """A view of a buffer: the element at ``index`` is at ``offset + sum(strides * index)``
    (in elements) of ``buffer``."""

    buffer: ir.Buffer
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    @property
    def dtype(self) -> np.dtype:
        return self.buffer.dtype

    @staticmethod
    def whole(buffer: ir.Buffer) -> BufferTensor:
        return BufferTensor(buffer, buffer.shape, buffer.strides, 0)

    def load(self, index: Index) -> ir.Expr:
        address = Lin(self.offset)
        data = None
        for i, stride, size in zip(index, self.strides, self.shape):
            if size == 1 and not (isinstance(i, DataIndex) and i.checked):
                continue  # broadcast dims and unit dims add nothing to the address (an index
                # read from data still has its range checked: x[[3]] of one element raises)
            if isinstance(i, DataIndex):
                assert data is None, "one data index per load"
                data = (i, stride)
            else:
                address = address.plus(i.scaled(stride))
        affine = _affine(address)
        if data is None:
            return ir.Load(self.buffer, affine)
        value, stride = data
        return ir.Load(self.buffer, ir.Gather(affine, value.value, ir.Param(value.size, "n"),
                                              ir.Param(stride, "s"), value.checked))  # fmt: skip


def index_value(lin: Lin) -> ir.Expr:
    """The position ``lin`` stands for, as an int64 value."""
    return ir.IndexValue(_affine(lin))


def _affine(lin: Lin) -> ir.Affine:
    return ir.Affine(ir.Param(lin.const, "o"), tuple((v, ir.Param(c, "s")) for v, c in lin.coeffs))


@dataclass(eq=False)
class Pointwise(Tensor):
    """Element ``index`` is ``fn(index)``."""

    dtype: np.dtype
    shape: tuple[int, ...]
    fn: object

    def load(self, index: Index) -> ir.Expr:
        return self.fn(index)


@dataclass(eq=False)
class View(Tensor):
    """Element ``index`` is ``base``'s element ``remap(index)`` (slicing, transposing, ...)."""

    base: Tensor
    shape: tuple[int, ...]
    remap: object

    @property
    def dtype(self) -> np.dtype:
        return self.base.dtype

    def load(self, index: Index) -> ir.Expr:
        return self.base.load(self.remap(index))


@dataclass(eq=False)
class Reduction(Tensor):
    """``kind`` of ``source`` over ``axes`` (``keepdims`` keeps them as size 1), computed in
    ``acc`` dtype. Loads of one index share one `Reduce`, so a kernel computes it once.
    ``compact``: a sum of the selected elements of a ``where(mask, x, 0)`` source (`ir.Reduce`)."""

    kind: str
    source: Tensor
    axes: tuple[int, ...]
    keepdims: bool
    dtype: np.dtype
    shape: tuple[int, ...] = ()
    compact: bool = False

    def __post_init__(self):
        self.shape = tuple(1 if i in self.axes else s for i, s in enumerate(self.source.shape)
                           if self.keepdims or i not in self.axes)  # fmt: skip
        self._loads: dict = {}
        assert self.axes or self.source.dtype == self.dtype, "over no axes, the elements alone"

    def load(self, index: Index) -> ir.Expr:
        if not self.axes:  # over no axes (np.sum(x, axis=())): each element is its own result;
            return self.source.load(index)  # a kernel has no reduction over zero variables
        key = tuple(_key(i) for i in index)
        if key not in self._loads:
            rvars = tuple(ir.IterVar(ir.Param(self.source.shape[a], "n"), reduction=True)
                          for a in self.axes)  # fmt: skip
            kept = iter(index)
            source_index = []
            for axis in range(len(self.source.shape)):
                if axis in self.axes:
                    source_index.append(Lin.of(rvars[self.axes.index(axis)]))
                    if self.keepdims:
                        next(kept)
                else:
                    source_index.append(next(kept))
            body = self.source.load(tuple(source_index))
            ndim = len(self.source.shape)
            trailing = tuple(self.axes) == tuple(range(ndim - len(self.axes), ndim))
            self._loads[key] = ir.Reduce(self.kind, body, rvars, self.dtype, trailing,
                                         self.compact)  # fmt: skip
        return self._loads[key]


def _key(i):
    return ("data", id(i.value)) if isinstance(i, DataIndex) else (i.const, i.coeffs)


def broadcast_index(index: Index, shape: tuple[int, ...]) -> Index:
    """The index into an operand of ``shape`` broadcast to the result's (NumPy's rules:
    trailing dims line up, size-1 dims repeat)."""
    index = index[len(index) - len(shape) :] if shape else ()
    return tuple(Lin() if s == 1 else i for i, s in zip(index, shape))


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def strided(tensor: Tensor):
    """``(buffer, offset, strides)`` when ``tensor`` is a plain view of one buffer (what a
    device view or an extern argument needs), else None (a computed value, even one that only
    reads a buffer, like a copy, is not a view)."""
    base = tensor
    while isinstance(base, View):
        base = base.base
    if not isinstance(base, BufferTensor):
        return None
    probe_vars = tuple(ir.IterVar(ir.Param(max(s, 1), "n")) for s in tensor.shape)
    try:
        load = tensor.load(tuple(Lin.of(v) for v in probe_vars))
    except (AssertionError, NotImplementedError):
        return None
    if not isinstance(load, ir.Load) or not isinstance(load.index, ir.Affine):
        return None
    coeffs = {v: p.value for v, p in load.index.terms}
    strides = tuple(coeffs.get(v, 0) for v in probe_vars)
    return load.buffer, load.index.offset.value, strides


def is_whole(buffer: ir.Buffer, offset: int, strides: tuple, shape: tuple) -> bool:
    """Whether a view (``offset``, ``strides``, ``shape``) is all of ``buffer`` as it is laid
    out (the stride of a size-1 dim does not matter)."""
    return (
        offset == 0
        and tuple(shape) == buffer.shape
        and all(a == b for a, b, n in zip(strides, buffer.strides, shape) if n > 1)
    )
