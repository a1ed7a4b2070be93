"""Sources: where a frame reads a pre-existing value, as a Python expression.

A source's ``expr()`` is valid inside the generated guard and glue functions, whose
parameters are the compiled function's own parameters and whose globals hold
``__tc_g`` (the function's globals dict) and ``__tc_cl`` (its closure cells).
``name()`` is the human form used in guard messages (``x``, ``G['W']``, ``obj.w``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

from ..bytecode.signature import identifier

GLOBALS = "__tc_g"
CLOSURE = "__tc_cl"
BUILTINS = "__tc_b"
FUNCTION = "__tc_fn"
OBJECT_ATTR = "__tc_object_attr"
ABC_TOKEN = "__tc_abc_token"


def builtins_of(f_globals: dict) -> dict:
    """The builtins dict a function with these globals resolves names in."""
    builtins = f_globals.get("__builtins__", __builtins__)
    return builtins if isinstance(builtins, dict) else vars(builtins)


def frame_names(fn, cells=None) -> dict:
    """The names generated guard and glue functions use for ``fn``'s globals, builtins, cells
    and the function itself (sources' expressions refer to them); and ``fn``'s module name,
    under which the glue's warnings show (an instruction run eagerly after a break)."""
    closure = cells if cells is not None else fn.__closure__
    return {GLOBALS: fn.__globals__, BUILTINS: builtins_of(fn.__globals__),
            CLOSURE: closure or (), FUNCTION: fn, OBJECT_ATTR: object.__getattribute__,
            ABC_TOKEN: abc.get_cache_token, "__name__": fn.__globals__.get("__name__")}  # fmt: skip


class Source:
    """Where a value is read. A source is mostly described by templates formatted with the
    source as ``self``: ``EXPR`` gives `expr`, ``NAME`` gives `name` (the expression when
    empty) and ``HINT`` gives `hint` (the name made an identifier when empty). A source that
    reads from another one is a `DerivedSource`."""

    EXPR = NAME = HINT = ""

    def expr(self) -> str:
        return self.EXPR.format(self=self)

    def name(self) -> str:
        return self.NAME.format(self=self) if self.NAME else self.expr()

    def hint(self) -> str:
        """A variable-name-like hint for graph input names."""
        if self.HINT:
            return self.HINT.format(self=self)
        return "".join(c if c.isalnum() else "_" for c in self.name()).strip("_") or "v"


# -- sources read from another one ----------------------------------------------------------
@dataclass(frozen=True)
class DerivedSource(Source):
    """A value read from the value of ``base``. Its templates also get the base's own text as
    ``base``: ``EXPR`` makes `expr` from the base's expression and `name` from its name
    (``"{base}.{self.attr}"``), ``HINT`` makes `hint` from its hint."""

    base: Source

    def expr(self) -> str:
        return self.EXPR.format(base=self.base.expr(), self=self)

    def name(self) -> str:
        return self.EXPR.format(base=self.base.name(), self=self)

    def hint(self) -> str:
        if self.HINT:
            return self.HINT.format(base=self.base.hint(), self=self)
        return super().hint()


@dataclass(frozen=True)
class AttrSource(DerivedSource):
    """An attribute of the base (``obj.w``)."""

    attr: str
    EXPR = "{base}.{self.attr}"

    def hint(self) -> str:
        if self.attr == "cell_contents":
            return self.base.hint()
        return f"{self.base.hint()}_{self.attr}"


@dataclass(frozen=True)
class ObjectAttrSource(AttrSource):
    """An attribute of an object whose class has a ``__getattribute__`` or ``__getattr__`` of the
    user's, read around them (``object.__getattribute__(obj, 'w')``): a guard never runs them."""

    EXPR = OBJECT_ATTR + "({base}, {self.attr!r})"

    def name(self) -> str:
        return f"{self.base.name()}.{self.attr}"


@dataclass(frozen=True)
class ItemSource(DerivedSource):
    """An item of the base (``d['k']``, ``t[0]``)."""

    key: object
    EXPR = "{base}[{self.key!r}]"
    HINT = "{base}_{self.key}"


@dataclass(frozen=True)
class TypeSource(DerivedSource):
    """The base's type (``type(x)``)."""

    EXPR = "type({base})"


# -- where a frame's values start: the roots ----------------------------------------------------
@dataclass(frozen=True)
class LocalSource(Source):
    """A parameter or local variable of the compiled function (``x``)."""

    local: str
    # how messages name it, where that is not ``local``: a resume function's stack argument
    # (``___stack0``) is named by the expression that computed it (``foo(x)``)
    label: str = field(default="", compare=False)

    def expr(self) -> str:
        return identifier(self.local)

    def name(self) -> str:
        return self.label or self.local

    def hint(self) -> str:
        return super().hint() if self.label else self.local


@dataclass(frozen=True)
class GlobalSource(Source):
    """A global of the compiled function, read from its globals dict (``G['W']``)."""

    global_name: str
    EXPR = GLOBALS + "[{self.global_name!r}]"
    NAME = "G[{self.global_name!r}]"
    HINT = "{self.global_name}"


@dataclass(frozen=True)
class GlobalsDictSource(Source):
    """The compiled function's globals dict itself (for "builtin not shadowed" guards)."""

    EXPR, NAME = GLOBALS, "G"


@dataclass(frozen=True)
class BuiltinSource(Source):
    """A builtin (``len``) as the compiled function's globals resolve it."""

    builtin: str
    EXPR = BUILTINS + "[{self.builtin!r}]"
    NAME = "builtins[{self.builtin!r}]"


@dataclass(frozen=True)
class FunctionSource(Source):
    """The compiled function itself (its ``__code__`` and defaults can be replaced)."""

    qualname: str
    EXPR, NAME = FUNCTION, "{self.qualname}"


@dataclass(frozen=True)
class AbcCacheTokenSource(Source):
    """abc's cache token: it changes whenever a class is registered with any ABC, which may change
    what ``isinstance`` and ``issubclass`` answer of an ABC (``Sequence.register(MyList)``)."""

    EXPR, NAME = ABC_TOKEN + "()", "abc.get_cache_token()"


@dataclass(frozen=True)
class ClosureCellSource(Source):
    """The compiled function's own closure cell number ``index`` (the cell object)."""

    index: int
    var: str
    EXPR = CLOSURE + "[{self.index}]"
    NAME = "cell({self.var!r})"
    HINT = "{self.var}"
