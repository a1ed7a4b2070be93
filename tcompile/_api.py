"""The public functions of the facade, validating their arguments before the tracer sees them."""

from __future__ import annotations

import functools
import types

from tcompile.backend import lookup_backend
from tcompile.tracer import report
from tcompile.tracer.frames import entry
from tcompile.tracer.frames import explain as _explain

# Code compiled outside a tc.compile call (tc.disable(recursive=False) callees) uses "auto".
entry.use_default_backend(lookup_backend("auto"))

_LRU_CACHE_WRAPPER = type(functools.lru_cache(lambda: None))
_ACCEPTED = (
    "a Python function (def or lambda), or a bound method, classmethod, staticmethod, "
    "functools.partial, lru_cache wrapper or callable object built on one"
)


def _resolve(fn, api: str):
    """Split ``fn`` into the Python function to compile and ``rebuild(compiled)``, which wraps
    the compiled function the way ``fn`` wraps that function (binds ``self``, re-applies a
    partial's arguments, ...). The one place that says what tc.compile and tc.explain accept.

    E.g. ``functools.partial(obj.method, 2)`` gives ``C.method`` and a ``rebuild`` returning
    ``functools.partial(types.MethodType(compiled, obj), 2)``.
    """
    if isinstance(fn, types.FunctionType):  # compiled wrappers and tc.disable'd ones too
        return fn, lambda compiled: compiled
    inner, wrap = _unwrap_one(fn, api)
    target, rebuild = _resolve(inner, api)
    return target, lambda compiled: wrap(rebuild(compiled))


def _unwrap_one(fn, api: str):
    """The callable that ``fn`` wraps, and how to wrap its compiled version the same way."""
    if isinstance(fn, types.MethodType):  # obj.method, and Cls.a_classmethod (self is Cls)
        return fn.__func__, lambda f: types.MethodType(f, fn.__self__)
    if isinstance(fn, (classmethod, staticmethod)):  # tc.compile above @classmethod in a class
        return fn.__func__, type(fn)
    if isinstance(fn, functools.partial):
        return fn.func, lambda f: functools.partial(f, *fn.args, **fn.keywords)
    if isinstance(fn, _LRU_CACHE_WRAPPER):
        return _through_cache(fn), lambda compiled: compiled
    call = None if isinstance(fn, type) else _class_attribute(type(fn), "__call__")
    if isinstance(call, types.FunctionType):  # an instance of a class with a Python __call__
        return call, lambda f: types.MethodType(f, fn)
    if isinstance(fn, type):
        hint = "; to compile a class, compile its methods or a function that uses it"
    elif callable(fn):
        hint = "; it has no Python bytecode to trace: call it from a compiled function instead"
    else:
        hint = ""
    raise TypeError(
        f"{api}() needs a function to compile, and {fn!r} ({type(fn).__name__}) is not one: "
        f"it needs {_ACCEPTED}{hint}"
    )


def _through_cache(cached):
    """A function calling an ``lru_cache`` wrapper: compiled, it keeps that very cache (its hits,
    misses and ``cache_clear()``); the cached function runs as plain Python on a miss, since the
    cache, not tcompile, decides whether it runs (tc.explain shows that break)."""

    @functools.wraps(cached)
    def call_through_cache(*args, **kwargs):
        return cached(*args, **kwargs)

    return call_through_cache


def _class_attribute(cls: type, name: str):
    """``name`` as defined in ``cls`` or a base class; unlike getattr, never the metaclass's."""
    return next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), None)


def compile(fn=None, *, fullgraph: bool = False, backend="auto", dynamic=None):
    """Compile ``fn`` (decorator, with or without arguments)::

        @tc.compile(fullgraph=True)
        def f(x):
            return np.sin(x) + 1

    ``fullgraph=True``: one graph or `tc.Unsupported` at the first graph break.
    ``backend``: "eager", "auto", or a callable ``(graph, example_inputs) -> callable``.
    ``dynamic``: None (automatic dynamic shapes), True (all dims symbolic), False (never).

    ``fn`` may also be a bound method (``tc.compile(obj.method)`` calls it with ``obj``), a
    ``classmethod`` or ``staticmethod`` (``@tc.compile`` above ``@classmethod``), a
    ``functools.partial``, a callable object (its class's ``__call__`` is compiled, bound to
    it), or a ``functools.lru_cache`` wrapper: calls keep going through that cache, and the
    cached function runs eagerly on a miss. Anything else is a TypeError.
    """
    if not isinstance(fullgraph, bool):
        raise TypeError(f"tc.compile(fullgraph=...) must be True or False, not {fullgraph!r}")
    if dynamic not in (None, True, False):
        raise TypeError(f"tc.compile(dynamic=...) must be None, True or False, not {dynamic!r}")
    backend_fn = lookup_backend(backend)

    def decorate(f):
        target, rebuild = _resolve(f, "tc.compile")
        compiled = entry.compile_function(
            target, fullgraph=fullgraph, backend=backend_fn, dynamic=dynamic
        )
        return rebuild(compiled)

    if fn is None:
        return decorate
    return decorate(fn)


def explain(fn, *, backend="eager", dynamic=None):
    """Compile ``fn`` on one call and report it: ``print(tc.explain(f)(np.ones(3)))``.

    ``fn`` is anything `compile` accepts, ``tc.explain(obj.method)(x)`` passes ``obj`` as
    ``self``; the result is an ``ExplainOutput`` (graphs, breaks, guards, ``.result``).
    """
    # Exactly what tc.compile accepts: explain(np.sin) fails as tc.compile(np.sin) does, rather
    # than report zero graphs for a callable that could never be compiled.
    target, rebuild = _resolve(fn, "tc.explain")
    return _explain.explain(target, rebuild, backend=lookup_backend(backend), dynamic=dynamic)


def reset() -> None:
    """Forget every compiled entry, cache and counter."""
    entry.reset_all()
    report.recorder.reset()


def counters() -> dict[str, int]:
    """Counts since the last reset: frames compiled/skipped, graphs, breaks, recompiles, hits..."""
    return report.recorder.snapshot()


class CompileProfiler:
    """Records every compile, and every recompilation with the guard that failed::

    with tc.CompileProfiler() as prof:
        f(np.ones(3)); f(np.ones(4))
    print(prof.report())
    """

    def __init__(self):
        self.reports: list[report.CompileReport] = []

    def __enter__(self):
        report.recorder.listeners.append(self)
        return self

    def __exit__(self, *exc):
        report.recorder.listeners.remove(self)
        return False

    def on_report(self, compile_report: report.CompileReport) -> None:
        self.reports.append(compile_report)

    @property
    def recompiles(self) -> list[report.CompileReport]:
        return [r for r in self.reports if r.is_recompile]

    def report(self) -> str:
        breaks = sum(len(r.breaks) for r in self.reports)
        recompiles = self.recompiles
        compiles = sum(r.outcome != report.PLAIN for r in self.reports)  # not a loop's verdict
        lines = [f"Compiles: {compiles}  Recompiles: {len(recompiles)}  Graph breaks: {breaks}"]
        lines += [report.recompile_text(r) for r in recompiles]
        if not recompiles:
            lines.append("No recompilation detected.")
        return "\n".join(lines)
