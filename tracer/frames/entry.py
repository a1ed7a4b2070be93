"""Frames and their caches: ``tc.compile`` wrappers, resume functions, and call routing.

A `CompiledFrame` owns one code object's cache: a list of ``(check, run)`` pairs that the
hot path walks, and everything a miss needs (recompile reasons, automatic dynamic shapes, the
cache limit, tracing). ``tc.compile`` wraps a user function in one; a graph break's glue calls
a resume function (`resume_function`), whose frame gets the cells as a first argument; `Router` sends
user functions called eagerly from glue or skipped frames through frames of their own.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import traceback
import types
import warnings
import weakref
from types import MappingProxyType

from .. import hatches, report, user_text
from ..bytecode import code_cache
from ..bytecode.body_function import BodySpec, body_code, runs_per_iteration
from ..bytecode.code_cache import CodeCache
from ..bytecode.resume import ResumeSpec, resume_code
from ..bytecode.routing import routed_copy
from ..bytecode.signature import bind
from ..config import config
from ..errors import BREAK_KINDS, BreakRecord, GraphBreak, TCompileError, Unsupported
from ..ir.node import FrameLoc
from ..state.guards import first_failure, mismatched_dims, same_constant
from ..state.wrapping import DynamicPolicy
from ..user_code import GENERATOR_FLAGS, is_user_function
from ..values.source import frame_names
from .compile_frame import Entry, FrameOptions, compile_frame

_frame_ids = iter(range(1 << 62))


class CompiledFrame:
    """The cache and settings of one frame (a user function, or a resume function)."""

    def __init__(self, fn: types.FunctionType, *, fullgraph: bool, backend, dynamic, display_name: str = "",
                 closure_param: bool = False):  # fmt: skip
        self.fn = fn
        self.fullgraph = fullgraph
        self.backend = backend
        self.dynamic = dynamic
        self.display_name = display_name or fn.__qualname__
        self.closure_param = closure_param
        self.entries: list[Entry] = []
        self.fast: list[tuple] = []  # (check, run) pairs read by the hot path, in entry order
        # a split loop's body that specialises on every iteration: why every entry running
        # the loop runs it as plain Python (`loops.loop_driver`)
        self.specialises = ""
        self.marked_dynamic: dict[str, set[int]] = {}
        self.marked_numbers: set[str] = set()
        self.exhausted = False
        self.frame_id = next(_frame_ids)
        self.router = Router(backend, dynamic)
        _ALL.add(self)

    def reset(self) -> None:
        self.entries.clear()
        self.fast.clear()
        self.specialises = ""
        self.marked_dynamic.clear()
        self.marked_numbers.clear()
        self.exhausted = False

    def function_for(self, cells) -> types.FunctionType:
        """The Python function this frame runs for a call (resume frames: with these cells)."""
        return self.fn

    def make_resume(self, spec: ResumeSpec):
        return self.router.resume_function(spec, self.fn.__globals__)

    # -- the miss path --------------------------------------------------------------------------
    def miss(self, args: tuple, kwargs: dict, cells=None):
        report.recorder.counters["cache_misses"] += 1
        fn = self.function_for(cells)
        eager = self._eager(fn)
        if not config.trace_numpy or self.exhausted or FROZEN.active:
            return self._run(eager, cells, args, kwargs)
        try:
            scope = self._scope(fn, args, kwargs, cells)
        except TypeError:
            return fn(*args, **kwargs)  # a wrong call: let Python raise its own TypeError
        reasons = ()
        try:
            reasons = self._recompile_reasons(scope) if self.entries else ()
            if len(self.entries) >= config.cache_size_limit:
                entry = None
            elif fn.__code__.co_flags & GENERATOR_FLAGS:
                entry = self._generator(fn, eager, reasons)
            else:
                entry = self._compile(fn, args, kwargs, eager, reasons)
        except TCompileError:
            raise
        except Exception as error:  # a gap in tcompile: the call runs eagerly, never fails
            entry = self._internal_error(fn, eager, error, reasons)
        if entry is None:
            return self._give_up(fn, eager, cells, args, kwargs, reasons)
        return self._run(entry.run, cells, args, kwargs)

    def _run(self, run, cells, args: tuple, kwargs: dict):
        return run(cells, *args, **kwargs) if self.closure_param else run(*args, **kwargs)

    def _generator(self, fn, eager, reasons: tuple) -> Entry:
        """Generators and coroutines run eagerly (as in Dynamo), with the reason recorded."""
        record = _frame_record(fn, "generator", f"{fn.__qualname__} runs eagerly")
        if self.fullgraph or hatches.current_error_on_graph_break():
            self._publish_error(record, reasons)
            raise Unsupported(record)
        return self._eager_only(eager, record, reasons)

    def _internal_error(self, fn, eager, error: Exception, reasons: tuple) -> Entry:
        where = traceback.extract_tb(error.__traceback__)[-1]
        record = _frame_record(fn, "internal_error", f"{type(error).__name__}: {error} "
                               f"(in {where.name}, {where.filename}:{where.lineno})")  # fmt: skip
        return self._eager_only(eager, record, reasons)

    def _eager_only(self, eager, record: BreakRecord, reasons: tuple) -> Entry:
        """An entry for every call from now on: the frame runs eagerly, for ``record``'s reason."""
        entry = Entry(_always, eager, [], break_record=record, eager_reason=record.reason)
        self._add(entry, record, reasons)
        return entry

    def _eager(self, fn):
        """How the frame runs when skipped: its code, with callees routed to their caches."""
        if self.closure_param:
            code, globals_, name = fn.__code__, fn.__globals__, fn.__name__
            return lambda cells, *a, **k: self.router.run_eagerly(
                types.FunctionType(code, globals_, name, None, cells), a, k
            )
        return lambda *a, **k: self.router.run_eagerly(fn, a, k)

    def _scope(self, fn, args, kwargs, cells) -> dict:
        scope = bind(fn, args, kwargs)
        scope.update(frame_names(fn, cells if self.closure_param else None))
        return scope

    def _recompile_reasons(self, scope: dict) -> tuple[str, ...]:
        """Why each entry refused this call (its first failing guard); marks dynamic dims and
        floats for the next compile (automatic dynamic shapes)."""
        reasons = []
        for entry in self.entries:
            reason = (
                first_failure(entry.guards, scope)
                or "(the guards hold now; the entry was added meanwhile)"
            )
            reasons.append(f"- {entry.report.compile_id}: {reason}")
            if config.automatic_dynamic_shapes and self.dynamic is not False:
                self._mark_dynamic(entry, scope)
        return tuple(reasons)

    def _mark_dynamic(self, entry: Entry, scope: dict) -> None:
        """A dim seen with a second size becomes symbolic; so does a Python int, float or str
        seen with a second value (it becomes a graph input instead of a constant)."""
        for guard in entry.guards:
            is_number = guard.kind == "const" and type(guard.expected) in (int, float, str)
            if guard.kind != "shape" and not is_number:
                continue
            try:
                actual = eval(guard.source.expr(), dict(scope))  # noqa: S307 - our own expression
            except Exception:
                continue
            if is_number:
                if type(actual) is type(guard.expected) and not same_constant(
                    actual, guard.expected
                ):
                    self.marked_numbers.add(guard.source.name())
                continue
            dims = mismatched_dims(guard, actual)
            if dims:
                self.marked_dynamic.setdefault(guard.source.name(), set()).update(dims)

    def _give_up(self, fn, eager, cells, args, kwargs, reasons: tuple):
        report.recorder.counters["cache_limit_hits"] += 1
        if runs_per_iteration(fn.__code__):
            # A split loop's body that specialises on what changes every iteration: it runs
            # eagerly, as the whole frame would have without splitting; its report says why.
            record = _frame_record(fn, "cache_limit", f"{self.display_name} runs eagerly from now "
                                   f"on; last recompile reason:\n" + "\n".join(reasons))  # fmt: skip
            return self._run(self._eager_only(eager, record, reasons).run, cells, args, kwargs)
        self.exhausted = True
        message = (
            f"tcompile: {self.display_name} hit config.cache_size_limit ({config.cache_size_limit}); "
            f"it runs eagerly from now on. Last recompile reason:\n" + "\n".join(reasons)
        )
        if self.fullgraph:
            raise TCompileError(message)
        warnings.warn(message, stacklevel=4)
        return fn(*args, **kwargs)

    def _compile(self, fn, args, kwargs, eager, reasons: tuple) -> Entry:
        policy = DynamicPolicy(
            all_dims=self.dynamic is True,
            marked={} if self.dynamic is False else dict(self.marked_dynamic),
            numbers=frozenset() if self.dynamic is False else frozenset(self.marked_numbers),
        )
        options = FrameOptions(self.backend, policy, self.closure_param, self.make_resume,
                               self.router.call, eager)  # fmt: skip
        phases = report.Phases()
        try:
            entry, record = compile_frame(
                fn, args, kwargs, options, phases, allow_breaks=not self.fullgraph
            )
        except GraphBreak as brk:
            self._publish_error(brk.record, reasons, phases)
            raise Unsupported(brk.record) from None
        self._add(entry, record, reasons)
        return entry

    def _report(self, outcome: str, reasons: tuple, **fields) -> report.CompileReport:
        code = self.fn.__code__
        return report.CompileReport(f"[{self.frame_id}/{len(self.entries)}]", self.display_name,
                                    code.co_filename, code.co_firstlineno, outcome,
                                    recompile_reasons=reasons, **fields)  # fmt: skip

    def _publish_error(self, record: BreakRecord, reasons: tuple, phases=()) -> None:
        report.recorder.publish(self._report(report.ERROR, reasons, breaks=(record,),
                                             phases=MappingProxyType(dict(phases))))  # fmt: skip

    def _add(self, entry: Entry, record: BreakRecord | None, reasons: tuple) -> None:
        """Put ``entry`` in the cache and publish its report."""
        rec = report.recorder
        breaks = ()
        if record is not None and len(record.stack) > 1:
            # A break inside a function this frame inlined is counted once, by that function's
            # own frame, which breaks there again when the call runs (bubble-up); that report
            # keeps the chain of calls seen here.
            rec.bubbled[(record.location.filename, record.location.lineno)] = record.stack
        elif record is not None:
            chain = rec.bubbled.pop((record.location.filename, record.location.lineno), None)
            breaks = (dataclasses.replace(record, stack=chain) if chain is not None else record,)
            if record.kind.id == "internal_error" and not config.suppress_errors:
                warnings.warn(f"tcompile: {self.display_name} runs eagerly because of an internal error "
                              f"(set tc.config.suppress_errors = True to silence this):\n{record.render()}",
                              stacklevel=5)  # fmt: skip
        entry.report = self._report(
            report.EAGER if entry.is_eager else report.GRAPH, reasons,
            eager_reason=entry.eager_reason, graphs=() if entry.is_eager else (entry.graph,),
            guards=tuple(entry.guards), breaks=breaks,
            sources=report.Sources(entry.sources, entry.compiled),
            phases=MappingProxyType(dict(entry.phases)), compiled=entry.compiled,
            loops=entry.loops, conds=entry.conds,
        )  # fmt: skip
        self.entries.append(entry)
        self.fast.append((entry.check, entry.run))
        rec.publish(entry.report)


