"""Floats that a loop makes NumPy float64s, where the loop may run no iteration.

``total = 0.0``, then ``for j in range(indptr[i], indptr[i + 1]): total += values[j] * x[j]``:
the first iteration makes ``total`` a NumPy float64 (a float plus a float64 is one), and no
iteration can be unrolled to settle its kind, since a row may be empty. After the loop
``total`` is a Python float or a float64, which of them only the run knows. The two give
different results to some uses (NEP 50: a float times a float32 array is float32, a float64
times it float64; their types and reprs), and one result to others: as an operand of
``+ - * /`` whose other operand is a float64 NumPy value, and as the value a store puts into
a float64 array.

So a loop inside a captured loop's body may carry such a float as a float64 (`widened`) when
each read of the value that may be either (in the body, before the name is set again; after
the loop) is an operand of ``+ - * /`` or the value of ``a[i] = ...`` (the bytecode says so:
`analysis.read_consumers`); the body and the code after the loop hold it as a
`FloatOrFloat64`, and the trace checks each use's other operand as it meets it (`check_operator`,
`check_store`). A graph, a branch or a loop never hands one on (`refuse`). Where a check fails,
NotCaptured gives up the enclosing loop's capture (a value of either kind exists only inside
one), and that loop unrolls as before.
"""

from __future__ import annotations

import numpy as np

from ..bytecode import analysis
from ..values.arrays import ArrayValue, FloatOrFloat64, NumpyValue, ScalarValue, SymFloat
from ..values.core import Const, Value
from .not_captured import NotCaptured

OPERATORS = frozenset({"+", "-", "*", "/", "+=", "-=", "*=", "/="})


def widened(tx, why, head: int, exit_index: int, may_be_empty: bool) -> str | None:
    """The name of the carried float that ``why`` (a `KindChanges` of the loop at
    ``instrs[head]``, leaving at ``instrs[exit_index]``) says became a float64, if the loop
    may carry it as one; else None. Where the loop may run no iteration, the value after it
    is either kind too (its reads after the loop count)."""
    end = why.end
    if not _python_float(why.entry) or why.name in tx.code.co_cellvars:
        return None
    if type(end) is not ScalarValue or end.example.dtype != np.float64:
        return None
    if may_be_empty and tx.state.loop_watch is None:
        return None  # not in a loop's body: no capture to give up where a use differs
    instrs = tx.instrs
    reads = [
        analysis.read_consumers(tx.code, why.name, instrs[head + 1].offset, instrs[head].offset)
    ]
    if may_be_empty:
        reads.append(analysis.read_consumers(tx.code, why.name, instrs[exit_index].offset))
    if any(found is None for found in reads):
        return None
    if all(_takes_either(ins, place) for found in reads for ins, place in found):
        return why.name
    return None


def _python_float(value: Value) -> bool:
    return isinstance(value, SymFloat) or (isinstance(value, Const) and type(value.value) is float)


def _takes_either(ins, place: int) -> bool:
    """An instruction that gives one result for a float and a float64 in that place, given
    the operands `check_operator` and `check_store` ask for."""
    if ins.opname == "BINARY_OP":
        return ins.argrepr in OPERATORS
    return ins.opname == "STORE_SUBSCR" and place == 2  # the value stored, not the key


def check_operator(symbol: str, a: Value, b: Value) -> None:
    """Before ``a <symbol> b``: where one is a `FloatOrFloat64`, the other must be a float64
    NumPy value (the result is then one float64, or float64 array, for both kinds)."""
    for value, other in ((a, b), (b, a)):
        if isinstance(value, FloatOrFloat64) and (symbol not in OPERATORS or not _float64(other)):
            raise NotCaptured(
                f"{value.describe()} may be a Python float or a NumPy float64 after a loop that "
                f"may run no iteration, and `{symbol}` with {other.describe()} differs for them"
            )


def check_store(container: Value, value: Value) -> None:
    """Before ``container[...] = value``: a `FloatOrFloat64` goes into a float64 array only."""
    if isinstance(value, FloatOrFloat64) and not (
        isinstance(container, ArrayValue) and container.example.dtype == np.float64
    ):
        raise NotCaptured(
            f"{value.describe()} may be a Python float or a NumPy float64 after a loop that may "
            f"run no iteration, and storing it into {container.describe()} differs for them"
        )


def refuse(value: Value) -> None:
    """A value a graph, a branch or a loop gives back: never a `FloatOrFloat64`."""
    if isinstance(value, FloatOrFloat64):
        raise NotCaptured(
            f"{value.describe()} may be a Python float or a NumPy float64 after a loop that may "
            "run no iteration, and is used after the code that holds it"
        )


def _float64(value: Value) -> bool:
    if isinstance(value, FloatOrFloat64):
        return False
    example = value.example if isinstance(value, NumpyValue) else None
    if isinstance(value, Const):
        example = value.value
    return isinstance(example, np.ndarray | np.generic) and example.dtype == np.float64
