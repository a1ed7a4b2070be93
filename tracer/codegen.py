"""Glue code of a compiled entry: call the graph, replay side effects, rebuild the result.

The glue is a Python function with the compiled function's own parameters:

    def __tc_run(x, obj):
        __tc_o = __tc_graph(x, obj.w)        # graph inputs read from their sources
        __tc_r = (__tc_o[0], 3, obj)         # the return value, rebuilt
        __tc_s0 = __tc_o[1]                  # new values for pre-existing state, read first...
        obj.count = __tc_s0                  # ...then written, in program order
        return __tc_r

Every value that rebuilding needs is computed before any side effect is replayed, so a
replayed write never changes what another rebuilt value reads.
"""

from __future__ import annotations

import inspect
from types import CodeType

from .graph import Graph, Node, literal_text
from .trace_state import TraceState
from .values import (
    ArrayValue,
    Const,
    DictValue,
    ListValue,
    Obj,
    ScalarValue,
    SetValue,
    SliceValue,
    SymInt,
    TupleValue,
    UserFunction,
    UserObject,
    Value,
)


def parameter_text(code: CodeType) -> str:
    """The parameter list of ``code`` without defaults (they are set on the function object)."""
    names = code.co_varnames
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    parts = list(names[:nargs])
    if nposonly:
        parts.insert(nposonly, "/")
    position = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        parts.append("*" + names[position])
        position += 1
    elif nkwonly:
        parts.append("*")
    parts.extend(names[nargs : nargs + nkwonly])
    if code.co_flags & inspect.CO_VARKEYWORDS:
        parts.append("**" + names[position])
    return ", ".join(parts)


class GlueWriter:
    def __init__(self, state: TraceState):
        self.state = state
        self.outputs: list[Node] = []
        self.ns: dict = {}

    def expr(self, v: Value) -> str:
        """Python text rebuilding ``v`` after the graph ran."""
        if isinstance(v, (ArrayValue, ScalarValue, SymInt)):
            if v.node not in self.outputs:
                self.outputs.append(v.node)
            return f"__tc_o[{self.outputs.index(v.node)}]"
        if isinstance(v, Const):
            literal = literal_text(v.value)
            return literal if literal is not None else self.bind(v.value)
        if isinstance(v, TupleValue):
            inner = "".join(f"{self.expr(i)}, " for i in v.items)
            if v.namedtuple is not None:
                return f"{self.bind(v.namedtuple)}({inner})"
            return f"({inner})"
        if isinstance(v, (ListValue, DictValue)):
            if v.source is not None:
                return v.source.expr()  # the same object; its new contents are replayed
            if isinstance(v, ListValue):
                return "[" + ", ".join(self.expr(i) for i in v.items) + "]"
            return (
                "{" + ", ".join(f"{self.bind(k)}: {self.expr(i)}" for k, i in v.items.items()) + "}"
            )
        if isinstance(v, SetValue):
            return f"set({self.bind(frozenset(v.values))})" if v.values else "set()"
        if isinstance(v, SliceValue):
            return f"slice({self.expr(v.start)}, {self.expr(v.stop)}, {self.expr(v.step)})"
        if isinstance(v, UserObject) and v.new_cls is not None:
            attrs = ", ".join(f"{name!r}: {self.expr(a)}" for name, a in v.overlay.items())
            return f"__tc_new_object({self.bind(v.new_cls)}, {{{attrs}}})"
        if isinstance(v, (Obj, UserObject)):
            return v.source.expr() if v.source is not None else self.bind(v.value)
        if isinstance(v, UserFunction) and v.fn is not None:
            return v.source.expr() if v.source is not None else self.bind(v.fn)
        raise self.state.graph_break(
            "unsupported_object",
            f"{v.describe()} cannot leave the compiled region (it exists only while tracing)",
        )

    def bind(self, value) -> str:
        name = f"__tc_c{len(self.ns)}"
        self.ns[name] = value
        return name

    def side_effect_lines(self) -> tuple[list[str], list[str]]:
        """(reads, writes) replaying the trace's writes to pre-existing state."""
        reads: list[str] = []
        writes: list[str] = []
        seen: set = set()
        for effect in reversed(self.state.side_effects):  # last write of each target wins
            key = (effect[0], *(id(e) if not isinstance(e, str) else e for e in effect[1:]))
            if key in seen:
                continue
            seen.add(key)
            target, value_text = self._effect(effect)
            tmp = f"__tc_s{len(reads)}"
            reads.append(f"{tmp} = {value_text}")
            writes.append(target.format(tmp))
        return reads, list(reversed(writes))

    def _effect(self, effect: tuple) -> tuple[str, str]:
        kind = effect[0]
        if kind == "global":
            name = effect[1]
            value = self.state.global_writes[(id(self.state.root_globals), name)]
            return f"__tc_g[{name!r}] = {{}}", self.expr(value)
        if kind == "cell":
            cell = effect[1]
            return f"{cell.preexisting.expr()}.cell_contents = {{}}", self.expr(cell.contents)
        if kind == "attr":
            obj, name = effect[1], effect[2]
            return f"{obj.source.expr()}.{name} = {{}}", self.expr(obj.overlay[name])
        container = effect[1]
        if isinstance(container, ListValue):
            items = "[" + ", ".join(self.expr(i) for i in container.items) + "]"
            return f"{container.source.expr()}[:] = {{}}", items
        pairs = ", ".join(f"{self.bind(k)}: {self.expr(i)}" for k, i in container.items.items())
        return f"__tc_dict_replace({container.source.expr()}, {{}})", "{" + pairs + "}"


def _new_object(cls: type, attrs: dict):
    """An object built in the trace, as its ``__init__`` left it."""
    obj = cls.__new__(cls)
    obj.__dict__.update(attrs)
    return obj


def _dict_replace(target: dict, new: dict) -> None:
    target.clear()
    target.update(new)


def write_glue(state: TraceState, code: CodeType, result: Value) -> tuple[str, dict, Graph]:
    """Source of ``__tc_run`` and its namespace; also closes the graph with its output node."""
    writer = GlueWriter(state)
    result_text = writer.expr(result)
    reads, writes = writer.side_effect_lines()
    graph = state.graph
    graph.add("output", None, (tuple(writer.outputs),), name="output")
    graph.eliminate_dead_code()
    graph.lint()
    inputs = ", ".join(s.expr() for s in _live_input_sources(state))
    lines = [f"def __tc_run({parameter_text(code)}):"]
    if graph.op_count() or writer.outputs:
        lines.append(f"    __tc_o = __tc_graph({inputs})")
    lines.append(f"    __tc_r = {result_text}")
    lines += [f"    {line}" for line in reads + writes]
    lines.append("    return __tc_r")
    writer.ns["__tc_dict_replace"] = _dict_replace
    writer.ns["__tc_new_object"] = _new_object
    return "\n".join(lines) + "\n", writer.ns, graph


def _live_input_sources(state: TraceState):
    by_node = dict(zip((id(n) for n in state.input_nodes), state.input_sources))
    return [by_node[id(n)] for n in state.graph.inputs]


def live_example_inputs(state: TraceState) -> list:
    by_node = dict(zip((id(n) for n in state.input_nodes), state.example_inputs))
    return [by_node[id(n)] for n in state.graph.inputs]
