"""Trace one call of a frame and build its cache entry (guards + compiled code).

The outcome is one of:
  * a compiled entry: guards, the graph, and glue that rebuilds the frame's result;
  * after a resumable graph break: the same, where the glue then runs the breaking
    instruction eagerly and continues in resume function(s) (a second trace stops right
    before the break, so nothing the break's handler did leaks into the graph); after a break
    inside a loop, the second trace stops where the loop starts, and the glue runs the loop in
    Python with its body compiled as a function of its own (`loops.split_loop`);
  * an eager entry (the frame is skipped: it runs as plain Python), guarded by what the
    trace assumed up to where it stopped; or
  * a `GraphBreak` the caller turns into `tc.Unsupported` (fullgraph / error_on_graph_break).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field, replace

from .. import hatches, report
from ..bytecode.body_function import runs_per_iteration
from ..bytecode.resume import RESUME_CODES
from ..bytecode.signature import bind, parameter_text
from ..errors import BreakRecord, GraphBreak, RestartTrace, StopTrace, UserErrorInTrace
from ..glue.continuation import Continuation, plan
from ..glue.function import GlueFunction, live_example_inputs
from ..interpreter.translator import Translator
from ..ir import device_arrays
from ..ir.compiled_graph import CompiledGraph
from ..ir.cond_nodes import Cond
from ..ir.first_run import first_call_from_trace, replay_first_calls
from ..ir.graph import Graph, loop_function_name
from ..ir.loop_nodes import LOOP_OPS
from ..ir.node import FrameLoc
from ..state.guards import Guard, build_check_function, order_guards
from ..state.trace_state import TraceState
from ..state.wrapping import DynamicPolicy
from ..values.arrays import NumpyValue, SymFloat, SymInt
from ..values.source import (
    CLOSURE,
    AttrSource,
    ClosureCellSource,
    FunctionSource,
    GlobalSource,
    frame_names,
)


@dataclass
class Entry:
    """One compiled entry of a frame's cache: what the hot path runs, and what it came from."""

    check: object  # generated guard function, same parameters as the frame
    run: object  # generated glue (or the frame's code run eagerly)
    guards: list[Guard]
    graph: Graph | None = None
    break_record: BreakRecord | None = None
    eager_reason: str = ""
    # "graph", "glue", "guards", "resume", "loops"; the report adds the compiled graph's "backend"
    sources: dict = field(default_factory=dict)
    phases: report.Phases = field(default_factory=report.Phases)
    report: report.CompileReport | None = None  # set once the entry is published
    compiled: CompiledGraph | None = None  # what the backend made of the graph
    loops: tuple = ()  # a `loops.LoopRecord` per loop the trace met
    conds: tuple = ()  # a `loops.conds.CondRecord` per branch on data made a cond node

    @property
    def is_eager(self) -> bool:
        return self.graph is None


@dataclass
class FrameOptions:
    backend: object
    dynamic: DynamicPolicy
    closure_param: bool  # resume frames get their cells as a first argument
    make_resume: object  # ResumeSpec -> callable(cells, *args)
    call: object  # routes eager calls of user functions through the compile cache
    eager_run: object  # how the frame runs when skipped


def trace(fn: types.FunctionType, args: tuple, kwargs: dict, dynamic: DynamicPolicy, name: str,
          stop_at: int | None = None, root: bool = True, array_kinds: frozenset = frozenset(),
          loop_nodes: bool = False, phases: report.Phases | None = None):  # fmt: skip
    """Run the translator over one call: (state, result) or (state, StopTrace) or a break.
    ``array_kinds``: the kinds of arrays besides NumPy's the backend runs on (torch, CuPy,
    Dask: `device_arrays.array_kind`), which are traced as arrays;
    ``loop_nodes``: it runs loop nodes (`loops`), so loops are captured instead of unrolled;
    ``phases``: where the time of loops run on the examples goes."""
    arguments = bind(fn, args, kwargs)
    state = TraceState(name, dynamic, fn.__globals__, hatches.current_error_on_graph_break(),
                       array_kinds=array_kinds, loop_nodes=loop_nodes,
                       per_iteration=runs_per_iteration(fn.__code__), phases=phases)  # fmt: skip
    if "dask" in array_kinds:
        state.inputs.dask_sizes.prepare(_dask_arrays((args, kwargs)))
    if root:  # a user's function: its code and defaults can be replaced between calls
        function = FunctionSource(fn.__qualname__)
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            state.guards.add(AttrSource(function, attr), "id", getattr(fn, attr))
    tx = Translator(state, fn.__code__, fn.__globals__, GlobalSource, {}, arguments,
                    lambda index, var: ClosureCellSource(index, var), closure=fn.__closure__ or (),
                    stop_at=stop_at)  # fmt: skip
    try:
        result = tx.run()
        if state.breaks.region is not None:
            raise GraphBreak(state.breaks.region)
    except StopTrace as stop:
        return state, stop
    except (GraphBreak, UserErrorInTrace) as error:
        error.state = state  # an eager entry keeps the guards assumed up to here
        raise
    return state, result


