"""Functions the tracer inlines (`UserFunction`), closure cells (`Cell`), and the supported
context managers made in the trace with the exits their with-blocks push."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from types import CodeType

from .core import Value, birth
from .source import Source


@dataclass(eq=False)
class Cell(Value):
    """A closure cell: made in the trace (``preexisting`` None), or standing for a real cell
    read through ``preexisting`` (its Source); writes to those are replayed after the graph."""

    contents: Value | None = None
    preexisting: Source | None = None
    real: bool = False
    born: int = field(default_factory=birth, repr=False)

    def python_type(self) -> type:
        return types.CellType

    def made_text(self, rb) -> str:
        return rb.cell(self)


@dataclass(eq=False)
class UserFunction(Value):
    """A Python function the tracer inlines. ``fn`` is the real function when it pre-exists;
    functions made by MAKE_FUNCTION inside the trace have ``fn=None`` and their pieces here."""

    code: CodeType
    globals: dict
    name: str
    defaults: tuple = ()
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()  # of Cell (made in the trace) or Value-producing callables
    fn: object = None
    source: Source | None = None
    wrapper: object = None  # the tc.compile wrapper it was reached through, if any

    def python_type(self) -> type:
        return types.FunctionType

    def describe(self) -> str:
        return f"function {self.code.co_qualname}"

    def made_text(self, rb) -> str:
        if self.fn is not None:
            return rb.bind(self.fn)
        return rb.temp(rb.function_text(self), self)


@dataclass(eq=False)
class ContextManager(Value):
    """A context manager object made in the trace (``np.errstate(...)``, ``nullcontext()``)."""

    cls: type
    args: list
    kwargs: dict

    def python_type(self) -> type:
        return self.cls

    def describe(self) -> str:
        return f"{self.cls.__qualname__}()"

    def made_text(self, rb) -> str:
        args = [rb.expr(a) for a in self.args] + [
            f"{k}={rb.expr(a)}" for k, a in self.kwargs.items()
        ]
        return rb.temp(f"{rb.bind(self.cls)}({', '.join(args)})", self)


@dataclass(eq=False)
class ContextExit(Value):
    """The ``__exit__`` a supported with-block pushed: calling it leaves the block."""

    manager: Value
    owner: object = None  # for a user-defined manager: the translator whose block it closes

    def python_type(self) -> type:
        return types.FunctionType

    def describe(self) -> str:
        return f"exit of {self.manager.describe()}"
