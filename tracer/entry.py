"""``tc.compile``: the wrapper, its per-function cache, recompiles and the cache limit.

The hot path is the wrapper's loop over ``(check, run)`` pairs; everything else (guard
failure reasons, automatic dynamic shapes, tracing) happens only on a miss.
"""

from __future__ import annotations

import functools
import inspect
import logging
import types
import warnings
import weakref

from . import report
from .compile_frame import Entry, compile_frame
from .config import config
from .errors import TCompileError, Unsupported
from .guards import first_failure, mismatched_dims
from .source import CLOSURE, GLOBALS
from .trace_state import DynamicPolicy

_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_frame_ids = iter(range(1, 1 << 62))


class CompiledFunction:
    """The cache and settings behind one ``tc.compile`` wrapper."""

    def __init__(self, fn: types.FunctionType, *, fullgraph: bool, backend, dynamic):
        self.fn = fn
        self.fullgraph = fullgraph
        self.backend = backend
        self.dynamic = dynamic
        self.entries: list[Entry] = []
        self.fast: list[tuple] = []  # (check, run) pairs read by the wrapper, in entry order
        self.marked_dynamic: dict[str, set[int]] = {}
        self.exhausted = False
        self.frame_id = next(_frame_ids)

    def reset(self) -> None:
        self.entries.clear()
        self.fast.clear()
        self.marked_dynamic.clear()
        self.exhausted = False

    # -- the miss path --------------------------------------------------------------------------
    def miss(self, args: tuple, kwargs: dict):
        rec = report.current()
        rec.counters["cache_misses"] += 1
        fn = self.fn
        if not config.trace_numpy or self.exhausted or fn.__code__.co_flags & _GENERATOR_FLAGS:
            if fn.__code__.co_flags & _GENERATOR_FLAGS and self.fullgraph:
                raise Unsupported(_generator_record(fn))
            return fn(*args, **kwargs)
        try:
            scope = self._scope(args, kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # a wrong call: let Python raise its own TypeError
        if self.entries:
            self._note_recompile(scope)
        if len(self.entries) >= config.cache_size_limit:
            return self._give_up(args, kwargs)
        entry = self._compile(args, kwargs)
        return entry.run(*args, **kwargs)

    def _scope(self, args, kwargs) -> dict:
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        scope = dict(bound.arguments)
        scope.update({GLOBALS: self.fn.__globals__, CLOSURE: self.fn.__closure__ or ()})
        return scope

    def _note_recompile(self, scope: dict) -> None:
        reasons = []
        for entry in self.entries:
            reason = (
                first_failure(entry.guards, scope)
                or "(the guards hold now; the entry was added meanwhile)"
            )
            reasons.append(f"- {entry.compile_id}: {reason}")
            if config.automatic_dynamic_shapes and self.dynamic is not False:
                self._mark_dynamic(entry, scope)
        rec = report.current()
        rec.counters["recompiles"] += 1
        code = self.fn.__code__
        where = f"{code.co_filename}:{code.co_firstlineno}"
        rec.add_recompile(report.RecompileEvent(self.fn.__qualname__, where, reasons))
        log = report.LOGS["recompiles"]
        if log.isEnabledFor(logging.DEBUG):
            log.debug("Recompiling function %s in %s\n    triggered by the following guard failure(s):\n    %s",
                      self.fn.__qualname__, where, "\n    ".join(reasons))  # fmt: skip

    def _mark_dynamic(self, entry: Entry, scope: dict) -> None:
        for guard in entry.guards:
            if guard.kind != "shape":
                continue
            try:
                actual = eval(guard.source.expr(), dict(scope))
            except Exception:
                continue
            dims = mismatched_dims(guard, actual)
            if dims:
                self.marked_dynamic.setdefault(guard.source.name(), set()).update(dims)

    def _give_up(self, args, kwargs):
        self.exhausted = True
        report.current().counters["cache_limit_hits"] += 1
        last = report.current().recompiles[-1].reasons if report.current().recompiles else []
        message = (
            f"tcompile: {self.fn.__qualname__} hit config.cache_size_limit ({config.cache_size_limit}); "
            f"it runs eagerly from now on. Last recompile reason:\n" + "\n".join(last)
        )
        if self.fullgraph:
            raise TCompileError(message)
        warnings.warn(message, stacklevel=3)
        return self.fn(*args, **kwargs)

    def _compile(self, args, kwargs) -> Entry:
        rec = report.current()
        compile_id = f"[{self.frame_id}/{len(self.entries)}]"
        policy = DynamicPolicy(all_dims=self.dynamic is True, marked=dict(self.marked_dynamic))
        if self.dynamic is False:
            policy.marked = {}
        entry, record = compile_frame(self.fn, args, kwargs, backend=self.backend, dynamic=policy,
                                      compile_id=compile_id)  # fmt: skip
        event = report.CompileEvent(
            self.fn.__qualname__, compile_time=entry.extra.get("compile_time", 0.0)
        )
        event.guards = list(entry.guards)
        if record is not None:
            rec.counters["graph_breaks"] += 1
            event.breaks.append(record)
            log = report.LOGS["graph_breaks"]
            if log.isEnabledFor(logging.DEBUG):
                log.debug("%s", record.render())
            if self.fullgraph:
                rec.add_compile(event)
                raise Unsupported(record)
            if record.kind.id == "internal_error" and not config.suppress_errors:
                warnings.warn(f"tcompile: {self.fn.__qualname__} runs eagerly because of an internal error "
                              f"(set tc.config.suppress_errors = True to silence this):\n{record.render()}",
                              stacklevel=4)  # fmt: skip
        if entry.is_eager:
            rec.counters["frames_skipped"] += 1
        else:
            rec.counters["frames_compiled"] += 1
            if entry.graph.op_count():
                rec.counters["graphs"] += 1
                event.graphs.append(entry.graph)
        rec.add_compile(event)
        self.entries.append(entry)
        self.fast.append((entry.check, entry.run))
        return entry


def _generator_record(fn):
    from .errors import BREAK_KINDS, BreakRecord, FrameLoc

    code = fn.__code__
    loc = FrameLoc(code.co_filename, code.co_firstlineno, code.co_name)
    return BreakRecord(
        BREAK_KINDS["generator"], f"{fn.__qualname__} is a generator or coroutine function", (loc,)
    )


def compile_function(fn, *, fullgraph: bool, backend, dynamic):
    """Build the wrapper: ``functools.wraps(fn)``, with the cache on ``__tc_compiled__``."""
    inner = getattr(fn, "__tc_compiled__", None)
    target = inner.fn if inner is not None else fn
    cf = CompiledFunction(target, fullgraph=fullgraph, backend=backend, dynamic=dynamic)
    fast, miss, hits = cf.fast, cf.miss, report

    @functools.wraps(target)
    def wrapper(*args, **kwargs):
        for check, run in fast:
            if check(*args, **kwargs):
                next(hits.recorder.hits)
                return run(*args, **kwargs)
        return miss(args, kwargs)

    wrapper.__tc_compiled__ = cf
    _ALL.add(cf)
    return wrapper


_ALL: weakref.WeakSet[CompiledFunction] = weakref.WeakSet()


def reset_all() -> None:
    for cf in _ALL:
        cf.reset()
