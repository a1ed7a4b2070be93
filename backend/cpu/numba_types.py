"""The trace's types and numba's: a compiled loop's signature from the trace's values, the check
that numba typed every value of the body as NumPy does, and its results as the trace's types.

The check is what makes compiling exact: `native_source` spells out NumPy's rules where numba's
differ, and every value numba typed otherwise (a dtype, a number of dims) is named, and the loop
runs as Python.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.np.numpy_support import as_dtype, from_dtype

from tcompile.tracer.ir.node import TensorMeta

_PYTHON_TYPES = {"int": types.int64, "float": types.float64, "bool": types.boolean}


def numba_type(meta: TensorMeta | None):
    """The numba type of a value the trace saw as ``meta``; None when there is no sure one
    (the loop is then compiled for the types of its first call)."""
    if meta is None:
        return None
    if meta.kind == "python":
        return _PYTHON_TYPES.get(meta.type_name)
    try:
        dtype = from_dtype(meta.dtype)
    except (NotImplementedError, numba.core.errors.NumbaNotImplementedError):
        return None
    if meta.kind == "scalar":
        return dtype
    if meta.strides is None:
        return types.Array(dtype, len(meta.shape), "A")
    layout = "C" if meta.contiguous else "F" if _fortran(meta) else "A"
    return types.Array(dtype, len(meta.shape), layout)


def _fortran(meta: TensorMeta) -> bool:
    expected = meta.dtype.itemsize
    for size, stride in zip(meta.shape, meta.strides):
        if size > 1 and stride != expected:
            return False
        expected *= max(size, 1)
    return True


def mismatches(typemap: dict, metas: dict[str, TensorMeta]) -> list[str]:
    """Each value of ``metas`` (by its name in the source) that numba typed otherwise than the
    trace saw it, as "name: numba's type, NumPy's type". numba names a variable assigned more
    than once ``name.1``, ``name.2``: every version must agree."""
    found = []
    for variable, typ in typemap.items():
        meta = metas.get(variable.split(".")[0])
        if meta is not None and not _agrees(types.unliteral(typ), meta):
            found.append(f"{variable}: numba types it {typ}, NumPy gives {meta.text()}")
    return found


def _agrees(typ, meta: TensorMeta) -> bool:
    if meta.kind == "array":
        return (isinstance(typ, types.Array) and typ.ndim == len(meta.shape)
                and as_dtype(typ.dtype) == meta.dtype and _same_order(typ, meta))  # fmt: skip
    if meta.kind == "scalar":
        return isinstance(typ, types.Number | types.Boolean) and as_dtype(typ) == meta.dtype
    expected = _PYTHON_TYPES.get(meta.type_name)
    if expected is None:  # tuples, slices, None: numba's own kinds of them
        return True
    if meta.type_name == "int":  # a Python int: numba's int64 (or a literal int)
        return isinstance(typ, types.Integer) and typ.signed and typ.bitwidth == 64
    return typ == expected


def _same_order(typ, meta: TensorMeta) -> bool:
    """numba's layout is the trace's, where both know it: a C array where NumPy made an F one
    (``np.copy`` keeps an F array's order, numba's does not) is a different result."""
    if meta.strides is None or typ.layout == "A" or len(meta.shape) < 2:
        return True
    c, f = meta.contiguous, _fortran(meta)
    return c == f or (typ.layout == "C") == c


def as_traced(value, meta: TensorMeta | None):
    """A value numba returned, as the type the trace saw: numba returns NumPy scalars as Python
    numbers (``np.float32(2.5)`` comes back as ``2.5``), and the code after the loop computes
    with NumPy's types."""
    if meta is None or isinstance(value, np.ndarray):
        return value
    if meta.kind == "scalar":
        return meta.dtype.type(value)
    convert = {"int": int, "float": float, "bool": bool}.get(meta.type_name)
    return convert(value) if convert is not None else value
