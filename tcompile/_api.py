"""The public functions of the facade, validating their arguments before the tracer sees them."""

from __future__ import annotations

import types

from tcompile.backend import lookup_backend
from tcompile.tracer import entry, report
from tcompile.tracer import explain as _explain

# Code compiled outside a tc.compile call (tc.disable(recursive=False) callees) uses "auto".
entry.DEFAULT_BACKEND = lookup_backend("auto")


def compile(fn=None, *, fullgraph: bool = False, backend="auto", dynamic=None):
    """Compile ``fn`` (decorator, with or without arguments).

    ``fullgraph=True``: one graph or `tc.Unsupported` at the first graph break.
    ``backend``: "eager", "auto", or a callable ``(graph, example_inputs) -> callable``.
    ``dynamic``: None (automatic dynamic shapes), True (all dims symbolic), False (never).
    """
    if not isinstance(fullgraph, bool):
        raise TypeError(f"tc.compile(fullgraph=...) must be True or False, not {fullgraph!r}")
    if dynamic not in (None, True, False):
        raise TypeError(f"tc.compile(dynamic=...) must be None, True or False, not {dynamic!r}")
    backend_fn = lookup_backend(backend)

    def decorate(f):
        if not isinstance(f, types.FunctionType) and not hasattr(f, "__tc_compiled__"):
            raise TypeError(
                f"tc.compile() needs a Python function, not {type(f).__name__} ({f!r}); "
                "to compile a method, decorate the function in the class body"
            )
        return entry.compile_function(f, fullgraph=fullgraph, backend=backend_fn, dynamic=dynamic)

    if fn is None:
        return decorate
    return decorate(fn)


def explain(fn, *, backend="eager", dynamic=None):
    """``tc.explain(fn)(*args)``: compile ``fn`` on that call and return an ``ExplainOutput``."""
    if not callable(fn):
        raise TypeError(f"tc.explain() needs a function, not {type(fn).__name__}")
    return _explain.explain(fn, backend=lookup_backend(backend), dynamic=dynamic)


def reset() -> None:
    """Forget every compiled entry, cache and counter."""
    entry.reset_all()
    report.reset_recorder()


def counters() -> dict[str, int]:
    """Counts since the last reset: frames compiled/skipped, graphs, breaks, recompiles, hits..."""
    return report.current().snapshot()


class CompileProfiler:
    """Records every recompilation and the guard that failed::

    with tc.CompileProfiler() as prof:
        f(np.ones(3)); f(np.ones(4))
    print(prof.report())
    """

    def __init__(self):
        self.recompiles: list[report.RecompileEvent] = []
        self.compiles: list[report.CompileEvent] = []

    def __enter__(self):
        report.current().listeners.append(self)
        return self

    def __exit__(self, *exc):
        report.current().listeners.remove(self)
        return False

    def on_compile(self, event) -> None:
        self.compiles.append(event)

    def on_recompile(self, event) -> None:
        self.recompiles.append(event)

    def report(self) -> str:
        breaks = sum(len(c.breaks) for c in self.compiles)
        lines = [
            f"Compiles: {len(self.compiles)}  Recompiles: {len(self.recompiles)}  Graph breaks: {breaks}"
        ]
        for event in self.recompiles:
            lines.append(f"Recompiling function {event.function} in {event.location}")
            lines.append("    triggered by the following guard failure(s):")
            lines.extend(f"    {reason}" for reason in event.reasons)
        if not self.recompiles:
            lines.append("No recompilation detected.")
        return "\n".join(lines)
