"""Glue code of a compiled entry: call the graph, rebuild values, replay side effects, go on.

The glue is a Python function with the compiled function's own parameters:

    def f(x, obj):
        __tc_o = __tc_graph(x, obj.w)        # graph inputs read from their sources
        __tc_v0 = [__tc_o[0], 3]             # values the rest needs, each rebuilt once
        __tc_s0 = __tc_o[1]                  # new values for pre-existing state, read first...
        obj.count = __tc_s0                  # ...then written, in program order
        return (__tc_v0, obj)                # the frame's result

or, after a graph break, it runs the breaking instruction eagerly and continues in a resume
function (see `resume.py`):

        __tc_r = __tc_call(print, __tc_v0)            # the break, at the user's line
        return __tc_resume_0(__tc_cells, __tc_r, x)   # stack values, then live locals

Every value that rebuilding needs is computed before any side effect is replayed, and nothing
is rebuilt after the eager instruction ran (it may have changed anything).
"""

from __future__ import annotations

import ast
import types
from types import CodeType

from . import graph_failure
from .graph import Graph, literal_text
from .graph_passes import eliminate_common_subexpressions
from .side_effects import Write
from .signature import forwarding_text, parameter_text
from .trace_state import TraceState
from .values import (
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


class GlueWriter:
    """Rebuilds symbolic values as Python text; values with an identity are built once."""

    def __init__(self, state: TraceState):
        self.state = state
        self.outputs: list = []
        self.ns: dict = {
            "__tc_dict_replace": _dict_replace,
            "__tc_new_object": _new_object,
            "__tc_function": types.FunctionType,
            "__tc_new_cell": types.CellType,
            # builtins the glue uses, under names the frame's own parameters cannot shadow
            **{f"__tc_{f.__name__}": f for f in (slice, str, repr, ascii, format, bool, len)},
        }
        self.prelude: list[str] = []
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

    fill_cells: list

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

    def side_effect_lines(self) -> tuple[list[str], list[str]]:
        """(reads, writes) replaying the trace's writes to pre-existing state: all the values
        are read first, then written, so a write cannot change what a later one reads."""
        reads: list[str] = []
        writes: list[str] = []
        for write in reversed(self.state.effects.last_writes()):
            target, value_text = self._effect(write)
            tmp = f"__tc_s{len(reads)}"
            reads.append(f"{tmp} = {value_text}")
            writes.append(target.format(tmp))
        return reads, list(reversed(writes))

    def _effect(self, write: Write) -> tuple[str, str]:
        if write.kind == "global":
            value = self.state.effects.global_value(self.state.root_globals, write.name)
            return f"__tc_g[{write.name!r}] = {{}}", self.expr(value)
        if write.kind == "cell":
            cell = write.target
            return f"{cell.preexisting.expr()}.cell_contents = {{}}", self.expr(cell.contents)
        if write.kind == "attr":
            obj = write.target
            return f"{obj.source.expr()}.{write.name} = {{}}", self.expr(obj.overlay[write.name])
        container = write.target
        if isinstance(container, ListValue):
            items = "[" + ", ".join(self.expr(i) for i in container.items) + "]"
            return f"{container.source.expr()}[:] = {{}}", items
        pairs = ", ".join(f"{self.bind(k)}: {self.expr(i)}" for k, i in container.items.items())
        return f"__tc_dict_replace({container.source.expr()}, {{}})", "{" + pairs + "}"


def _made_in_trace(v: Value) -> bool:
    return getattr(v, "source", None) is None and not isinstance(v, Const)


def _new_object(cls: type):
    """An object built in the trace; its attributes are filled in next."""
    return cls.__new__(cls)


def _dict_replace(target: dict, new: dict) -> None:
    target.clear()
    target.update(new)


def _with_kwdefaults(fn, kwdefaults):
    fn.__kwdefaults__ = kwdefaults
    return fn


class Glue:
    """The pieces of one glue function, assembled by `finish`."""

    def __init__(self, state: TraceState, code: CodeType, closure_param: bool):
        self.state = state
        self.code = code
        self.writer = GlueWriter(state)
        self.writer.fill_cells = []
        self.writer.ns["__tc_with_kwdefaults"] = _with_kwdefaults
        self.closure_param = closure_param
        self.tail: list[tuple[str, int | None]] = []  # (statement, user line or None)
        self.resumes: list[str] = []  # what each resume function the glue calls continues

    def finish(self, result_text: str | None) -> tuple[str, dict, Graph, list, str]:
        """(source, namespace, closed graph, user line per statement, function name)."""
        writer, state = self.writer, self.state
        reads, writes = writer.side_effect_lines()
        fills = [
            f"{name}.cell_contents = {writer.expr(cell.contents)}"
            for name, cell in writer.fill_cells
        ]
        graph = state.graph
        graph.add("output", None, (tuple(writer.outputs),), name="output")
        graph.lint()
        eliminate_common_subexpressions(graph)
        graph.lint()
        graph.eliminate_dead_code()
        graph.lint()
        body: list[tuple[str, int | None]] = []
        if graph.op_count() or writer.outputs:
            body += [(line, None) for line in self._graph_call(graph)]
        body += [(line, None) for line in writer.prelude + fills + reads + writes]
        if result_text is not None:
            body.append((f"return {result_text}", None))
        body += self.tail
        params = parameter_text(self.code)
        if self.closure_param:
            params = f"__tc_cl, {params}" if params else "__tc_cl"
        name = self.code.co_name if self.code.co_name.isidentifier() else "__tc_run"
        source = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line, _ in body)
        return source, writer.ns, graph, [line for _, line in body], name

    def _graph_call(self, graph: Graph) -> list[str]:
        """The graph's call; if it raises, the frame runs again eagerly (`graph_failure`)."""
        sources = dict(zip(self.state.inputs.nodes, self.state.inputs.sources))
        inputs = ", ".join(sources[node].expr() for node in graph.inputs)
        always, fp_only = graph_failure.inputs_to_save(graph)
        forward = forwarding_text(self.code)
        if self.closure_param:
            forward = f"__tc_cl, {forward}" if forward else "__tc_cl"
        self.writer.ns.update(graph_failure.RUNTIME_NAMES)
        watch = graph_failure.warns_before_raising(graph)
        lines, on_failure = [], []
        if always or fp_only:
            saved = [f"({''.join(sources[n].expr() + ', ' for n in group)})"
                     for group in (always, fp_only)]  # fmt: skip
            lines.append(f"__tc_saved = __tc_snapshot({saved[0]}, {saved[1]})")
            on_failure.append("__tc_restore(__tc_saved)")
        rerun = f"return __tc_rerun({forward})"
        if watch:
            lines.append("__tc_seen = __tc_watch()")
            on_failure.insert(0, "__tc_seen = __tc_unwatch(__tc_seen, __tc_e)")
            rerun = f"with __tc_skipping(__tc_seen): {rerun}"
        handler = "\n".join(f"        {line}" for line in [*on_failure, rerun])
        lines.append(
            f"try:\n        __tc_o = __tc_graph({inputs})\n    except Exception as __tc_e:\n{handler}"
        )
        if watch:
            lines.append("__tc_unwatch(__tc_seen)")
        return lines


def compile_glue(source: str, lines: list, filename: str, first_line: int):
    """Compile glue so tracebacks point at the user's file and lines.

    Statements get the user's line of the break they stand for (``lines``), or the function's
    first line; the whole function is compiled under the user's file name.
    """
    tree = ast.parse(source)
    fn = tree.body[0]
    for node in ast.walk(fn):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = first_line
    for stmt, line in zip(fn.body, lines, strict=True):
        for node in ast.walk(stmt):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line or first_line
    fn.end_lineno = max([first_line] + [line for line in lines if line])
    return compile(tree, filename, "exec")


def live_example_inputs(state: TraceState) -> list:
    by_node = dict(zip((id(n) for n in state.inputs.nodes), state.inputs.examples))
    return [by_node[id(n)] for n in state.graph.inputs]
