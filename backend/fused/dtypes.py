"""NumPy's dtypes as the shared pipeline sees them: which ones kernels hold, which ufunc loop
NumPy runs (NEP 50 included), and `Unlowerable`, why something runs in NumPy instead.

What a particular backend can compute (a Triton rule, a numba op) is its `target.Target`'s to
say; these are the checks every backend shares.
"""

from __future__ import annotations

import functools
import operator

import numpy as np


class Unlowerable(Exception):
    """Why an op or dtype cannot run in a kernel; the caller runs it with NumPy instead.

    >>> try:
    ...     check_kernel_dtype(np.dtype(np.complex64), "Triton")
    ... except Unlowerable as e:
    ...     print(e)
    complex64 has no Triton type: complex numbers run in NumPy
    """


# NumPy dtypes kernels may hold (by kind and size, so byte order and aliases like longlong fold
# in), with their names (torch's and Triton's are the same).
KERNEL_DTYPES = {
    ("b", 1): "bool",
    ("i", 1): "int8",
    ("i", 2): "int16",
    ("i", 4): "int32",
    ("i", 8): "int64",
    ("u", 1): "uint8",
    ("u", 2): "uint16",
    ("u", 4): "uint32",
    ("u", 8): "uint64",
    ("f", 2): "float16",
    ("f", 4): "float32",
    ("f", 8): "float64",
}

_WHY_NOT = {
    "c": "complex numbers run in NumPy",
    "f": "extended precision has no {label} type",
    "O": "Python objects run in NumPy",
    "U": "strings run in NumPy",
    "S": "strings run in NumPy",
    "M": "datetimes run in NumPy",
    "m": "timedeltas run in NumPy",
    "V": "structured dtypes run in NumPy",
}


def check_kernel_dtype(dtype: np.dtype, label: str, refused: frozenset = frozenset()) -> str:
    """The dtype's name where kernels of ``label`` (a backend's name for messages) hold it,
    else `Unlowerable` saying why; ``refused``: names that backend leaves to NumPy."""
    dtype = np.dtype(dtype)
    name = KERNEL_DTYPES.get((dtype.kind, dtype.itemsize))
    if name is None or not dtype.isnative or name in refused:
        if name in refused:
            why = f"{label} kernels leave {name} to NumPy"
        elif name:
            why = "non-native byte order"
        else:
            why = _WHY_NOT.get(dtype.kind, "no {label} type").format(label=label)
        raise Unlowerable(f"{dtype} has no {label} type: {why}")
    return name


def check_fits(value, dtype: np.dtype) -> None:
    """`Unlowerable` where a Python or NumPy number does not fit ``dtype`` (NumPy raises
    OverflowError converting it)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        info = np.iinfo(dtype)
        if not info.min <= operator.index(value) <= info.max:
            raise Unlowerable(f"{value} does not fit {dtype} (NumPy raises OverflowError)")
    elif dtype.kind == "f":
        try:
            with np.errstate(all="ignore"):
                float(dtype.type(value))
        except OverflowError:  # a Python int beyond float64
            raise Unlowerable(
                f"{value} does not fit {dtype} (NumPy raises OverflowError)"
            ) from None


def resolve_loop(ufunc: np.ufunc, operand_types: tuple) -> tuple[tuple, tuple]:
    """NumPy's loop for ``ufunc`` on these operands: (input dtypes, output dtypes).

    Operands are dtypes (arrays, NumPy scalars) or the Python types ``int``/``float`` for weak
    Python scalars (NEP 50); a Python ``bool`` is NumPy's bool.

    >>> resolve_loop(np.multiply, (np.dtype(np.float32), float))
    ((dtype('float32'), dtype('float32')), (dtype('float32'),))
    """
    operands = tuple(operand(t) for t in operand_types)
    try:
        dtypes = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    except (TypeError, ValueError) as e:
        raise Unlowerable(
            f"NumPy has no np.{ufunc.__name__} loop for {show(operands)}: {e}"
        ) from None
    return tuple(dtypes[: ufunc.nin]), tuple(dtypes[ufunc.nin :])


def operand(t):
    """An operand type as `np.ufunc.resolve_dtypes` takes it (Python scalars are weak)."""
    if t is bool:
        return np.dtype(bool)
    if t in (int, float, complex):
        return t
    return np.dtype(t)


def show(types_) -> str:
    return "(" + ", ".join(t.__name__ if isinstance(t, type) else str(t) for t in types_) + ")"


@functools.cache
def numpy_loops(ufunc: np.ufunc) -> frozenset:
    """Every loop NumPy has for ``ufunc``, as tuples of dtypes (inputs then outputs)."""
    return frozenset(tuple(np.dtype(c) for c in sig.replace("->", "")) for sig in ufunc.types)
