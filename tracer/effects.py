"""What a graph operation does besides computing its value: the arrays it writes, and how it
can fail at run time.

Every node gets a *risk*, decided when it is traced (where the argument values are known):

  ``silent``  cannot raise or warn once the guards hold (``x.T``, ``x[1:3]``, a reshape with
              static shapes): dead-code elimination may drop it.
  ``fp``      can warn, and raise only under a caller's ``np.errstate(...="raise"/"call")``
              (ufuncs, reductions, casts): a dead one stays, so its warnings stay.
  ``raise``   can raise depending on array values (``np.linalg.inv`` of a singular matrix, an
              out-of-range index, an integer to a negative power, an opaque custom op), or on
              sizes a dynamic shape leaves open.

A graph that raises at run time makes its frame run again eagerly (see `glue.function`), so the
user sees eager's exception, side effects and handlers. The risk says when the arrays the graph
wrote before failing must be restored first.
"""

from __future__ import annotations

import operator

import numpy as np

from . import numpy_table as table
from . import operators
from .values.arrays import ArrayValue, NumpyValue, ScalarValue, SymInt
from .values.containers import leaves
from .values.core import Const, Value

SILENT, FP, RAISE = "silent", "fp", "raise"


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
_INDEX_METHODS = frozenset({"take", "choose", "put", "repeat", "partition", "argpartition"})
# NumPy functions whose success depends on argument values (not only shapes and dtypes).
_VALUE_ERRORS = frozenset(
    id(f)
    for f in (
        np.take, np.take_along_axis, np.put, np.put_along_axis, np.choose, np.repeat,
        np.putmask, np.place, np.digitize, np.histogram, np.histogram2d, np.histogramdd,
        np.histogram_bin_edges, np.percentile, np.quantile, np.nanpercentile, np.nanquantile,
        np.partition, np.argpartition, np.searchsorted, np.ravel_multi_index, np.unravel_index,
        np.power, np.float_power, operator.pow, operator.ipow,
    )
)  # fmt: skip
_POWERS = frozenset(id(f) for f in (np.power, operator.pow, operator.ipow))


def risk(op: str, target, args: tuple, kwargs: dict, *, dynamic: bool) -> str:
    """The node risk (``silent``/``fp``/``raise``) of an operation on these traced values."""
    values = leaves((args, kwargs))
    if any(v.example.dtype == object for v in values if isinstance(v, NumpyValue)):
        return RAISE  # object arrays run arbitrary Python
    if op == "attr":
        return SILENT
    if dynamic:
        return RAISE  # sizes only known at run time may not fit together
    if op in ("getitem", "setitem"):
        if any(isinstance(v, (ArrayValue, ScalarValue, SymInt)) for v in leaves(args[1])):
            return RAISE  # an index computed from data can be out of range
        return SILENT if op == "getitem" else FP  # assigning casts (and may warn)
    if op == "method":
        if target in _VIEW_METHODS:
            return SILENT
        return RAISE if target in _INDEX_METHODS else FP
    if id(target) in _POWERS:
        integer = all(v.example.dtype.kind in "iub" for v in values if hasattr(v, "example"))
        return RAISE if integer else FP  # integers to negative integer powers raise
    if op == "inplace" or isinstance(target, np.ufunc) or _is_operator(target):
        return FP
    if id(target) in _VALUE_ERRORS or (getattr(target, "__module__", "") or "").startswith(
        "numpy.linalg"
    ):
        return RAISE
    if table.is_numpy_object(target) or isinstance(target, type):
        return FP
    return RAISE  # custom ops and functions allowed in the graph run arbitrary code


def _is_operator(target) -> bool:
    return operators.of_function(target) is not None or target in (divmod, abs, round)