def resume_function(spec: ResumeSpec | BodySpec, f_globals: dict, backend, dynamic):
    """The continuation of a frame after a break (`ResumeSpec`), or the body of a loop a break
    keeps in Python (`BodySpec`), called by glue as ``f(cells, *values)``."""
    if isinstance(spec, BodySpec):
        code, line = body_code(spec)
        what, glue_name = f"loop body at line {line}", f"loop_body_at_{line}"
    else:
        info = resume_code(spec)
        code, line = info.code, info.line
        what, glue_name = user_text.resume_title(spec.code, spec.offset, line), f"resume_at_{line}"
    template = types.FunctionType(code, f_globals, code.co_name, None,
                                  tuple(types.CellType() for _ in code.co_freevars) or None)  # fmt: skip
    frame = ResumeFrame(template, fullgraph=False, backend=backend, dynamic=dynamic,
                        display_name=f"{spec.code.co_qualname} ({what})", closure_param=True)  # fmt: skip
    resume = functools.partial(call_with_cells, frame)
    resume.glue_name = glue_name  # its name in printed glue
    resume.frame = frame
    return resume


def call_with_cells(frame: CompiledFrame, cells, *args, **kwargs):
    """Call a frame whose code takes its cells as an argument (resume functions, closures).
    Its entries are tried in the order they were made, as for any frame: a call takes the
    route the first call with its values took (trying the entry that served the last call
    first was faster, but a state an older, specialised entry had served then went another
    way, through frames that had not seen it: compiles on later calls)."""
    for check, run in frame.fast:
        if check(cells, *args, **kwargs):
            next(report.recorder.hits)
            return run(cells, *args, **kwargs)
    return frame.miss(args, kwargs, cells)


