"""Sources: where a frame reads a pre-existing value, as a Python expression.

A source's ``expr()`` is valid inside the generated guard and glue functions, whose
parameters are the compiled function's own parameters and whose globals hold
``__tc_g`` (the function's globals dict) and ``__tc_cl`` (its closure cells).
``name()`` is the human form used in guard messages (``x``, ``G['W']``, ``obj.w``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .signature import identifier

GLOBALS = "__tc_g"
CLOSURE = "__tc_cl"
BUILTINS = "__tc_b"
FUNCTION = "__tc_fn"


def builtins_of(f_globals: dict) -> dict:
    """The builtins dict a function with these globals resolves names in."""
    builtins = f_globals.get("__builtins__", __builtins__)
    return builtins if isinstance(builtins, dict) else vars(builtins)


def frame_names(fn, cells=None) -> dict:
    """The names generated guard and glue functions use for ``fn``'s globals, builtins, cells
    and the function itself (sources' expressions refer to them)."""
    closure = cells if cells is not None else fn.__closure__
    return {GLOBALS: fn.__globals__, BUILTINS: builtins_of(fn.__globals__),
            CLOSURE: closure or (), FUNCTION: fn}  # fmt: skip


class Source:
    def expr(self) -> str:
        raise NotImplementedError

    def name(self) -> str:
        return self.expr()

    def hint(self) -> str:
        """A variable-name-like hint for graph input names."""
        return "".join(c if c.isalnum() else "_" for c in self.name()).strip("_") or "v"

    @property
    def root(self) -> Source:
        return self


@dataclass(frozen=True)
class LocalSource(Source):
    local: str

    def expr(self) -> str:
        return identifier(self.local)

    def name(self) -> str:
        # a resume function's stack arguments stand for values computed before the break
        return "a value computed before the graph break" if self.local.startswith("___stack") \
            else self.local  # fmt: skip

    def hint(self) -> str:
        return self.local


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    def expr(self) -> str:
        return f"{GLOBALS}[{self.global_name!r}]"

    def name(self) -> str:
        return f"G[{self.global_name!r}]"

    def hint(self) -> str:
        return self.global_name


@dataclass(frozen=True)
class GlobalsDictSource(Source):
    """The compiled function's globals dict itself (for "builtin not shadowed" guards)."""

    def expr(self) -> str:
        return GLOBALS

    def name(self) -> str:
        return "G"


@dataclass(frozen=True)
class BuiltinSource(Source):
    """A builtin (``len``) as the compiled function's globals resolve it."""

    builtin: str

    def expr(self) -> str:
        return f"{BUILTINS}[{self.builtin!r}]"

    def name(self) -> str:
        return f"builtins[{self.builtin!r}]"


@dataclass(frozen=True)
class FunctionSource(Source):
    """The compiled function itself (its ``__code__`` and defaults can be replaced)."""

    qualname: str

    def expr(self) -> str:
        return FUNCTION

    def name(self) -> str:
        return self.qualname


@dataclass(frozen=True)
class ClosureCellSource(Source):
    """The compiled function's own closure cell number ``index`` (the cell object)."""

    index: int
    var: str

    def expr(self) -> str:
        return f"{CLOSURE}[{self.index}]"

    def name(self) -> str:
        return f"cell({self.var!r})"

    def hint(self) -> str:
        return self.var


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    attr: str

    def expr(self) -> str:
        return f"{self.base.expr()}.{self.attr}"

    def name(self) -> str:
        return f"{self.base.name()}.{self.attr}"

    def hint(self) -> str:
        if self.attr == "cell_contents":
            return self.base.hint()
        return f"{self.base.hint()}_{self.attr}"

    @property
    def root(self) -> Source:
        return self.base.root


@dataclass(frozen=True)
class ItemSource(Source):
    base: Source
    key: object

    def expr(self) -> str:
        return f"{self.base.expr()}[{self.key!r}]"

    def name(self) -> str:
        return f"{self.base.name()}[{self.key!r}]"

    def hint(self) -> str:
        return f"{self.base.hint()}_{self.key}"

    @property
    def root(self) -> Source:
        return self.base.root


@dataclass(frozen=True)
class TypeSource(Source):
    base: Source

    def expr(self) -> str:
        return f"type({self.base.expr()})"

    def name(self) -> str:
        return f"type({self.base.name()})"
