"""Values of the trace as Python text, for the glue function (see `glue.function`).

`Rebuilder.expr` writes the text that rebuilds a symbolic value after the graph ran: a graph
output (``__tc_o[i]``), a literal, the source a pre-existing object is read from, or a
temporary built once for a value with an identity (a list, an object, a function made in the
trace). Objects with no literal form are bound to names in the glue's namespace.
"""

from __future__ import annotations

import functools
import types

from ..state.trace_state import TraceState
from ..user_code import instance_dict, name_of
from ..values.core import Value
from ..values.functions import Cell, UserFunction


class Rebuilder:
    """Rebuilds symbolic values as Python text; values with an identity are built once."""

    def __init__(self, state: TraceState):
        self.state = state
        self.outputs: list = []
        self.output_values: list = []  # the trace's value of each output, in order
        self.ns: dict = {
            "__tc_new_object": _new_object,
            "__tc_instance_dict": instance_dict,
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
        """Python text rebuilding ``v`` after the graph ran (each value says how)."""
        if id(v) in self._memo:
            return self._memo[id(v)]
        return v.rebuild_text(self)

    def output(self, node, value: Value) -> str:
        """A graph node's value (``value`` in the trace): one of the graph's outputs."""
        if node not in self.outputs:
            self.outputs.append(node)
            self.output_values.append(value)
        return f"__tc_o[{self.outputs.index(node)}]"

    def cannot_leave(self, v: Value):
        """The break for a value that exists only while tracing (the caller raises it)."""
        return self.state.graph_break(
            "unsupported_object",
            f"{v.describe()} made inside the compiled function cannot leave it (tcompile models "
            "it only while tracing)",
            "Keep it inside the compiled function, or give out a list or an array instead "
            "(list(it)); code that runs eagerly after a graph break, such as print, also needs "
            "it outside.",
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

    def function_text(self, fn: UserFunction) -> str:
        """A function made in the trace, made again from its code and pieces."""
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
            # tcompile's resume functions (partials) carry a glue name; other objects are
            # named by what Python says of them (no __getattr__ of the user's runs to ask)
            own = getattr(value, "glue_name", None) if type(value) is functools.partial else None
            hint = own or name_of(value)
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


def _new_object(cls: type):
    """An object built in the trace; its attributes are filled in next."""
    return cls.__new__(cls)


def _with_kwdefaults(fn, kwdefaults):
    fn.__kwdefaults__ = kwdefaults
    return fn