class ResumeFrame(CompiledFrame):
    def function_for(self, cells) -> types.FunctionType:
        fn = self.fn
        return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, None, cells or None)


class Router:
    """Compiles user functions that compiled code calls eagerly (after a break, in a skipped
    frame), so "its callees are still compiled when they are called" holds."""

    def __init__(self, backend, dynamic):
        self.backend, self.dynamic = backend, dynamic
        self._wrappers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def wrapper_for(self, fn):
        kind = type(fn)
        if kind is types.FunctionType:
            wrapper = self._wrappers.get(fn)
            if wrapper is not None:  # the common case, first: a user function seen before
                return wrapper
        elif kind is types.BuiltinFunctionType or issubclass(kind, type):
            return fn  # print, len, float, classes, NumPy's C functions: nothing to compile
        # tcompile's markers are on functions (another object's attributes may be the user's
        # code: a __getattr__, not run to look)
        marked = fn if kind is types.FunctionType else None
        if getattr(marked, "__tc_compiled__", None) is not None or hatches.is_disallowed(fn):
            return fn  # compiled already, or never to be put in a graph
        setting = getattr(marked, "__tc_error_on_graph_break__", None)
        if setting is not None:  # keep the setting, compile what it wraps
            flag, inner = setting
            routed = self.wrapper_for(inner)
            return fn if routed is inner else hatches.error_on_graph_break(flag)(routed)
        if type(fn) is types.MethodType:
            inner = self.wrapper_for(fn.__func__)
            return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
        if (
            type(fn) is not types.FunctionType
            or not is_user_function(fn)
            or fn.__code__.co_flags & GENERATOR_FLAGS
        ):
            return fn
        if "<locals>" in fn.__qualname__ and not fn.__defaults__ and not fn.__kwdefaults__:
            # Nested functions and lambdas are made anew each time their enclosing function
            # runs: share one frame (and its cache) per code object, passing each one's cells.
            frames = _CLOSURE_FRAMES.get(fn.__code__, dict)
            key = (id(fn.__globals__), id(self.backend), self.dynamic)
            frame = frames.get(key)
            if frame is None:
                frame = frames[key] = ResumeFrame(fn, fullgraph=False, backend=self.backend,
                                                  dynamic=self.dynamic, closure_param=True)  # fmt: skip
            wrapper = functools.partial(call_with_cells, frame, fn.__closure__ or ())
        else:
            wrapper = compile_function(
                fn, fullgraph=False, backend=self.backend, dynamic=self.dynamic
            )
        self._wrappers[fn] = wrapper
        return wrapper

    def call(self, fn, *args, **kwargs):
        if FROZEN.active or not config.trace_numpy:
            return fn(*args, **kwargs)
        return self.wrapper_for(fn)(*args, **kwargs)

    def run_eagerly(self, fn, args, kwargs):
        """A skipped frame: its own code runs as Python; the functions it calls are routed."""
        if fn.__code__.co_flags & GENERATOR_FLAGS:
            return fn(*args, **kwargs)
        return routed_copy(fn, self)(*args, **kwargs)

    def resume_function(self, spec: ResumeSpec | BodySpec, f_globals: dict):
        """One resume function per (spec, globals) and compile options: shared by every
        frame that continues there, each with its own cache of compiled entries."""
        made = _RESUMES.get(spec.code, dict)
        key = (spec, id(f_globals), id(self.backend), self.dynamic)
        resume = made.get(key)
        if resume is None:
            resume = made[key] = resume_function(spec, f_globals, self.backend, self.dynamic)
        return resume


