"""One spelling per operation: what a graph node holds, whatever the user wrote.

At capture, each operation on arrays is rewritten to one form that backends can read without
knowing Python's many spellings of it; each rewrite is exact for ndarrays (NumPy itself runs
the canonical form for the user's spelling):

  ``a + b``, ``-a``, ``abs(a)``     -> the ufunc (``np.add(a, b)``)        when an operand is an ndarray
  ``a ** 2``                        -> the ufunc NumPy runs (``np.square(a)``, see `operators.power_ufunc`)
  ``a += b``                        -> ``np.add(a, b, out=a)``
  ``a.sum(0)``, ``np.sum(a, 0)``    -> ``np.sum(a, axis=0)``                 (`METHOD_FUNCTIONS`)
  ``a.reshape(2, 3)``               -> ``np.reshape(a, (2, 3))``; ``a.transpose(1, 0)`` likewise
  ``a.T``, ``a.real``, ``a.imag``   -> ``np.transpose(a)``, ``np.real(a)``, ``np.imag(a)``
  ``a.astype(t)`` (no np function)  -> the method itself, ``np.ndarray.astype(a, t)``
  ``np.amax``, ``np.around``        -> ``np.max``, ``np.round``
  ``np.add(a, 1, o)``               -> ``np.add(a, 1, out=o)``

Arguments are normalised too: array operands stay positional, everything else is passed by
keyword. Operators on NumPy scalars alone stay operators: NumPy's scalar arithmetic warns
differently from its ufuncs (``np.int8(100) + np.int8(100)`` warns of overflow, ``np.add`` does
not). What cannot be rewritten exactly stays as written (``a @= b``, ``[1, 2] + a`` on lists).

The printer (`graph.py`) spells canonical nodes back the fastest exact way (``a + b``,
``a.sum(axis=0)``): a method call skips ``np.sum``'s dispatch, about 1 µs a call.
"""

from __future__ import annotations

import functools
import inspect
import types

import numpy as np

from . import operators

# ndarray methods whose np function computes exactly the same for an ndarray, with the same
# parameters after the array (NumPy's functions call the method, or the same C code).
# Not here: ``copy`` (np.copy keeps the layout, the method makes C order), ``conj`` (the method
# returns the array itself for real dtypes), ``sort``/``partition`` (methods sort in place).
METHOD_FUNCTIONS = {
    name: getattr(np, name)
    for name in (
        "all any argmax argmin argpartition argsort clip cumprod cumsum diagonal dot max mean "
        "min prod ravel repeat round searchsorted squeeze std sum swapaxes "
        "take trace var"
    ).split()
}
# Methods taking their shape or axes as ``*args``: ``a.reshape(2, 3)`` is ``np.reshape(a, (2, 3))``.
_VARARG_METHODS = {"reshape": np.reshape, "transpose": np.transpose}
_METHOD_NAMES = {fn: name for name, fn in (METHOD_FUNCTIONS | _VARARG_METHODS).items()}
# What reductions pass on to the ufunc's ``reduce`` through their ``**kwargs``.
_REDUCE_KEYWORDS = frozenset({"keepdims", "initial", "where"})
_ATTRIBUTES = {"T": np.transpose, "real": np.real, "imag": np.imag}
_ALIASES = {np.amax: np.max, np.amin: np.min, np.around: np.round}
_NUMBERS = (bool, int, float, complex, np.generic)


def canonicalize(op: str, target, args: tuple, kwargs: dict):
    """``(op, target, args, kwargs)`` of a graph node in canonical form (graph arguments:
    nodes, whose ``tensor`` says what they hold, and constants)."""
    if op == "call" and operators.of_function(target) is not None:
        return _operator(target, args, kwargs, out=None)
    if op == "inplace":
        return _operator(target, args, kwargs, out=args[0])
    if op == "method" and _is_array(args[0]):
        return _method(target, args, kwargs)
    if op == "attr" and target in _ATTRIBUTES and _is_array(args[0]):
        return "call", _ATTRIBUTES[target], args, {}
    if op == "call":
        target = _ALIASES.get(target, target) if hashable(target) else target
        return "call", target, *normalize_arguments(target, args, kwargs)
    return op, target, args, kwargs


def _operator(fn, args: tuple, kwargs: dict, out):
    op = operators.of_function(fn)
    kept = ("inplace" if out is not None else "call"), fn, args, kwargs
    if kwargs or not any(_is_array(a) for a in args) or not all(map(_is_operand, args)):
        return kept
    ufunc = op.ufunc
    if op.symbol == "**":
        exponent = args[1]
        if not _is_array(args[0]) or isinstance(exponent, np.ndarray):
            ufunc = np.power  # ``2 ** a`` is np.power(2, a): the fast paths are for ``a ** e``
        elif isinstance(exponent, _NUMBERS):
            ufunc = operators.power_ufunc(args[0].tensor.dtype, exponent)
        else:
            return kept  # a traced exponent: the fast path depends on its value
        if ufunc is not None and ufunc.nin == 1:
            args = args[:1]
    if ufunc is None or (out is not None and op.symbol == "@"):
        return kept  # ``a @= b`` is np.matmul with ``axes`` that forbid broadcasting ``a``
    return "call", ufunc, args, ({"out": out} if out is not None else {})


