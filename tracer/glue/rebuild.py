"""Values of the trace as Python text, for the glue function (see `glue.function`).

`Rebuilder.expr` writes the text that rebuilds a symbolic value after the graph ran: a graph
output (``__tc_o[i]``), a literal, the source a pre-existing object is read from, or a
temporary built once for a value with an identity (a list, an object, a function made in the
trace). Objects with no literal form are bound to names in the glue's namespace.
"""

from __future__ import annotations

import types

from ..graph import literal_text
from ..trace_state import TraceState
from ..values import (
    ArrayFlags,
    ArrayMethod,
    ArrayValue,
    BoundMethod,
    Cell,
    Const,
    ConstMethod,
    ContextManager,
    DictValue,
    ListValue,
    Obj,
    ScalarValue,
    SetValue,
    SliceValue,
    SymFloat,
    SymInt,
    TupleValue,
    UserFunction,
    UserObject,
    Value,
)


class Rebuilder:
    """Rebuilds symbolic values as Python text; values with an identity are built once."""

    def __init__(self, state: TraceState):
        self.state = state
        self.outputs: list = []
        self.ns: dict = {
            "__tc_new_object": _new_object,
            "__tc_with_kwdefaults": _with_kwdefaults,
            "__tc_function": types.FunctionType,
            "__tc_new_cell": types.CellType,
            # builtins the glue uses, under names the frame's own parameters cannot shadow
            **{f"__tc_{f.__name__}": f for f in (slice, str, repr, ascii, format, bool, len)},
        }
        self.prelude: list[str] = []  # statements computing the temporaries, in order
        self.fill_cells: list = []  # (name, Cell) of new cells, filled once all is built
        self._memo: dict[int, str] = {}
        self._bound: dict[int, str] = {}

    def temp(self, text: str, key: object | None = None) -> str:
        name = f"__tc_v{len(self.prelude)}"
        self.prelude.append(f"{name} = {text}")
        if key is not None:
            self._memo[id(key)] = name
        return name

    def expr(self, v: Value) -> str:
        """Python text rebuilding ``v`` after the graph ran."""
        if id(v) in self._memo:
            return self._memo[id(v)]
        if isinstance(v, (ArrayValue, ScalarValue, SymInt, SymFloat)):
            if v.node not in self.outputs:
                self.outputs.append(v.node)
            return f"__tc_o[{self.outputs.index(v.node)}]"
        if isinstance(v, Const):
            literal = literal_text(v.value)
            return literal if literal is not None else self.bind(v.value)
        if getattr(v, "source", None) is not None and not isinstance(v, UserObject | TupleValue):
            return v.source.expr()  # the same object (lists/dicts: new contents are replayed)
        if isinstance(v, TupleValue):
            if v.source is not None and not any(_made_in_trace(i) for i in v.items):
                return v.source.expr()
            inner = "".join(f"{self.expr(i)}, " for i in v.items)
            text = f"{self.bind(v.namedtuple)}({inner})" if v.namedtuple else f"({inner})"
            return self.temp(text, v)
        if isinstance(v, ListValue):
            return self.temp("[" + ", ".join(self.expr(i) for i in v.items) + "]", v)
        if isinstance(v, DictValue):
            pairs = ", ".join(f"{self.bind(k)}: {self.expr(i)}" for k, i in v.items.items())
            return self.temp("{" + pairs + "}", v)
        if isinstance(v, SetValue):
            # a copy of the set the trace built: same members, and (checked) the same order
            if list(v.values.copy()) != list(v.values):
                raise self.state.graph_break("unsupported_object", "a set built in the trace "
                                             "cannot be rebuilt with its iteration order")  # fmt: skip
            return self.temp(f"{self.bind(v.values)}.copy()", v)
        if isinstance(v, SliceValue):
            return f"__tc_slice({self.expr(v.start)}, {self.expr(v.stop)}, {self.expr(v.step)})"
        if isinstance(v, UserObject):
            if v.new_cls is None:
                return v.source.expr()
            name = self.temp(f"__tc_new_object({self.bind(v.new_cls)})", v)
            attrs = ", ".join(f"{a!r}: {self.expr(x)}" for a, x in v.overlay.items())
            self.prelude.append(f"{name}.__dict__.update({{{attrs}}})")
            return name
        if isinstance(v, Obj):
            return self.bind(v.value)
        if isinstance(v, UserFunction):
            if v.fn is not None:
                return self.bind(v.fn)
            return self.temp(self._function_text(v), v)
        if isinstance(v, Cell):
            return self.cell(v)
        if isinstance(v, BoundMethod):
            return self.temp(
                f"{self.bind(types.MethodType)}({self.expr(v.func)}, {self.expr(v.self_value)})", v
            )
        if isinstance(v, ContextManager):
            args = [self.expr(a) for a in v.args] + [
                f"{k}={self.expr(a)}" for k, a in v.kwargs.items()
            ]
            return self.temp(f"{self.bind(v.cls)}({', '.join(args)})", v)
        if isinstance(v, ArrayFlags):
            return f"{self.expr(v.array)}.flags"
        if isinstance(v, (ArrayMethod, ConstMethod)):
            return f"{self.expr(v.self_value)}.{v.name}"
        raise self.state.graph_break(
            "unsupported_object",
            f"{v.describe()} cannot leave the compiled region (it exists only while tracing)",
        )

    def cell(self, cell: Cell) -> str:
        """A real cell object for a modelled one (new cells are made, then filled at the end)."""
        if id(cell) in self._memo:
            return self._memo[id(cell)]
        if cell.preexisting is not None:
            return cell.preexisting.expr()
        name = self.temp("__tc_new_cell()", cell)
        if cell.contents is not None:
            self.fill_cells.append((name, cell))
        return name

    def _function_text(self, fn: UserFunction) -> str:
        closure = (
            "(" + "".join(f"{self.expr(c)}, " for c in fn.closure) + ")" if fn.closure else "None"
        )
        defaults = (
            "(" + "".join(f"{self.expr(d)}, " for d in fn.defaults) + ")" if fn.defaults else "None"
        )
        text = f"__tc_function({self.bind(fn.code)}, {self.bind(fn.globals)}, {fn.name!r}, {defaults}, {closure})"
        if fn.kwdefaults:
            kw = ", ".join(f"{k!r}: {self.expr(d)}" for k, d in fn.kwdefaults.items())
            return f"__tc_with_kwdefaults({text}, {{{kw}}})"
        return text

    def bind(self, value) -> str:
        """A name in the glue's namespace for an object (the same name for the same object),
        readable where the object has one: ``__tc_print``, ``__tc_resume_at_12``."""
        if id(value) not in self._bound:
            hint = getattr(value, "glue_name", None) or getattr(value, "__name__", None)
            if not isinstance(hint, str) or not hint.isidentifier():
                hint = "c"
            name = (
                f"__tc_{hint}_{len(self._bound)}"
                if f"__tc_{hint}" in self.ns or hint == "c"
                else f"__tc_{hint}"
            )
            self._bound[id(value)] = name
            self.ns[name] = value
        return self._bound[id(value)]


def _made_in_trace(v: Value) -> bool:
    return getattr(v, "source", None) is None and not isinstance(v, Const)


def _new_object(cls: type):
    """An object built in the trace; its attributes are filled in next."""
    return cls.__new__(cls)


def _with_kwdefaults(fn, kwdefaults):
    fn.__kwdefaults__ = kwdefaults
    return fn