_DEFAULT_BACKEND = None  # the backend of code compiled outside tc.compile


def use_default_backend(backend) -> None:
    """The backend for functions compiled outside a ``tc.compile`` call (what a
    ``tc.disable(fn, recursive=False)`` function calls): the facade's "auto"."""
    global _DEFAULT_BACKEND
    _DEFAULT_BACKEND = backend


def routed_eager_call(fn, args, kwargs):
    """Run ``fn`` as plain Python while the functions it calls are compiled
    (``tc.disable(fn, recursive=False)``)."""
    return Router(_DEFAULT_BACKEND, None).run_eagerly(fn, args, kwargs)


hatches.set_eager_router(routed_eager_call)


def run(fn):
    """``tc.run(fn)``: call ``fn`` using only entries compiled before; never compile."""

    @functools.wraps(fn)
    def frozen(*args, **kwargs):
        previous, FROZEN.active = FROZEN.active, True
        try:
            return fn(*args, **kwargs)
        finally:
            FROZEN.active = previous

    return frozen


class _Frozen(threading.local):
    """``tc.run``: while active, frames use what is cached and never compile. Per thread, like
    the settings in `hatches`: a frozen call in one thread leaves tracing in the others alone."""

    active = False  # read when a thread has not set it


FROZEN = _Frozen()


