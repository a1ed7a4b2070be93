"""What a graph operation does besides computing its value: the arrays it writes, and how it
can fail at run time.

Every node gets a *risk*, decided when it is traced (where the argument values are known):

  ``silent``  cannot raise or warn once the guards hold (``x.T``, ``x[1:3]``, a reshape with
              static shapes): dead-code elimination may drop it.
  ``fp``      can warn, and raise only under a caller's ``np.errstate(...="raise"/"call")``
              (ufuncs, reductions, casts): a dead one stays, so its warnings stay.
  ``raise``   can raise depending on array values (``np.linalg.inv`` of a singular matrix, an
              out-of-range index, an integer to a negative power, an opaque custom op), on a
              dynamic Python int or float (too large for an integer dtype, NaN converted to
              one), or on sizes a dynamic shape leaves open.

A graph that raises at run time makes its frame run again eagerly (see `glue.function`), so the
user sees eager's exception, side effects and handlers. The risk says when the arrays the graph
wrote before failing must be restored first.
"""

from __future__ import annotations

import operator
import types

import numpy as np

from ..ir import numpy_table as table
from ..ir import operators
from ..ir.node import FP, RAISE, SILENT
from ..values.arrays import ArrayValue, NumpyValue, ScalarValue, SymFloat, SymInt
from ..values.containers import leaves
from ..values.core import Const, Value


class UnknownWrites(Exception):
    """NumPy does not say whether a call writes into one of its arguments."""


# -- which arguments an operation writes ----------------------------------------------------


def written_values(op: str, target, args: tuple, kwargs: dict) -> list[Value]:
    """The arguments ``op`` writes into, in NumPy's order: ``out=`` (keyword or positional),
    the target of an in-place operator, item assignment or INPLACE function/method."""
    if op in ("setitem", "inplace"):
        return [args[0]]
    if op == "method":
        if table.method_writes_self(target):
            return [args[0]]
        fn = table.method_function(target)
        return _outs(fn, args, kwargs) if fn is not None else _keyword_outs(kwargs)
    if op != "call":
        return []
    positions = table.written_positions(target)
    if positions:
        return [args[i] for i in positions if i < len(args)]
    if isinstance(target, np.ufunc):
        return _flatten(list(args[target.nin :])) or _keyword_outs(kwargs)
    if table.is_numpy_object(target):
        return _outs(target, args, kwargs)
    return []


def _outs(fn, args: tuple, kwargs: dict) -> list[Value]:
    if "out" in kwargs:
        return _keyword_outs(kwargs)
    try:
        position = table.out_position(fn)
    except LookupError:
        raise UnknownWrites(fn) from None
    return _flatten([args[position]]) if position is not None and position < len(args) else []


def _keyword_outs(kwargs: dict) -> list[Value]:
    return _flatten([kwargs["out"]]) if "out" in kwargs else []


def _flatten(values: list) -> list[Value]:
    """The arrays named by ``out`` arguments (``out=(a, b)``; ``out=None`` names none)."""
    return [v for v in leaves(values) if not (isinstance(v, Const) and v.value is None)]


# -- how an operation's result shape arises ----------------------------------------------------

_INDEXING = frozenset(id(f) for f in (np.take, np.take_along_axis, np.choose, np.where))


def shape_from_meta(op: str, target) -> bool:
    """Whether the result's shape follows from the arguments' shapes alone, whatever their
    values: element-wise operations (broadcasting) and indexing by arrays (the index's shape)."""
    if op in ("attr", "getitem", "setitem", "inplace"):
        return True
    if op == "method":
        return target in ("take", "choose", "astype", "copy", "conj", "conjugate")
    return isinstance(target, np.ufunc) or _is_operator(target) or id(target) in _INDEXING


# -- how an operation can fail -----------------------------------------------------------------

_VIEW_METHODS = frozenset({"reshape", "transpose", "swapaxes", "squeeze", "ravel", "view", "copy",
                           "flatten", "__array__"})  # fmt: skip
# Methods whose success depends on argument values (an index, a ``kth``, a ``sorter``).
_INDEX_METHODS = frozenset({"take", "choose", "put", "repeat", "partition", "argpartition",
                            "searchsorted"})  # fmt: skip
