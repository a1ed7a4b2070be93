"""Python's operators, once: their symbols, functions, in-place forms and the ufuncs they are on
arrays. The translator, the graph printer, canonicalisation and the backends all read this table.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Operator:
    """One Python operator: ``a + b`` is ``Operator("+", "add", operator.add, np.add, ...)``."""

    symbol: str  # as written: "+", "<", "~"; "abs" for the builtin
    name: str  # a name for the value it makes ("add"), and the ufunc's usual one
    fn: object  # the ``operator`` function
    ufunc: np.ufunc | None  # what it computes on ndarrays; None for ``**`` (see `power_ufunc`)
    inplace: object = None  # ``operator.iadd`` for ``+=``
    arity: int = 2


def _function(name: str):
    """The `operator` module's function called ``name`` ("and" is ``operator.and_``)."""
    return getattr(operator, name, None) or getattr(operator, f"{name}_")


# The table, by family, as (symbol, name, ufunc): ``fn`` is the `operator` function of that name,
# and the binary arithmetic operators' in-place form is the one named with an "i" in front
# (``+=`` is ``operator.iadd``).
_ARITHMETIC = (
    ("+", "add", np.add), ("-", "sub", np.subtract), ("*", "mul", np.multiply),
    ("/", "truediv", np.true_divide), ("//", "floordiv", np.floor_divide),
    ("%", "mod", np.remainder), ("**", "pow", None), ("@", "matmul", np.matmul),
    ("&", "and", np.bitwise_and), ("|", "or", np.bitwise_or), ("^", "xor", np.bitwise_xor),
    ("<<", "lshift", np.left_shift), (">>", "rshift", np.right_shift),
)  # fmt: skip
_COMPARISONS = (
    ("<", "lt", np.less), ("<=", "le", np.less_equal), (">", "gt", np.greater),
    (">=", "ge", np.greater_equal), ("==", "eq", np.equal), ("!=", "ne", np.not_equal),
)  # fmt: skip
_UNARY = (
    ("-", "neg", np.negative), ("+", "pos", np.positive), ("~", "invert", np.invert),
    ("abs", "abs", np.absolute),
)  # fmt: skip

OPERATORS: tuple[Operator, ...] = (
    *(Operator(s, name, _function(name), uf, _function(f"i{name}")) for s, name, uf in _ARITHMETIC),
    *(Operator(s, name, _function(name), uf) for s, name, uf in _COMPARISONS),
    *(Operator(s, name, _function(name), uf, arity=1) for s, name, uf in _UNARY),
)

BINARY = {op.symbol: op for op in OPERATORS if op.arity == 2}
BY_INPLACE_SYMBOL = {f"{op.symbol}=": op for op in OPERATORS if op.inplace is not None}
UNARY = {op.fn: op for op in OPERATORS if op.arity == 1}
COMPARISONS = frozenset(_function(name) for _, name, _ in _COMPARISONS)
_BY_FUNCTION = {op.fn: op for op in OPERATORS} | {op.inplace: op for op in OPERATORS if op.inplace}


def of_function(fn) -> Operator | None:
    """The operator ``fn`` is (``operator.add`` or ``operator.iadd``: "+"), if it is one."""
    try:
        return _BY_FUNCTION.get(fn)
    except TypeError:  # unhashable callables are no operator
        return None


def of_symbol(symbol: str) -> tuple[Operator, bool]:
    """The operator of a BINARY_OP / COMPARE_OP argument, and whether it is the in-place form."""
    if symbol in BINARY:
        return BINARY[symbol], False
    return BY_INPLACE_SYMBOL[symbol], True


def plain(fn):
    """The operator function without its in-place form (``operator.iadd`` -> ``operator.add``)."""
    op = of_function(fn)
    return op.fn if op is not None else fn


def is_inplace(fn) -> bool:
    op = of_function(fn)
    return op is not None and op.inplace is fn


# ``x ** e`` on an ndarray takes a fast path for some exponents (``x ** 2`` is np.square,
# ``x ** 0.5`` np.sqrt), and which ones differ between NumPy versions and dtypes. The fast paths
# differ from np.power in corner values (sqrt(-0.0) is -0.0, power(-0.0, 0.5) is 0.0), so the
# ufunc is found by asking NumPy: the candidate that agrees bit for bit on many probe values.
_SPECIALS = (-0.0, 0.0, -1.0, 1.0, 2.0, -np.inf, np.inf, np.nan, 0.5, -2.5, 3.0, -7.0, 1e-300)
_FAST_PATHS = (np.square, np.sqrt, np.reciprocal, np.positive, np.cbrt)


def power_ufunc(dtype: np.dtype, exponent) -> np.ufunc | None:
    """The ufunc ``array ** exponent`` runs for arrays of ``dtype`` and a constant exponent:
    a one-argument fast path (np.square, np.sqrt, ...) or np.power; None when none matches."""
    key = (dtype, type(exponent), exponent)
    if key not in _POWER_CACHE:
        _POWER_CACHE[key] = _find_power_ufunc(dtype, exponent)
    return _POWER_CACHE[key]


_POWER_CACHE: dict = {}


def _probe(dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "fc":
        rng = np.random.default_rng(0)
        magnitudes = 10.0 ** rng.uniform(-30, 30, 2000)
        values = np.concatenate([_SPECIALS, magnitudes, -magnitudes, rng.uniform(-4, 4, 2000)])
        return values.astype(dtype)
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    values = np.arange(-300, 300) if info is None or info.min < 0 else np.arange(600)
    extremes = [info.min, info.max, info.max // 3] if info is not None else []
    return np.concatenate([values, extremes]).astype(dtype) if info else values.astype(dtype)


def _find_power_ufunc(dtype: np.dtype, exponent):
    if dtype.kind not in "biufc":
        return None
    with np.errstate(all="ignore"):
        base = _probe(dtype)
        try:
            expected = base**exponent
        except (ValueError, TypeError, ZeroDivisionError, OverflowError):
            return None
        for ufunc in (*_FAST_PATHS, np.power):
            try:
                got = ufunc(base) if ufunc.nin == 1 else ufunc(base, exponent)
            except (ValueError, TypeError, OverflowError):
                continue
            if got.dtype == expected.dtype and got.tobytes() == expected.tobytes():
                return ufunc
    return None