def _always(*args, **kwargs) -> bool:
    return True


def _frame_record(fn, kind: str, explanation: str) -> BreakRecord:
    code = fn.__code__
    return BreakRecord(
        BREAK_KINDS[kind],
        explanation,
        (FrameLoc(code.co_filename, code.co_firstlineno, code.co_name),),
    )


def compile_function(fn, *, fullgraph: bool, backend, dynamic):
    """Build the wrapper: ``functools.wraps(fn)``, with the frame on ``__tc_compiled__``."""
    if getattr(fn, "__tc_disabled__", None) is not None:
        return fn  # tc.compile(tc.disable(f)): never compiled
    inner = getattr(fn, "__tc_compiled__", None)
    target = inner.fn if inner is not None else fn
    frame = CompiledFrame(target, fullgraph=fullgraph, backend=backend, dynamic=dynamic)
    fast, miss, rec = frame.fast, frame.miss, report.recorder  # the one recorder, reset in place

    @functools.wraps(target)
    def wrapper(*args, **kwargs):
        for check, run in fast:
            if check(*args, **kwargs):
                next(rec.hits)
                return run(*args, **kwargs)
        return miss(args, kwargs)

    wrapper.__tc_compiled__ = frame
    return wrapper


_ALL: weakref.WeakSet[CompiledFrame] = weakref.WeakSet()
# original code -> {(spec, globals, options): resume function}; code -> {(...): shared frame}
_RESUMES = CodeCache(limit=512)
_CLOSURE_FRAMES = CodeCache(limit=512)


def reset_all() -> None:
    """Forget every compiled entry and everything derived from code objects."""
    for frame in list(_ALL):
        frame.reset()
    code_cache.clear_all()