def _method(name: str, args: tuple, kwargs: dict):
    array, rest = args[0], args[1:]
    if name in _VARARG_METHODS:
        fn = _VARARG_METHODS[name]
        if len(rest) > 1:
            rest = (tuple(rest),)
        if not _binds(fn, (array, *rest), kwargs):
            return "method", name, args, kwargs
        return "call", fn, *normalize_arguments(fn, (array, *rest), kwargs)
    fn = METHOD_FUNCTIONS.get(name)
    if fn is not None and _binds(fn, args, kwargs):
        return "call", fn, *normalize_arguments(fn, args, kwargs)
    descriptor = getattr(np.ndarray, name, None)
    if isinstance(descriptor, types.MethodDescriptorType):
        return "call", descriptor, args, kwargs
    return "method", name, args, kwargs


def method_spelling(fn, args: tuple, kwargs: dict):
    """``(name, args, kwargs)`` to call a canonical np function as the ndarray method that does
    the same (``np.sum(x, axis=0)`` -> ``x.sum(axis=0)``), or None where the method's parameters
    cannot express these arguments (``np.clip(x, a_min=0)``: the method's is ``min``)."""
    name = _METHOD_NAMES.get(fn) if hashable(fn) else None
    if name is None:
        return None
    params = _parameters(getattr(np.ndarray, name))
    if params is None:
        return None
    positional, named, rest = list(args[1:]), {}, dict(kwargs)
    for param in params[1 + len(positional) :]:  # after self and what is already positional
        if param.kind is param.VAR_POSITIONAL and param.name in rest:  # reshape(*shape)
            positional.append(rest.pop(param.name))
        elif param.kind is param.POSITIONAL_ONLY and param.name in rest:
            if named:
                return None
            positional.append(rest.pop(param.name))
        elif param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY) and param.name in rest:
            named[param.name] = rest.pop(param.name)
    forwards = any(p.kind is p.VAR_KEYWORD for p in params) and name != "clip"
    if rest and not (forwards and rest.keys() <= _REDUCE_KEYWORDS):
        return None
    return name, tuple(positional), {**named, **rest}


def normalize_arguments(fn, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The first argument and array operands positional, the rest by keyword, in the function's
    parameter order:
    ``np.sum(x, 0)`` -> ``(x,), {"axis": 0}``. Unchanged where NumPy gives no signature."""
    if isinstance(fn, np.ufunc):
        if len(args) <= fn.nin:
            return args, kwargs
        outs = args[fn.nin :]
        return args[: fn.nin], {**kwargs, "out": outs[0] if len(outs) == 1 else tuple(outs)}
    params = _parameters(fn)
    if params is None or not _binds(fn, args, kwargs):
        return args, kwargs
    positional, named = [], {}
    for i, (param, arg) in enumerate(zip(params, args)):
        if param.kind is param.VAR_POSITIONAL:
            return args, kwargs  # ``np.einsum(*operands)``: nothing to name
        keep = param.kind is param.POSITIONAL_ONLY or i == 0 or (not named and _holds_array(arg))
        if keep:
            positional.append(arg)
        else:
            named[param.name] = arg
    return tuple(positional), {**named, **kwargs}


@functools.cache
def _parameters(fn):
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def _binds(fn, args: tuple, kwargs: dict) -> bool:
    params = _parameters(fn)
    if params is None:
        return False
    try:
        inspect.Signature(params).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _is_array(arg) -> bool:
    tensor = getattr(arg, "tensor", None)
    return tensor is not None and tensor.kind == "array"


def _is_operand(arg) -> bool:
    """A number or a node holding one (array, NumPy scalar, traced Python number)."""
    if hasattr(arg, "tensor"):  # a graph node
        return arg.tensor is None or arg.tensor.kind in ("array", "scalar", "python")
    return isinstance(arg, _NUMBERS)


def _holds_array(arg) -> bool:
    if isinstance(arg, (tuple, list)):
        return any(_holds_array(a) for a in arg)
    return hasattr(arg, "tensor")


def hashable(obj) -> bool:
    """Whether ``obj`` can be looked up in a table (a ``np.poly1d`` object cannot)."""
    try:
        hash(obj)
    except TypeError:
        return False
    return True
