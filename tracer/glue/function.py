"""The glue function of a compiled entry: call the graph, rebuild values, replay side effects,
then return the frame's result or go on past a graph break.

The glue has the compiled function's own parameters:

    def f(x, obj):
        __tc_o = __tc_graph(x, obj.w)        # graph inputs read from their sources
        __tc_v0 = [__tc_o[0], 3]             # values the rest needs, each rebuilt once
        __tc_s0 = __tc_o[1]                  # new values for pre-existing state, read first...
        obj.count = __tc_s0                  # ...then written, in program order
        return (__tc_v0, obj)                # the frame's result

or, after a graph break, its tail (written by `glue.continuation.Continuation`) runs the
breaking instruction eagerly and continues in a resume function (see `bytecode.resume`):

        __tc_r = __tc_call(print, __tc_v0)            # the break, at the user's line
        return __tc_resume_0(__tc_cells, __tc_r, x)   # stack values, then live locals

Every value that rebuilding needs is computed before any side effect is replayed, and nothing
is rebuilt after the eager instruction ran (it may have changed anything).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import CodeType

from ..bytecode.signature import forwarding_text, parameter_text
from ..ir import graph_failure
from ..ir.graph import Graph
from ..ir.graph_passes import eliminate_common_subexpressions
from ..ir.line_numbers import place_at_user_lines
from ..semantics.user_objects import replays_around_setattr
from ..state.side_effects import Write
from ..state.trace_state import TraceState
from ..values.containers import ListValue, PreexistingList
from ..values.core import Value
from .rebuild import Rebuilder


@dataclass
class GlueSource:
    """A finished glue function: its text, the names it reads, the closed graph it calls, and
    the user's line per statement (None: the function's first line)."""

    text: str
    namespace: dict
    graph: Graph
    lines: list[int | None]
    name: str

    def compile(self, filename: str, first_line: int):
        """The code of the module defining the glue, at the user's file and lines."""
        tree = ast.parse(self.text)
        fn = tree.body[0]
        place_at_user_lines(fn, fn.body, self.lines, first_line)
        return compile(tree, filename, "exec")


class GlueFunction:
    """Writes one glue function: `values` rebuilds values as text, `emit` adds the tail after
    a break, `finish` closes the graph and assembles the function."""

    def __init__(self, state: TraceState, code: CodeType, closure_param: bool, *,
                 call, rerun):  # fmt: skip
        self.state = state
        self.code = code
        self.closure_param = closure_param  # resume frames get their cells as a first argument
        self.values = Rebuilder(state)
        self.values.ns["__tc_dict_replace"] = _dict_replace
        self.values.ns["__tc_object_setattr"] = object.__setattr__
        self.values.ns["__tc_call"] = call  # eager calls of user functions, through the cache
        self.values.ns["__tc_rerun"] = rerun  # the frame run eagerly, when the graph fails
        self.tail: list[tuple[str, int | None]] = []  # (statement, user line)
        self.resumes: list[str] = []  # what each resume function the glue calls continues

    def emit(self, statement: str, line: int | None) -> None:
        self.tail.append((statement, line))

    def finish(self, result: Value | None) -> GlueSource:
        """Close the graph and assemble the function, returning ``result`` (None: the tail
        returns)."""
        values, state = self.values, self.state
        result_text = values.expr(result) if result is not None else None
        reads, writes = self._side_effect_lines()
        fills = [
            f"{name}.cell_contents = {values.expr(cell.contents)}"
            for name, cell in values.fill_cells
        ]
        graph = state.graph
        graph.add("output", None, (tuple(values.outputs),), name="output")
        graph.lint()
        eliminate_common_subexpressions(graph)
        graph.lint()
        graph.eliminate_dead_code()
        graph.lint()
        body: list[tuple[str, int | None]] = []
        if graph.op_count() or values.outputs:
            body += [(line, None) for line in self._graph_call(graph)]
        body += [(line, None) for line in values.prelude + fills + reads + writes]
        if result_text is not None:
            body.append((f"return {result_text}", None))
        body += self.tail
        params = parameter_text(self.code)
        if self.closure_param:
            params = f"__tc_cl, {params}" if params else "__tc_cl"
        name = self.code.co_name if self.code.co_name.isidentifier() else "__tc_run"
        text = f"def {name}({params}):\n" + "".join(f"    {line}\n" for line, _ in body)
        return GlueSource(text, values.ns, graph, [line for _, line in body], name)

    def _side_effect_lines(self) -> tuple[list[str], list[str]]:
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
            return f"__tc_g[{write.name!r}] = {{}}", self.values.expr(value)
        if write.kind == "cell":
            cell = write.target
            return f"{cell.preexisting.expr()}.cell_contents = {{}}", self.values.expr(
                cell.contents
            )
        if write.kind == "attr":
            obj, value = write.target, self.values.expr(write.target.overlay[write.name])
            if replays_around_setattr(obj):  # its __setattr__ ran in the trace
                return f"__tc_object_setattr({obj.source.expr()}, {write.name!r}, {{}})", value
            return f"{obj.source.expr()}.{write.name} = {{}}", value
        container = write.target
        if isinstance(container, PreexistingList) and container.unread:
            appended = "[" + ", ".join(self.values.expr(i) for i in container.appended) + "]"
            return f"{container.source.expr()}.extend({{}})", appended
        if isinstance(container, ListValue):
            items = "[" + ", ".join(self.values.expr(i) for i in container.items) + "]"
            return f"{container.source.expr()}[:] = {{}}", items
        pairs = ", ".join(
            f"{self.values.bind(k)}: {self.values.expr(i)}" for k, i in container.items.items()
        )
        return f"__tc_dict_replace({container.source.expr()}, {{}})", "{" + pairs + "}"

    def _graph_call(self, graph: Graph) -> list[str]:
        """The graph's call; if it raises, the frame runs again eagerly (`graph_failure`)."""
        sources = dict(zip(self.state.inputs.nodes, self.state.inputs.sources))
        inputs = ", ".join(sources[node].expr() for node in graph.inputs)
        always, fp_only = graph_failure.inputs_to_save(graph)
        forward = forwarding_text(self.code)
        if self.closure_param:
            forward = f"__tc_cl, {forward}" if forward else "__tc_cl"
        self.values.ns.update(graph_failure.RUNTIME_NAMES)
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


def _dict_replace(target: dict, new: dict) -> None:
    target.clear()
    target.update(new)


def live_example_inputs(state: TraceState) -> list:
    by_node = dict(zip((id(n) for n in state.inputs.nodes), state.inputs.examples))
    return [by_node[id(n)] for n in state.graph.inputs]
