"""Trace one call of a function and build its cache entry (guards + compiled code).

`compile_frame` either returns an `Entry` that runs the graph, or an `Entry` that runs the
function eagerly (after a graph break, or when the traced code itself raises), guarded by what
the trace had assumed up to that point.
"""

from __future__ import annotations

import inspect
import logging
import time
import types
from dataclasses import dataclass, field

from . import report
from .codegen import live_example_inputs, parameter_text, write_glue
from .errors import BreakRecord, GraphBreak, RestartTrace, UserErrorInTrace
from .graph import Graph
from .guards import Guard, build_check_function, order_guards
from .source import CLOSURE, GLOBALS, ClosureCellSource, GlobalSource
from .trace_state import DynamicPolicy, TraceState
from .translator import Translator


@dataclass
class Entry:
    """One compiled entry of a function's cache."""

    check: object  # generated guard function, same parameters as the user function
    run: object  # generated glue (or the original function, for eager entries)
    guards: list[Guard]
    graph: Graph | None = None
    graph_code: str = ""
    glue_code: str = ""
    check_code: str = ""
    break_record: BreakRecord | None = None
    eager_reason: str = ""
    compile_id: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def is_eager(self) -> bool:
        return self.graph is None


def trace(fn: types.FunctionType, args: tuple, kwargs: dict, dynamic: DynamicPolicy, name: str):
    """Run the translator over one call; returns (state, result value) or raises a break."""
    signature = inspect.signature(fn)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    state = TraceState(name, dynamic, fn.__globals__)
    closure = fn.__closure__ or ()
    tx = Translator(state, fn.__code__, fn.__globals__, GlobalSource, {}, dict(bound.arguments),
                    lambda index, var: ClosureCellSource(index, var), closure=closure)  # fmt: skip
    try:
        result = tx.run()
        if state.region_break is not None:
            raise GraphBreak(state.region_break)
    except (GraphBreak, UserErrorInTrace) as error:
        error.state = state  # an eager entry keeps the guards assumed up to here
        raise
    return state, result


def compile_frame(fn, args, kwargs, *, backend, dynamic: DynamicPolicy, compile_id: str):
    """Trace and compile; returns ``(entry, break_record_or_None)``; restarts when asked."""
    rec = report.current()
    start = time.perf_counter()
    name = "".join(c if c.isalnum() else "_" for c in fn.__name__).strip("_") + "_graph"
    for _attempt in range(3):
        state = None
        try:
            with rec.phase("trace"):
                state, result = trace(fn, args, kwargs, dynamic, name)
            with rec.phase("codegen"):
                glue_source, glue_ns, graph = write_glue(state, fn.__code__, result)
            break
        except RestartTrace:
            dynamic = DynamicPolicy(dynamic.all_dims, dynamic.marked, force_static=True)
            continue
        except GraphBreak as brk:
            entry = _eager_entry(
                fn,
                getattr(brk, "state", state),
                brk.record,
                f"graph break: {brk.record.reason}",
                compile_id,
            )
            entry.extra["compile_time"] = time.perf_counter() - start
            return entry, brk.record
        except UserErrorInTrace as err:
            reason = f"the traced code raises {type(err.error).__name__}: {err.error}"
            entry = _eager_entry(fn, err.state, None, reason, compile_id)
            entry.extra["compile_time"] = time.perf_counter() - start
            return entry, None
    else:  # pragma: no cover - RestartTrace only ever asks for static shapes once
        raise RuntimeError("tcompile: trace restarted too often")
    with rec.phase("backend"):
        examples = live_example_inputs(state)
        compiled_graph = (
            backend(graph, examples) if graph.op_count() or graph.output.args[0] else None
        )
    with rec.phase("guards"):
        check, check_code = make_check(fn, state.guards)
    glue_ns.update(
        {"__tc_graph": compiled_graph, GLOBALS: fn.__globals__, CLOSURE: fn.__closure__ or ()}
    )
    run = _exec_function(glue_source, glue_ns, "__tc_run", fn, f"<tcompile glue {fn.__qualname__}>")
    entry = Entry(check, run, order_guards(state.guards), graph, getattr(compiled_graph, "source", "") or graph.python_code(),
                  glue_source, check_code, compile_id=compile_id)  # fmt: skip
    entry.extra["compile_time"] = time.perf_counter() - start
    _log_entry(fn, entry)
    return entry, None


def make_check(fn, guards: list[Guard]):
    params = parameter_text(fn.__code__)
    source, ns = build_check_function(guards, params)
    ns.update({GLOBALS: fn.__globals__, CLOSURE: fn.__closure__ or ()})
    return _exec_function(
        source, ns, "__tc_check", fn, f"<tcompile guards {fn.__qualname__}>"
    ), source


def _exec_function(source: str, ns: dict, name: str, fn, filename: str):
    exec(compile(source, filename, "exec"), ns)  # noqa: S102 - our own generated code
    made = ns[name]
    made.__defaults__ = fn.__defaults__
    made.__kwdefaults__ = fn.__kwdefaults__
    return made


def _eager_entry(fn, state, record, reason: str, compile_id: str) -> Entry:
    guards = order_guards(state.guards) if state is not None else []
    check, check_code = make_check(fn, guards)
    entry = Entry(check, fn, guards, break_record=record, eager_reason=reason, check_code=check_code,
                  compile_id=compile_id)  # fmt: skip
    return entry


def _log_entry(fn, entry: Entry) -> None:
    logs = report.LOGS
    if logs["graph"].isEnabledFor(logging.DEBUG):
        logs["graph"].debug("graph of %s [%s]:\n%s", fn.__qualname__, entry.compile_id, entry.graph)
    if logs["guards"].isEnabledFor(logging.DEBUG):
        logs["guards"].debug("guards of %s [%s]:\n%s", fn.__qualname__, entry.compile_id,
                             "\n".join(f"  {g.describe()}" for g in entry.guards))  # fmt: skip
    if logs["output_code"].isEnabledFor(logging.DEBUG):
        logs["output_code"].debug("code of %s [%s]:\n%s\n%s\n%s", fn.__qualname__, entry.compile_id,
                                  entry.check_code, entry.graph_code, entry.glue_code)  # fmt: skip
