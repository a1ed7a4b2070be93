"""The base of all symbolic values, and the values known at trace time: constants (`Const`)
and objects used by identity (`Obj`); NULL (the call protocol's) and UNBOUND (an unset local).

Each value answers, by its own methods, what the rest of the tracer asks of every value: its
Python value when fully known (`Value.constant`), what a graph call takes for it
(`Value.graph_arg`), and the glue's text for it after the graph ran (`Value.rebuild_text`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from ..ir.printer import literal_text
from ..user_code import name_of
from .source import Source

_BIRTHS = itertools.count()


def birth() -> int:
    """A serial number for a mutable value made now: values made later have larger ones (a
    loop body being captured may change only the values it made itself)."""
    return next(_BIRTHS)


class NotConstant(Exception):
    """`Value.constant` of a value whose Python value is not known at trace time."""


class NotGraphArgument(Exception):
    """`Value.graph_arg` of a value a graph call cannot take (it exists only while tracing)."""


class Value:
    source: Source | None = None

    def python_type(self) -> type:
        raise NotImplementedError

    def describe(self) -> str:
        return self.python_type().__name__

    def constant(self):
        """The Python value of a fully known value (constants and containers of them). A
        dynamic float is known from here on: its value gets pinned by a guard."""
        raise NotConstant(self)

    def is_constant(self) -> bool:
        """Whether `constant` would succeed, asked without pinning any dynamic float."""
        return False

    def graph_arg(self):
        """What a graph call takes in this value's place: its node, or a constant."""
        raise NotGraphArgument(self)

    def rebuild_text(self, rb) -> str:
        """Python text for this value in the glue, after the graph ran (``rb`` is the
        `glue.rebuild.Rebuilder`): the source a pre-existing object is read from (a list or
        dict read so gets its new contents replayed), else how it is made."""
        if self.source is not None:
            return self.source.expr()
        return self.made_text(rb)

    def made_text(self, rb) -> str:
        """Text making this value anew; a value that exists only while tracing has none."""
        raise rb.cannot_leave(self)


@dataclass(eq=False)
class KnownValue(Value):
    """A value whose Python object the trace knows: `Const` or `Obj`."""

    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def constant(self):
        return self.value

    def is_constant(self) -> bool:
        return True


@dataclass(eq=False)
class Const(KnownValue):
    """An immutable constant (int, str, tuple of constants...): guarded by value."""

    def describe(self) -> str:
        return repr(self.value)

    def graph_arg(self):
        return self.value

    def rebuild_text(self, rb) -> str:
        literal = literal_text(self.value)
        return literal if literal is not None else rb.bind(self.value)


@dataclass(eq=False)
class Obj(KnownValue):
    """A known object used by identity (module, function, class, dtype, ufunc...)."""

    def describe(self) -> str:
        name = name_of(self.value)
        return f"{type(self.value).__name__} {name}" if name else plain_repr(self.value)

    def graph_arg(self):
        if _is_graph_constant(self.value):
            return self.value
        raise NotGraphArgument(self)

    def made_text(self, rb) -> str:
        return rb.bind(self.value)


def plain_repr(obj) -> str:
    """``repr(obj)`` for messages, without a memory address (``<Foo object at 0x7f..>`` reads
    ``<Foo object>``)."""
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001 - a user's __repr__ may fail; the type still says enough
        return f"<{type(obj).__name__} object>"
    return _ADDRESS.sub("", text)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class NullValue(Value):
    def describe(self) -> str:
        return "NULL"


class UnboundValue(Value):
    def describe(self) -> str:
        return "<unbound>"


NULL = NullValue()
UNBOUND = UnboundValue()


def _is_graph_constant(obj: object) -> bool:
    """Objects a graph may hold as constants: dtypes, NumPy types and callables."""
    return isinstance(obj, (np.dtype, np.ufunc)) or (isinstance(obj, type) and issubclass(obj, np.generic)) \
        or obj in (float, int, bool, complex)  # fmt: skip
