"""Guards: what a compiled entry assumed, checked by one generated straight-line function.

Each `Guard` is one assumption about a source (type, identity, value, dtype, shape, length,
dict keys). `build_check_function` turns an entry's guards into Python source, cheapest and
most discriminating checks first, each source read once into a local; `first_failure` explains
a miss one guard at a time, only after the fast check failed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .device_arrays import guard_key
from .source import CLOSURE, GLOBALS, Source

# Kind -> rank: lower runs first (identity and type checks before attribute reads).
_ORDER = {"type": 0, "id": 0, "not_global": 1, "const": 1, "len": 2, "keys": 2, "dtype": 3,
          "device_array": 3, "shape": 4, "strides": 5, "no_shadow": 5, "alias": 6}  # fmt: skip


@dataclass(frozen=True)
class Guard:
    source: Source
    kind: str
    expected: object

    # -- the check as an expression over the local name ``v`` ---------------------------------
    def condition(self, v: str, const: str) -> str:
        """Python text true when the guard holds; ``const`` names the bound expected value."""
        k = self.kind
        if k == "type" or k == "id":
            return f"__tc_type({v}) is {const}" if k == "type" else f"{v} is {const}"
        if k == "const":
            e = self.expected
            if e is None or type(e) is bool:
                return f"{v} is {const}"
            if type(e) in (int, str, bytes) or (type(e) is float and e == e and e != 0):
                return f"__tc_type({v}) is __tc_type({const}) and {v} == {const}"
            return f"__tc_same({v}, {const})"  # -0.0 is not 0.0, NaN is NaN
        if k == "len":
            return f"__tc_len({v}) == {self.expected}"
        if k == "keys":
            return f"__tc_tuple({v}) == {const}"
        if k == "dtype":
            return f"({v}.dtype is {const} or {v}.dtype == {const})"
        if k == "device_array":
            return f"__tc_device_key({v}) == {const}"
        if k == "shape":
            return _shape_condition(v, self.expected)
        if k == "strides":
            return f"{v}.strides == {self.expected!r}"
        if k == "not_global":
            return f"{self.expected!r} not in {v}"
        if k == "no_shadow":
            return f"{self.expected!r} not in __tc_getattr({v}, '__dict__', ())"
        if k == "alias":
            other, same = self.expected
            return f"({v} is {other.expr()}) is {same}"
        raise AssertionError(k)

    def describe(self) -> str:
        name = self.source.name()
        k, e = self.kind, self.expected
        if k == "type":
            return f"type({name}) is {e.__qualname__}"
        if k == "id":
            return f"{name} is {_short(e)}  (id {id(e):#x})"
        if k == "const":
            return f"{name} == {e!r}"
        if k == "len":
            return f"len({name}) == {e}"
        if k == "keys":
            return f"keys of {name} == {e!r}"
        if k == "dtype":
            return f"{name}.dtype == {e}"
        if k == "device_array":
            (kind, device), dtype = e
            where = f"on device {device}" if device is not None else "on the CPU"
            return f"{name} is a {kind} array of {np.dtype(dtype)} {where}"
        if k == "shape":
            dims = ", ".join("s>=2" if d is None else str(d) for d in e)
            return f"{name}.shape == ({dims}{',' if len(e) == 1 else ''})"
        if k == "strides":
            return f"{name}.strides == {e!r}"
        if k == "not_global":
            return f"{e!r} not shadowed in globals (builtin)"
        if k == "no_shadow":
            return f"{name} has no instance attribute {e!r}"
        if k == "alias":
            other, same = e
            return f"{name} {'is' if same else 'is not'} {other.name()}"
        return f"{name} {k} {e!r}"

    def failure(self, actual: object) -> str | None:
        """Why the guard fails for the source's actual value, or None if it holds."""
        name, k, e = self.source.name(), self.kind, self.expected
        try:
            if k == "type" and type(actual) is not e:
                return f"type of {name} changed: expected {e.__qualname__}, actual {type(actual).__qualname__}"
            if k == "id" and actual is not e:
                return f"{name} is a different object than the one traced ({_short(e)})"
            if k == "const" and not same_constant(actual, e):
                return f"{name} == {e!r} failed: actual {actual!r}"
            if k == "len" and len(actual) != e:
                return f"len({name}) changed: expected {e}, actual {len(actual)}"
            if k == "keys" and tuple(actual) != e:
                return f"keys of {name} changed: expected {e!r}, actual {tuple(actual)!r}"
            if k == "dtype" and actual.dtype != e:
                return f"array {name} dtype mismatch: expected {e}, actual {actual.dtype}"
            if k == "device_array" and guard_key(actual) != e:
                return f"{name} changed: expected {self.describe()}, actual {guard_key(actual)}"
            if k == "shape":
                return _shape_failure(name, e, actual.shape)
            if k == "strides" and actual.strides != e:
                return f"array {name} strides changed: expected {e}, actual {actual.strides}"
            if k == "no_shadow" and e in getattr(actual, "__dict__", ()):
                return f"{name} now has an instance attribute {e!r} shadowing the traced method"
        except Exception as error:  # the value no longer supports the check
            return f"{name}: {k} check raised {type(error).__name__}: {error}"
        return None


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
               "__tc_getattr": getattr, "__tc_same": same_constant,
               "__tc_device_key": guard_key}  # fmt: skip


def _short(obj) -> str:
    return (
        getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    )


def _shape_condition(v: str, dims: tuple) -> str:
    if all(d is not None for d in dims):
        return f"{v}.shape == {tuple(dims)!r}"
    parts = [f"len({v}.shape) == {len(dims)}"]
    for i, d in enumerate(dims):
        parts.append(f"{v}.shape[{i}] >= 2" if d is None else f"{v}.shape[{i}] == {d}")
    return " and ".join(parts)


def _shape_failure(name: str, expected: tuple, actual: tuple) -> str | None:
    if len(actual) != len(expected):
        return f"array {name} rank mismatch: expected {len(expected)}, actual {len(actual)}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e is None and a < 2:
            return f"array {name} size at dim {i} is {a}; the dynamic dim assumed a size >= 2"
        if e is not None and a != e:
            return f"array {name} size mismatch at dim {i}: expected {e}, actual {a}"
    return None


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
    return sorted(unique, key=lambda g: (_depth(g.source), _ORDER[g.kind]))


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
        if guard.kind in ("not_global", "alias"):
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