# NumPy functions whose success depends on argument values (not only shapes and dtypes):
# indices, bins, quantiles, all-NaN slices (``nanargmax``), weights summing to zero
# (``average``), a zero bound (``geomspace``), spacing or period (``fftfreq``, ``interp``).
_VALUE_ERRORS = frozenset(
    id(f)
    for f in (
        np.take, np.take_along_axis, np.put, np.put_along_axis, np.choose, np.repeat,
        np.putmask, np.place, np.digitize, np.histogram, np.histogram2d, np.histogramdd,
        np.histogram_bin_edges, np.percentile, np.quantile, np.nanpercentile, np.nanquantile,
        np.partition, np.argpartition, np.searchsorted, np.ravel_multi_index, np.unravel_index,
        np.power, np.float_power, operator.pow, operator.ipow, np.nanargmax, np.nanargmin,
        np.average, np.geomspace, np.interp, np.fft.fftfreq, np.fft.rfftfreq,
    )
)  # fmt: skip
_POWERS = frozenset(id(f) for f in (np.power, operator.pow, operator.ipow))
# Ufunc methods that index with their arguments' values (``np.add.at(x, idx, 1)``).
_INDEXING_UFUNC_METHODS = frozenset({"at", "reduceat"})


def risk(op: str, target, args: tuple, kwargs: dict, *, dynamic: bool) -> str:
    """The node risk (``silent``/``fp``/``raise``) of an operation on these traced values."""
    values = leaves((args, kwargs))
    if any(v.example.dtype == object for v in values if isinstance(v, NumpyValue)):
        return RAISE  # object arrays run arbitrary Python
    if op == "attr":
        return SILENT
    if dynamic:
        return RAISE  # sizes only known at run time may not fit together
    if _number_may_not_convert(values) or _assigned_may_not_fit(op, target, args, kwargs):
        return RAISE
    if op in ("getitem", "setitem"):
        if any(isinstance(v, (ArrayValue, ScalarValue, SymInt)) for v in leaves(args[1])):
            return RAISE  # an index computed from data can be out of range
        return SILENT if op == "getitem" else FP  # assigning casts (and may warn)
    if op == "method":
        if target in _VIEW_METHODS:
            return SILENT
        return RAISE if target in _INDEX_METHODS else FP
    method_of = _ufunc_of_method(target)
    if id(target) in _POWERS or method_of is np.power:
        integer = all(v.example.dtype.kind in "iub" for v in values if hasattr(v, "example"))
        return RAISE if integer else FP  # integers to negative integer powers raise
    if method_of is not None and target.__name__ in _INDEXING_UFUNC_METHODS:
        return RAISE
    if op == "inplace" or isinstance(target, np.ufunc) or _is_operator(target):
        return FP
    if id(target) in _VALUE_ERRORS or (getattr(target, "__module__", "") or "").startswith(
        "numpy.linalg"
    ):
        return RAISE
    if table.is_numpy_object(target) or isinstance(target, type):
        return FP
    return RAISE  # custom ops and functions allowed in the graph run arbitrary code


def _number_may_not_convert(values: list) -> bool:
    """Whether a dynamic Python number meets NumPy where its value may not convert: NumPy
    converts an int to the integer dtype of the other operands (NEP 50) and raises
    `OverflowError` when it does not fit (``int8_array + n``, ``np.full(3, n, np.uint8)``,
    ``np.int8(n)``), and a float to an integer type raises for NaN, infinity or a too large
    value (``np.int64(s)``, ``np.array(s, dtype=int)``); float and complex operands take any."""
    if not any(isinstance(v, (SymInt, SymFloat)) for v in values):
        return False
    arrays = [v for v in values if isinstance(v, NumpyValue)]
    return not arrays or any(v.example.dtype.kind not in "fc" for v in arrays)


def _assigned_may_not_fit(op: str, target, args: tuple, kwargs: dict) -> bool:
    """Whether item assignment or ``fill`` puts a number into an integer array that may not
    hold it: a float that may be NaN or infinite, an integer of a wider type (NumPy converts a
    number assigned to items, unlike an array, as Python does, and raises for these)."""
    if op == "setitem":
        array, value = args[0], args[2]
    elif op == "method" and target == "fill":
        array, value = args[0], args[1] if len(args) > 1 else kwargs.get("value")
    else:
        return False
    if not isinstance(array, ArrayValue) or array.example.dtype.kind not in "iu":
        return False
    if isinstance(value, ScalarValue):
        return not np.can_cast(value.example.dtype, array.example.dtype)
    return isinstance(value, SymFloat)


def _ufunc_of_method(target) -> np.ufunc | None:
    """The ufunc ``target`` is a method of (``np.add.at``: ``np.add``), if any."""
    if isinstance(target, types.BuiltinMethodType) and isinstance(target.__self__, np.ufunc):
        return target.__self__
    return None


def _is_operator(target) -> bool:
    return operators.of_function(target) is not None or target in (divmod, abs, round)