def compile_frame(fn, args, kwargs, options: FrameOptions, phases: report.Phases, *,
                  allow_breaks: bool):  # fmt: skip
    """Trace and compile: ``(entry, break_record_or_None)``; ``phases`` gets the time of each
    compile phase (also when a break propagates).

    With ``allow_breaks`` False a graph break propagates (the caller raises Unsupported)."""
    name = "".join(c if c.isalnum() else "_" for c in fn.__name__).strip("_") + "_graph"
    dynamic, stop_at, record, split = options.dynamic, None, None, None
    for _attempt in range(4):
        try:
            with phases.time("trace"):
                state, outcome = trace(fn, args, kwargs, dynamic, name, stop_at,
                                       root=not options.closure_param,
                                       array_kinds=_array_kinds(options.backend),
                                       loop_nodes=_backend_has(options.backend, "loop_nodes"),
                                       phases=phases)  # fmt: skip
            break
        except RestartTrace:
            dynamic = DynamicPolicy(dynamic.all_dims, dynamic.marked, force_static=True)
        except GraphBreak as brk:
            if not allow_breaks or brk.error_on_graph_break:
                raise
            record = brk.record
            decision = plan(brk, fn.__code__, Translator.instructions(fn.__code__), RESUME_CODES)
            if decision.skip_reason is not None or stop_at is not None:
                why = decision.skip_reason or "another break came up while retracing to the first"
                reason = f"{record.reason}; the frame runs eagerly: {why}"
                return _eager_entry(fn, brk.state, record, reason, options, phases), record
            stop_at = brk.root_index if decision.split is None else decision.split.stop_index
            split = decision.split
        except UserErrorInTrace as err:
            return _eager_entry(fn, err.state, None, err.reason(), options, phases), None
    else:  # pragma: no cover - restarts are bounded: static shapes once, the break once
        raise RuntimeError("tcompile: trace restarted too often")

    glue = GlueFunction(state, fn.__code__, options.closure_param, call=options.call,
                        rerun=options.eager_run)  # fmt: skip
    with phases.time("codegen"):
        try:
            if isinstance(outcome, StopTrace):
                Continuation(glue, outcome.tx, RESUME_CODES, options.make_resume, split).write()
                made = glue.finish(None)
            else:
                made = glue.finish(outcome)
        except GraphBreak as brk:  # a value the glue cannot rebuild: run the frame eagerly
            code = fn.__code__
            here = brk.record.stack or (
                FrameLoc(code.co_filename, code.co_firstlineno, code.co_name),
            )
            record = record or replace(brk.record, stack=here)
            reason = f"{brk.record.reason}; the frame runs eagerly"
            return _eager_entry(fn, state, record, reason, options, phases), record
    if split is not None:
        record = replace(record, explanation=split.explain(record.explanation))
    with phases.time("backend"):
        compiled_graph = (
            CompiledGraph.of(options.backend(made.graph, live_example_inputs(state)), options.backend)
            if made.graph.op_count() or made.graph.output.args[0]
            else None
        )  # fmt: skip
    if compiled_graph is not None and compiled_graph.loop_functions is not None:
        _replay_first_runs(state, made.graph, compiled_graph.loop_functions)
    with phases.time("guards"):
        state.inputs.guard_mutable_aliasing()
        check, check_code = make_check(fn, state.guards.items, options.closure_param)
    ns = made.namespace
    ns.update(frame_names(fn))
    ns["__tc_graph"] = compiled_graph.fn if compiled_graph is not None else None
    results = _trace_results(state, glue, compiled_graph, outcome)
    if results is not None:
        inputs = live_example_inputs(state)
        first_call_from_trace(ns, "__tc_graph", compiled_graph.fn, inputs, results)
    line = getattr(outcome, "tx", None) and outcome.tx.instrs[outcome.tx.ip].line
    exec(made.compile(fn.__code__.co_filename, line or fn.__code__.co_firstlineno), ns)  # noqa: S102
    run = _with_defaults(ns[made.name], fn)
    graph = made.graph
    sources = {"graph": graph.python_code(), "glue": made.text, "guards": check_code}
    if glue.resumes:
        sources["resume"] = "\n".join(glue.resumes)
    bodies = [f"# {loop.describe()}\n{loop.body}" for loop in state.loops if loop.captured]
    bodies += [f"# {cond.describe()}\n{cond.sides}" for cond in state.conds]
    if bodies:
        sources["loops"] = "\n".join(bodies)
    entry = Entry(check, run, order_guards(state.guards.items), graph, record, sources=sources,
                  phases=phases, compiled=compiled_graph, loops=tuple(state.loops),
                  conds=tuple(state.conds))  # fmt: skip
    state.memory.release()
    return entry, record


