"""Differential harness: run a function eagerly and under `tc.compile` and demand identical behaviour.

    from harness import check_same
    check_same(f, np.arange(8.0), 2)            # one call, fullgraph=True, eager backend
    check_same(f, np.arange(8.0), 2, calls=2)   # second call must hit the compile cache
    args, kwargs = (np.arange(8.0), 2), {}
    check_same_calls(f, [(args, kwargs), perturbed(args, kwargs)])  # new values, same graph

"Identical" means: the same exception (type and message) or none, the same printed output, results
equal bitwise and by type, the argument copies mutated in the same way, and the same aliasing between
arrays (a result that is a view of an input, or the input itself, must be one in both runs; results
of successive calls share memory only where eager's do).
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
import textwrap
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Outcome:
    """Everything observable about one call: its result or exception, its stdout, its arguments."""

    result: Any
    exc: BaseException | None
    stdout: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def fresh_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    """Deep copy of the call's arguments.

    `ndarray.__deepcopy__` copies with order="K" (same memory layout, like
    `np.array(a, copy=True, order="K")`, also for arrays inside containers and objects), and the
    deepcopy memo keeps aliasing: an array passed twice is one array in the copy too.
    """
    return copy.deepcopy((args, kwargs))


def run_captured(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Outcome:
    """Call `fn(*args, **kwargs)`, capturing stdout and any exception."""
    buf = io.StringIO()
    result: Any = None
    exc: BaseException | None = None
    with contextlib.redirect_stdout(buf):
        try:
            result = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 (the exception is part of the behaviour compared)
            exc = e
    return Outcome(result, exc, buf.getvalue(), args, kwargs)


# ---------------------------------------------------------------------------------------------
# Bitwise, type-exact comparison
# ---------------------------------------------------------------------------------------------


# None: floats compare bitwise (the eager backend). A number of ULP (the Triton backend: other
# summation orders, fused kernels): floats compare within that many units of the larger value's
# precision; integers, bools, dtypes and shapes stay exact. Set by tests/triton.
FLOAT_ULPS: int | None = None


def _same_floats(eager: Any, compiled: Any) -> bool:
    """Float arrays or scalars equal: bitwise, or within `FLOAT_ULPS` (NaN where NaN is) of
    each value and of the largest one: a sum in another order (a GPU's scan, a fused kernel's
    partial sums) is off by a few ULP of the values summed, which a result near zero is not."""
    if FLOAT_ULPS is None or np.dtype(eager.dtype).kind not in "fc":
        return eager.tobytes() == compiled.tobytes()
    eps = np.finfo(eager.dtype).eps * FLOAT_ULPS
    with np.errstate(all="ignore"):
        finite = np.abs(eager)[np.isfinite(eager)]
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        return bool(np.allclose(compiled, eager, rtol=eps, atol=eps * scale, equal_nan=True))


def _fail(path: str, what: str, eager: Any, compiled: Any) -> None:
    raise AssertionError(f"{path}: {what}\n  eager:    {eager!r}\n  compiled: {compiled!r}")


def _same_float(a: float, b: float) -> bool:
    if FLOAT_ULPS is not None:  # a Python float computed on a GPU: as a NumPy float64
        return _same_floats(np.float64(a), np.float64(b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _is_user_object(x: Any) -> bool:
    plain = (
        type,
        types.FunctionType,
        types.BuiltinFunctionType,
        types.ModuleType,
        types.MethodType,
    )
    return hasattr(x, "__dict__") and not isinstance(x, plain)


def assert_same(eager: Any, compiled: Any, path: str = "result") -> None:
    """Assert `compiled` equals `eager` bitwise and by exact type, recursively.

    ndarrays: same type, dtype, shape, bytes, C/F contiguity and writeability. NumPy scalars: same
    type and bytes. Python floats/complex: equal with NaN == NaN and the sign of zero respected.
    tuple/list/dict (key order included) and user objects (their `__dict__`) are compared recursively.
    """
    if type(eager) is not type(compiled):
        _fail(path, f"type {type(eager).__name__} != {type(compiled).__name__}", eager, compiled)
    for kind, same in _SAME_BY_KIND:
        if isinstance(eager, kind):
            same(eager, compiled, path)
            return
    if _is_user_object(eager):
        assert_same(vars(eager), vars(compiled), f"{path}.__dict__")
    elif eager != compiled:
        _fail(path, "values differ", eager, compiled)


def _same_array(eager: np.ndarray, compiled: np.ndarray, path: str) -> None:
    for attr in ("dtype", "shape"):
        if getattr(eager, attr) != getattr(compiled, attr):
            _fail(path, f"{attr} differs", getattr(eager, attr), getattr(compiled, attr))
    for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE"):
        if eager.flags[flag] != compiled.flags[flag]:
            _fail(path, f"flag {flag} differs", eager.flags[flag], compiled.flags[flag])
    if eager.dtype == object:
        assert_same(eager.tolist(), compiled.tolist(), path)
    elif not _same_floats(eager, compiled):
        _fail(path, "array contents differ", eager, compiled)


def _same_numpy_scalar(eager: np.generic, compiled: np.generic, path: str) -> None:
    if eager.dtype != compiled.dtype or not _same_floats(eager, compiled):
        _fail(path, "NumPy scalar differs", eager, compiled)


def _same_sequence(eager: tuple | list, compiled: tuple | list, path: str) -> None:
    if len(eager) != len(compiled):
        _fail(path, "length differs", eager, compiled)
    for i, (e, c) in enumerate(zip(eager, compiled)):
        assert_same(e, c, f"{path}[{i}]")


def _same_dict(eager: dict, compiled: dict, path: str) -> None:
    if list(eager) != list(compiled):
        _fail(path, "dict keys (or their order) differ", list(eager), list(compiled))
    for k in eager:
        assert_same(eager[k], compiled[k], f"{path}[{k!r}]")


def _same_python_float(eager: float, compiled: float, path: str) -> None:
    if not _same_float(eager, compiled):
        _fail(path, "float differs", eager, compiled)


def _same_complex(eager: complex, compiled: complex, path: str) -> None:
    if not (_same_float(eager.real, compiled.real) and _same_float(eager.imag, compiled.imag)):
        _fail(path, "complex differs", eager, compiled)


_SAME_BY_KIND = ((np.ndarray, _same_array), (np.generic, _same_numpy_scalar),
                 ((tuple, list), _same_sequence), (dict, _same_dict),
                 (float, _same_python_float), (complex, _same_complex))  # fmt: skip


def _array_leaves(x: Any, out: list[np.ndarray], seen: set[int]) -> list[np.ndarray]:
    """Arrays reachable from `x` through tuples, lists, dicts and user objects, in a fixed order."""
    if isinstance(x, np.ndarray):
        out.append(x)
    elif id(x) in seen:
        return out
    elif isinstance(x, (tuple, list)):
        seen.add(id(x))
        for v in x:
            _array_leaves(v, out, seen)
    elif isinstance(x, dict):
        seen.add(id(x))
        for v in x.values():
            _array_leaves(v, out, seen)
    elif _is_user_object(x):
        seen.add(id(x))
        _array_leaves(vars(x), out, seen)
    return out


def alias_signature(o: Outcome) -> list[tuple[list[int], list[int]]]:
    """For every array reachable from the arguments then the result: which earlier ones it *is*,
    and which earlier ones it shares memory with (views of inputs, outputs returned twice...)."""
    leaves = _array_leaves((o.args, o.kwargs, o.result), [], set())
    sig = []
    for i, a in enumerate(leaves):
        same = [j for j in range(i) if leaves[j] is a]
        shared = [j for j in range(i) if np.shares_memory(leaves[j], a)]
        sig.append((same, shared))
    return sig


def cross_call_sharing(earlier: Outcome, later: Outcome) -> list[list[bool]]:
    """For every array in `later.result`: does it share memory with each array of `earlier.result`?
    Eagerly only results built from globals do; a compiled function that hands out one buffer
    on every call (a cached constant, a reused output) shows up here."""
    old = _array_leaves(earlier.result, [], set())
    new = _array_leaves(later.result, [], set())
    return [[np.shares_memory(a, b) for b in old] for a in new]


def assert_same_outcome(eager: Outcome, compiled: Outcome) -> None:
    """Exceptions, stdout, result, mutated arguments, object identity and aliasing of
    `compiled` match `eager` (`outcome_differences`)."""
    problems = outcome_differences(eager, compiled, _traceback_text(compiled.exc))
    if problems:
        raise AssertionError("\n".join(problems))


def _traceback_text(exc: BaseException | None) -> str:
    return "".join(traceback.format_exception(exc)) if exc is not None else ""


def outcome_differences(
    eager: Outcome, compiled: Outcome, compiled_traceback: str = ""
) -> list[str]:
    """Every aspect of two calls' outcomes that differs, as readable lines (empty: identical):
    the exception (type and message), stdout, the result, the arguments after the call, then,
    where nothing else differs, object identity and array aliasing."""
    problems = [p for p in (_exception_difference(eager.exc, compiled.exc, compiled_traceback),
                            _stdout_difference(eager.stdout, compiled.stdout)) if p]  # fmt: skip
    for what, a, b in (
        ("result", eager.result, compiled.result),
        ("args (after the call)", eager.args, compiled.args),
        ("kwargs (after the call)", eager.kwargs, compiled.kwargs),
    ):
        if what == "result" and (eager.exc is not None or compiled.exc is not None):
            continue
        problems += [p for p in (value_difference(a, b, what),) if p]
    for signature, what in ((identity_signature, _IDENTITY), (alias_signature, _ALIASING)):
        if not problems:
            problems += [p for p in (_signature_difference(eager, compiled, signature, what),) if p]
    return problems


def value_difference(eager: Any, compiled: Any, what: str) -> str | None:
    """`assert_same` on two values (masked arrays and slotted objects expanded), as a line."""
    try:
        assert_same(normalize(eager), normalize(compiled), what)
    except AssertionError as err:
        return str(err).replace("\n", "\n  ")
    except Exception as err:  # noqa: BLE001 (a comparison that cannot run is a difference)
        return f"{what}: cannot compare ({err!r})"
    return None


def _exception_difference(eager, compiled, compiled_traceback: str) -> str | None:
    same = (eager is None) == (compiled is None) and (
        eager is None or (type(eager) is type(compiled) and str(eager) == str(compiled))
    )
    if same:
        return None
    msg = (
        f"exception differs\n    eager:    {_exc_text(eager)}\n    compiled: {_exc_text(compiled)}"
    )
    if compiled is not None and compiled_traceback:
        msg += "\n    compiled traceback (tail):\n" + textwrap.indent(compiled_traceback, "      ")
    return msg


def _stdout_difference(eager: str, compiled: str) -> str | None:
    if eager == compiled:
        return None
    return f"stdout differs\n    eager:    {eager!r}\n    compiled: {compiled!r}"


def _signature_difference(eager: Outcome, compiled: Outcome, signature, what: str) -> str | None:
    """``signature`` of both outcomes compared: ``what`` differs, with both signatures."""
    try:
        e_sig, c_sig = signature(eager), signature(compiled)
    except Exception as err:  # noqa: BLE001
        e_sig, c_sig = repr(err), "?"
    if e_sig == c_sig:
        return None
    return f"{what}\n    eager:    {e_sig}\n    compiled: {c_sig}"


_IDENTITY = ("object identity differs (lists, dicts, sets, objects reachable from args, kwargs, "
             "result: [is identical to])")  # fmt: skip
_ALIASING = ("aliasing differs (arrays reachable from args, kwargs, result: "
             "[(is identical to, shares memory with)])")  # fmt: skip


@dataclass
class _MaskedView:
    """What is compared of a masked array beyond its data (`assert_same` sees only the data)."""

    kind: str
    data: Any
    mask: Any
    fill_value: Any


@dataclass
class _SlotsView:
    """The slot values of an object without a `__dict__` (`assert_same` compares `vars()`)."""

    kind: str
    slots: dict


def normalize(x: Any) -> Any:
    """Expand masked arrays (data, mask, fill value) and `__slots__` objects (their slot values)
    so that `assert_same` compares all of them."""
    if isinstance(x, np.ma.core.MaskedConstant):  # the `np.ma.masked` singleton
        return _MaskedView(type(x).__name__, None, None, None)
    if isinstance(x, np.ma.MaskedArray):
        return _MaskedView(
            type(x).__name__,
            np.asarray(x.data),
            np.ma.getmaskarray(x).copy(),
            np.asarray(x.fill_value),
        )
    if not hasattr(x, "__dict__") and hasattr(type(x), "__slots__") and not isinstance(x, type):
        slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ())]
        return _SlotsView(type(x).__name__, {n: normalize(getattr(x, n, None)) for n in slots})
    if type(x) in (tuple, list):
        return type(x)(normalize(v) for v in x)
    if type(x) is dict:
        return {k: normalize(v) for k, v in x.items()}
    return x


def _containers(x: Any, out: list, seen: set[int]) -> list:
    """Mutable Python containers and user objects reachable from `x` (arrays excluded), in a
    fixed order, each visited once."""
    if isinstance(x, np.ndarray) or id(x) in seen:
        return out
    if isinstance(x, (list, dict, set, bytearray)) or _is_user_object_like(x):
        seen.add(id(x))
        out.append(x)
    if isinstance(x, (tuple, list, set, frozenset)):
        seen.add(id(x))
        for v in x:
            _containers(v, out, seen)
    elif isinstance(x, dict):
        for v in x.values():
            _containers(v, out, seen)
    elif _is_user_object_like(x):
        _containers(vars(x), out, seen)
    return out


def _is_user_object_like(x: Any) -> bool:
    return _is_user_object(x) and not isinstance(x, np.ndarray)


def identity_signature(o: Outcome) -> list[list[int]]:
    """For every list, dict, set and user object reachable from args, kwargs, then the result:
    which earlier ones it *is* (a result that is an argument, an argument passed twice...)."""
    items = _containers((o.args, o.kwargs, o.result), [], set())
    return [[j for j in range(i) if items[j] is a] for i, a in enumerate(items)]


def _exc_text(e: BaseException | None) -> str:
    return "no exception" if e is None else f"{type(e).__module__}.{type(e).__qualname__}: {e}"


def perturbed(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    """Arguments of the same types, shapes, dtypes and layouts but with different array values.

    Every array, also inside tuples, lists and dicts, is flipped along all axes and negated (bool:
    only inverted; unsigned: shifted by 7, wrapping). Other values are kept; aliasing is kept (an array
    passed twice gives one perturbed array). A graph that baked array values in as constants gives
    itself away on such a call.
    """
    memo: dict[int, Any] = {}

    def perturb(x: Any) -> Any:
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, np.ndarray):
            out = np.empty_like(x)  # order="K": same memory layout
            flipped = np.flip(x)
            if x.dtype == bool:
                out[...] = ~x  # not flipped: a flipped-and-inverted mask can equal the original
            elif x.dtype.kind == "u":
                out[...] = flipped + np.array(7, dtype=x.dtype)
            elif x.dtype.kind in "ifc":
                out[...] = -flipped
            else:
                out[...] = flipped
            out.flags.writeable = x.flags.writeable
        elif type(x) in (tuple, list):
            out = type(x)(perturb(v) for v in x)
        elif type(x) is dict:
            out = {k: perturb(v) for k, v in x.items()}
        else:
            out = x
        memo[id(x)] = out
        return out

    return perturb(args), perturb(kwargs)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def check_same_calls(
    fn: Callable[..., Any],
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
    *,
    fullgraph: bool = True,
    backend: Any = "eager",
    later_calls_hit_cache: bool = False,
) -> Any:
    """Compile `fn` once, then for each `(args, kwargs)` in `calls` run it eagerly and compiled on
    fresh copies and assert that everything observable is identical (`assert_same_outcome`).

    With `later_calls_hit_cache`, every call after the first must be served from the cache: no
    cache miss, no recompile, at least one cache hit (`tc.counters()`); split loops then run
    without their pay check (`tc.config.split_loop_pay_check`), which follows timings and runs
    some iterations plainly while it learns, so that a later call compiles what they passed
    over. Returns the last compiled result.
    """
    # Imported here so that the comparison helpers above stay usable (and testable) on their own.
    import tcompile as tc

    if later_calls_hit_cache and tc.config.split_loop_pay_check:
        tc.config.split_loop_pay_check = False
        try:
            return check_same_calls(fn, calls, fullgraph=fullgraph, backend=backend,
                                    later_calls_hit_cache=True)  # fmt: skip
        finally:
            tc.config.split_loop_pay_check = True
    compiled_fn = tc.compile(fn, fullgraph=fullgraph, backend=backend)
    result = None
    previous: tuple[Outcome, Outcome] | None = None
    for n, (args, kwargs) in enumerate(calls, start=1):
        before = dict(tc.counters())
        eager = run_captured(fn, *fresh_args(args, kwargs))
        compiled = run_captured(compiled_fn, *fresh_args(args, kwargs))
        try:
            assert_same_outcome(eager, compiled)
        except AssertionError as e:
            raise AssertionError(f"call {n} of {fn.__qualname__}: {e}") from None
        if previous is not None:
            e_cross = cross_call_sharing(previous[0], eager)
            c_cross = cross_call_sharing(previous[1], compiled)
            assert e_cross == c_cross, (
                f"call {n} of {fn.__qualname__}: result arrays share memory with the previous "
                f"call's results differently\n  eager:    {e_cross}\n  compiled: {c_cross}"
            )
        previous = (eager, compiled)
        if n > 1 and later_calls_hit_cache:
            after = tc.counters()
            keys = ("cache_hits", "cache_misses", "recompiles")
            delta = {k: after[k] - before.get(k, 0) for k in keys}
            ok = (
                delta["cache_misses"] == 0 and delta["recompiles"] == 0 and delta["cache_hits"] >= 1
            )
            assert ok, f"call {n} of {fn.__qualname__} was not a cache hit: {delta}"
        result = compiled.result
    return result


def check_without_breaks(fn: Callable[..., Any], calls: list, backend: str) -> None:
    """`check_same_calls` under ``fullgraph=True`` on a fresh cache (numba's ``cpu`` backend
    skipped where numba is missing), and no graph break met."""
    import pytest

    import tcompile as tc

    if backend == "cpu":
        pytest.importorskip("numba", reason="the cpu backend needs numba")
    tc.reset()
    check_same_calls(fn, calls, backend=backend)
    assert tc.counters()["graph_breaks"] == 0


def check_same(
    fn: Callable[..., Any],
    *args: Any,
    fullgraph: bool = True,
    backend: Any = "eager",
    calls: int = 1,
    check_cache: bool = True,
    **kwargs: Any,
) -> Any:
    """Run `fn` eagerly and compiled on fresh copies of the arguments, `calls` times; assert that
    everything observable is identical (see `assert_same_outcome`). Returns the last compiled result.

    With `calls >= 2` the same compiled wrapper is called again on new, equal copies; when
    `check_cache` is true these later calls must be served from the cache: no cache miss, no
    recompile, at least one cache hit (`tc.counters()`).

    Keyword arguments other than the ones above are passed to `fn`.

    >>> check_same(lambda x, k: x * k, np.arange(3.0), 2.0)
    array([0., 2., 4.])
    """
    return check_same_calls(
        fn,
        [(args, kwargs)] * calls,
        fullgraph=fullgraph,
        backend=backend,
        later_calls_hit_cache=check_cache,
    )


def compile_and_call_twice(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`check_same(..., calls=2)`: the second call must hit the cache and still match eager."""
    return check_same(fn, *args, calls=2, **kwargs)


def check_one_graph(fn: Callable[..., Any], calls: list, backend: Any = "eager") -> None:
    """`check_same_calls` with later calls from the cache, and ``fn`` one graph without a break
    on the first call's arguments (`tc.explain`, on fresh copies)."""
    import tcompile as tc

    check_same_calls(fn, calls, backend=backend, later_calls_hit_cache=True)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in calls[0][0]]
    explained = tc.explain(fn)(*args)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained
