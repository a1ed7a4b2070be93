"""Guards: what a compiled entry assumed, checked by one generated straight-line function.

Each `Guard` is one assumption about a source (type, identity, value, a lower bound, dtype,
shape, length, dict keys); `KINDS` says once per kind how to check it, describe it and explain
a miss.
`build_check_function` turns an entry's guards into Python source, cheapest and most
discriminating checks first, each source read once into a local; `first_failure` explains a
miss one guard at a time, only after the fast check failed.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir.device_arrays import guard_key
from ..user_code import instance_dict, name_of
from ..values.source import CLOSURE, GLOBALS, Source


@dataclass(frozen=True)
class GuardKind:
    """How one kind of guard is checked, shown and explained (one entry of `KINDS`).

    The functions take ``v``: the local holding the source's value in the generated check;
    ``k``: the name bound to the expected value there; ``n``: the source's human name;
    ``e``: the expected value; ``a``: the actual value, for explaining a miss.
    """

    rank: int  # lower runs first: identity and type checks before attribute reads
    condition: Callable[[str, str, Any], str]  # (v, k, e) -> Python text true when it holds
    describe: Callable[[str, Any], str]  # (n, e) -> the assumption, for people
    # (n, e, a) -> why ``a`` fails, or a false value when it holds. None for kinds explained by
    # evaluating the condition instead (`first_failure`): an alias guard needs a second value.
    failure: Callable[[str, Any, Any], str | bool | None] | None = None


@dataclass(frozen=True)
class Guard:
    source: Source
    kind: str  # a key of KINDS
    expected: object

    def condition(self, v: str, const: str) -> str:
        """Python text true when the guard holds for the local ``v``; ``const`` names the bound
        expected value."""
        return KINDS[self.kind].condition(v, const, self.expected)

    def describe(self) -> str:
        return KINDS[self.kind].describe(self.source.name(), self.expected)

    def failure(self, actual: object) -> str | None:
        """Why the guard fails for the source's actual value, or None if it holds."""
        explain = KINDS[self.kind].failure
        if explain is None:
            return None
        name = self.source.name()
        try:
            return explain(name, self.expected, actual) or None
        except Exception as error:  # the value no longer supports the check
            return f"{name}: {self.kind} check raised {type(error).__name__}: {error}"


def _const_condition(v: str, k: str, e: object) -> str:
    if e is None or type(e) is bool:
        return f"{v} is {k}"
    if type(e) in (int, str, bytes) or (type(e) is float and e == e and e != 0):
        return f"__tc_type({v}) is __tc_type({k}) and {v} == {k}"
    return f"__tc_same({v}, {k})"  # -0.0 is not 0.0, NaN is NaN


def _dim_chunks(sizes: tuple) -> str:
    """One dim's chunk sizes, short: ``(60, 60, 60)``, or ``24 x 1024`` for many."""
    if len(sizes) <= 4:
        return str(sizes)
    if len(set(sizes[:-1])) == 1:
        last = f" + {sizes[-1]}" if sizes[-1] != sizes[0] else ""
        return f"{len(sizes) - bool(last)} x {sizes[0]}{last}"
    return f"{len(sizes)} chunks of {min(sizes)} to {max(sizes)}"


def _device_describe(n: str, e: tuple) -> str:
    (kind, device), dtype, *chunks = e
    if chunks:
        dims = ", ".join(map(_dim_chunks, chunks[0]))
        return f"{n} is a {kind} array of {np.dtype(dtype)} in chunks ({dims})"
    where = f"on device {device}" if device is not None else "on the CPU"
    return f"{n} is a {kind} array of {np.dtype(dtype)} {where}"


def _shape_condition(v: str, k: str, dims: tuple) -> str:
    if all(d is not None for d in dims):
        return f"{v}.shape == {tuple(dims)!r}"
    parts = [f"len({v}.shape) == {len(dims)}"]
    for i, d in enumerate(dims):
        parts.append(f"{v}.shape[{i}] >= 2" if d is None else f"{v}.shape[{i}] == {d}")
    return " and ".join(parts)


def _shape_describe(n: str, dims: tuple) -> str:
    text = ", ".join("s>=2" if d is None else str(d) for d in dims)
    return f"{n}.shape == ({text}{',' if len(dims) == 1 else ''})"


def _shape_failure(n: str, expected: tuple, a: object) -> str | None:
    actual = a.shape
    if len(actual) != len(expected):
        return f"array {n} rank mismatch: expected {len(expected)}, actual {len(actual)}"
    for i, (e, size) in enumerate(zip(expected, actual)):
        if e is None and size < 2:
            return f"array {n} size at dim {i} is {size}; the dynamic dim assumed a size >= 2"
        if e is not None and size != e:
            return f"array {n} size mismatch at dim {i}: expected {e}, actual {size}"
    return None


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)

# Every guard kind, once, by rank: GuardKind(rank, condition, describe, failure).
KINDS: dict[str, GuardKind] = {
    "type": GuardKind(0, condition=lambda v, k, e: f"__tc_type({v}) is {k}",
        describe=lambda n, e: f"type({n}) is {e.__qualname__}",
        failure=lambda n, e, a: type(a) is not e and f"type of {n} changed: expected {e.__qualname__}, actual {type(a).__qualname__}"),
    "id": GuardKind(0, condition=lambda v, k, e: f"{v} is {k}",
        describe=lambda n, e: f"{n} is None" if e is None else f"{n} is the {_short(e)} it was when traced",
        failure=lambda n, e, a: a is not e and f"{n} is a different object than the one traced ({_short(e)})"),
    "not_global": GuardKind(1, condition=lambda v, k, e: f"{e!r} not in {v}",
        describe=lambda n, e: f"{e!r} not shadowed in globals (builtin)"),
    "const": GuardKind(1, condition=_const_condition,
        describe=lambda n, e: f"{n} == {e!r}",
        failure=lambda n, e, a: not same_constant(a, e) and f"{n} == {e!r} failed: actual {a!r}"),
    # A dynamic int: NumPy gives an int in this range one dtype, int64 (uint64 or object outside)
    "int64": GuardKind(0, condition=lambda v, k, e: f"__tc_type({v}) is int and {_INT64_MIN} <= {v} <= {_INT64_MAX}",
        describe=lambda n, e: f"{n} is an int in int64's range",
        failure=lambda n, e, a: not (type(a) is int and _INT64_MIN <= a <= _INT64_MAX) and f"{n} is no longer an int in int64's range: actual {a!r}"),
    "at_least": GuardKind(1, condition=lambda v, k, e: f"__tc_type({v}) is int and {v} >= {e}",
        describe=lambda n, e: f"{n} >= {e}",
        failure=lambda n, e, a: not (type(a) is int and a >= e) and f"{n} >= {e} failed: actual {a!r}"),
    "len": GuardKind(2, condition=lambda v, k, e: f"__tc_len({v}) == {e}",
        describe=lambda n, e: f"len({n}) == {e}",
        failure=lambda n, e, a: len(a) != e and f"len({n}) changed: expected {e}, actual {len(a)}"),
    "keys": GuardKind(2, condition=lambda v, k, e: f"__tc_tuple({v}) == {k}",
        describe=lambda n, e: f"keys of {n} == {e!r}",
        failure=lambda n, e, a: tuple(a) != e and f"keys of {n} changed: expected {e!r}, actual {tuple(a)!r}"),
    "dtype": GuardKind(3, condition=lambda v, k, e: f"({v}.dtype is {k} or {v}.dtype == {k})",
        describe=lambda n, e: f"{n}.dtype == {e}",
        failure=lambda n, e, a: a.dtype != e and f"array {n} dtype mismatch: expected {e}, actual {a.dtype}"),
    "device_array": GuardKind(3, condition=lambda v, k, e: f"__tc_device_key({v}) == {k}",
        describe=_device_describe,
        failure=lambda n, e, a: guard_key(a) != e and f"{n} changed: expected {_device_describe(n, e)}, actual {guard_key(a)}"),
    "shape": GuardKind(4, condition=_shape_condition, describe=_shape_describe, failure=_shape_failure),
    "strides": GuardKind(5, condition=lambda v, k, e: f"{v}.strides == {e!r}",
        describe=lambda n, e: f"{n}.strides == {e!r}",
        failure=lambda n, e, a: a.strides != e and f"array {n} strides changed: expected {e}, actual {a.strides}"),
    "no_shadow": GuardKind(5, condition=lambda v, k, e: f"{e!r} not in __tc_getattr({v}, '__dict__', ())",
        describe=lambda n, e: f"{n} has no instance attribute {e!r}",
        failure=lambda n, e, a: e in getattr(a, "__dict__", ()) and f"{n} now has an instance attribute {e!r} (the trace found none there)"),
    # the same, of an object whose attribute protocol is the user's code: read around it
    "no_shadow_static": GuardKind(5, condition=lambda v, k, e: f"{e!r} not in __tc_instance_dict({v})",
        describe=lambda n, e: f"{n} has no instance attribute {e!r}",
        failure=lambda n, e, a: e in instance_dict(a) and f"{n} now has an instance attribute {e!r} (the trace found none there)"),
    # expected: (the other source, whether the two are the same object)
    "alias": GuardKind(6, condition=lambda v, k, e: f"({v} is {e[0].expr()}) is {e[1]}",
        describe=lambda n, e: f"{n} {'is' if e[1] else 'is not'} {e[0].name()}"),
}  # fmt: skip


def same_constant(a: object, b: object) -> bool:
    """``a`` and ``b`` are the same constant for the trace: of one type, and equal bit for bit
    where that shows in results (a guard made for ``0.0`` must fail for ``-0.0``)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:  # bit for bit: the sign of zero, and NaN's sign and payload, show
        return _DOUBLE.pack(a) == _DOUBLE.pack(b)
    if type(a) is complex:
        return same_constant(a.real, b.real) and same_constant(a.imag, b.imag)
    if type(a) in (tuple, frozenset, slice):  # may hold floats: compare their spellings too
        return a == b and sorted(map(repr, _items(a))) == sorted(map(repr, _items(b)))
    return a is b or a == b


_DOUBLE = struct.Struct("<d")


def _items(value) -> tuple:
    return (value.start, value.stop, value.step) if type(value) is slice else tuple(value)


# Names the generated check uses for builtins: the frame's parameters may shadow the real ones.
CHECK_NAMES = {"__tc_type": type, "__tc_len": len, "__tc_tuple": tuple,
               "__tc_getattr": getattr, "__tc_instance_dict": instance_dict,
               "__tc_same": same_constant, "__tc_device_key": guard_key}  # fmt: skip


def _short(obj) -> str:
    return name_of(obj) or type(obj).__name__


def mismatched_dims(guard: Guard, actual: object) -> list[int]:
    """Dims of a shape guard whose static size differs (for automatic dynamic shapes)."""
    if (
        guard.kind != "shape"
        or not isinstance(actual, np.ndarray)
        or actual.ndim != len(guard.expected)
    ):
        return []
    return [
        i for i, (e, a) in enumerate(zip(guard.expected, actual.shape)) if e is not None and e != a
    ]


def order_guards(guards: list[Guard]) -> list[Guard]:
    """Dedupe, then order by source depth (a base before its attributes) and cost."""
    unique = list({_key(g): g for g in guards}.values())
    return sorted(unique, key=lambda g: (_depth(g.source), KINDS[g.kind].rank))


def _key(guard: Guard) -> tuple:
    try:
        expected = hash(guard.expected) and guard.expected
    except TypeError:  # e.g. an object that defines __eq__ without __hash__
        expected = id(guard.expected)
    return guard.source.expr(), guard.kind, type(guard.expected), expected


def _depth(source: Source) -> int:
    return source.expr().count(".") + source.expr().count("[")


def build_check_function(guards: list[Guard], params: str) -> tuple[str, dict]:
    """Source text of ``__tc_check(<params>)`` and the namespace it needs."""
    ns: dict = dict(CHECK_NAMES)
    local_of: dict[str, str] = {}
    body: list[str] = []
    for guard in order_guards(guards):
        expr = guard.source.expr()
        if expr not in local_of:
            if expr.isidentifier():
                local_of[expr] = expr
            else:
                local_of[expr] = f"__tc_v{len(local_of)}"
                body.append(f"{local_of[expr]} = {expr}")
        const = f"__tc_k{len(ns) - len(CHECK_NAMES)}"
        ns[const] = guard.expected
        body.append(f"if not ({guard.condition(local_of[expr], const)}): return False")
    lines = [f"def __tc_check({params}):", "    try:"]
    lines += [f"        {line}" for line in body or ["pass"]]
    lines += ["    except Exception:", "        return False", "    return True"]
    return "\n".join(lines) + "\n", ns


def first_failure(guards: list[Guard], scope: dict) -> str | None:
    """The first guard (in check order) that fails for the call described by ``scope``.

    ``scope`` maps the compiled function's parameter names to the call's values, plus the
    ``__tc_g``/``__tc_cl`` names sources use.
    """
    for guard in order_guards(guards):
        try:
            actual = eval(guard.source.expr(), dict(scope))
        except Exception as error:
            return f"{guard.source.name()} can no longer be read ({type(error).__name__}: {error})"
        if KINDS[guard.kind].failure is None:  # explained by evaluating its condition
            ns = dict(scope) | CHECK_NAMES
            ns["__tc_probe"] = actual
            if not eval(guard.condition("__tc_probe", "None"), ns):
                return f"guard failed: {guard.describe()}"
            continue
        reason = guard.failure(actual)
        if reason:
            return reason
    return None


__all__ = [
    "CLOSURE",
    "GLOBALS",
    "Guard",
    "build_check_function",
    "first_failure",
    "mismatched_dims",
]