def _dask_arrays(obj) -> list:
    """The Dask arrays among a call's arguments (in lists, tuples and dicts too). Asked of
    types alone: isinstance() would read a user object's ``__class__``, which may be code."""
    if type(obj) in (tuple, list):
        return [a for item in obj for a in _dask_arrays(item)]
    if type(obj) is dict:
        return _dask_arrays(list(obj.values()))
    dask = device_arrays.array_kind(obj) == "dask" and device_arrays.numpy_meta(obj) is not None
    return [obj] if dask else []


def _array_kinds(backend) -> frozenset:
    """The kinds of arrays besides NumPy's that a backend runs on, as it declares them."""
    kinds = device_arrays.DEVICE_KINDS if _backend_has(backend, "device_arrays") else frozenset()
    return kinds | {"dask"} if _backend_has(backend, "dask_arrays") else kinds


def _backend_has(backend, feature: str) -> bool:
    """Whether a backend declares a feature (an attribute, or a function deciding it now)."""
    has = getattr(backend, feature, False)
    return bool(has() if callable(has) else has)


def make_check(fn, guards: list[Guard], closure_param: bool = False):
    params = parameter_text(fn.__code__)
    if closure_param:
        params = f"{CLOSURE}, {params}" if params else CLOSURE
    source, ns = build_check_function(guards, params)
    ns.update(frame_names(fn))
    exec(compile(source, f"<tcompile guards {fn.__qualname__}>", "exec"), ns)  # noqa: S102
    return _with_defaults(ns["__tc_check"], fn), source


def _with_defaults(made, fn):
    """``made`` takes ``fn``'s parameters: the same defaults, and the same name, so a wrong call
    raises the TypeError that calling ``fn`` raises."""
    made.__defaults__ = fn.__defaults__
    made.__kwdefaults__ = fn.__kwdefaults__
    made.__name__, made.__qualname__ = fn.__name__, fn.__qualname__
    return made


def _eager_entry(fn, state, record, reason: str, options: FrameOptions, phases) -> Entry:
    guards = order_guards(state.guards.items) if state is not None else []
    with phases.time("guards"):
        check, check_code = make_check(fn, guards, options.closure_param)
    if state is not None:
        state.memory.release()
    return Entry(check, options.eager_run, guards, break_record=record, eager_reason=reason,
                 sources={"guards": check_code}, phases=phases)  # fmt: skip


def _trace_results(state, glue, compiled_graph, outcome) -> tuple | None:
    """The trace's values of the graph's outputs, where they are what its first call gives
    (`first_run.first_call_from_trace`): the backend gives NumPy's results on the caller's
    arrays (`CompiledGraph.trace_answers_first_call`), no example came otherwise (a warning,
    an fp error, a stand-in, a function of its own: `TraceState.examples_differ`), no caller's
    memory was written (the trace wrote private copies), the graph is the whole frame's and has
    no loop or cond node (their examples come from runs of their own)."""
    takes = compiled_graph is not None and compiled_graph.trace_answers_first_call
    if not takes or state.examples_differ:
        return None
    if isinstance(outcome, StopTrace) or any(b.copy is not None for b in state.memory.blocks):
        return None
    if any(node.op in (*LOOP_OPS, Cond.op) for node in state.graph.nodes):
        return None
    results = []
    for value in glue.values.output_values:
        if isinstance(value, NumpyValue) and not getattr(value, "device", False):
            results.append(value.example)
        elif isinstance(value, (SymInt, SymFloat)):
            results.append(value.hint)
        else:
            return None
    return tuple(results)


def _replay_first_runs(state, graph, functions) -> None:
    """The graph's first call takes each loop's run on the examples, kept by the trace, instead
    of running the loop again (`first_run`)."""
    kept = {loop_function_name(node, graph.name): run for node, run in state.first_runs.items()
            if node.graph is graph and node in graph.nodes}  # fmt: skip
    replay_first_calls(functions, kept)
