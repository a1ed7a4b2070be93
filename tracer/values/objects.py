"""Instances of the user's classes (`UserObject`), their bound methods, and ``super()``."""

from __future__ import annotations

import types
from dataclasses import dataclass, field

from .core import Value, birth
from .source import Source


@dataclass(eq=False)
class UserObject(Value):
    """A user-class instance: pre-existing (``value`` and ``source``), or constructed in the
    trace (``new_cls`` set, ``value`` None: all its attributes live in ``overlay``)."""

    value: object
    source: Source | None = None
    overlay: dict = field(default_factory=dict)  # attributes written during the trace
    new_cls: type | None = None
    mutated: bool = False  # attributes written (a pre-existing object)
    born: int = field(default_factory=birth, repr=False)

    @property
    def cls(self) -> type:
        return self.new_cls if self.new_cls is not None else type(self.value)

    def python_type(self) -> type:
        return self.cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__} object"

    def rebuild_text(self, rb) -> str:
        if self.new_cls is None:
            return self.source.expr()
        name = rb.temp(f"__tc_new_object({rb.bind(self.new_cls)})", self)
        attrs = ", ".join(f"{a!r}: {rb.expr(x)}" for a, x in self.overlay.items())
        rb.prelude.append(f"__tc_instance_dict({name}).update({{{attrs}}})")  # no __setattr__
        return name


@dataclass(eq=False)
class BoundMethod(Value):
    func: Value
    self_value: Value
    source: Source | None = None

    def python_type(self) -> type:
        return types.MethodType

    def made_text(self, rb) -> str:
        method = rb.bind(types.MethodType)
        return rb.temp(f"{method}({rb.expr(self.func)}, {rb.expr(self.self_value)})", self)


@dataclass(eq=False)
class SuperValue(Value):
    """``super()`` inside a method: attribute lookups start after ``cls`` in self's MRO."""

    cls: type
    self_value: Value

    def python_type(self) -> type:
        return super


@dataclass(eq=False)
class Opaque(Value):
    """An object tcompile does not model, read from a local (an argument, or a value a resume
    function is handed: an ``np.ndindex``, a generator, a file): likely a new one on every
    call, so it is guarded by its type, never by its identity, and the trace never looks
    inside it. Any use but passing it on is a graph break, which runs the use eagerly on the
    real object; a method read from it is an `Opaque` too (its call breaks)."""

    cls: type
    source: Source

    def python_type(self) -> type:
        return self.cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__} object"
