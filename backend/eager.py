"""The eager backend: the graph's printed Python text, compiled and run as is.

The text is compiled with each statement's line number set to the user's line it came from,
under the user's file name, so an error raised inside a graph (a shape mismatch, a
``FloatingPointError`` under ``np.errstate(all="raise")``) shows the user's code in its
traceback.
"""

from __future__ import annotations

from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph
from tcompile.tracer.ir.line_numbers import compile_at_user_lines
from tcompile.tracer.ir.loop_runners import LoopRunner

from .memory_plan import plan_memory


def eager_backend(graph, example_inputs):
    """Compile ``graph.python_code()`` with a memory plan (``del`` after last uses, ``out=`` into
    dead operands, see `memory_plan`); what the user sees printed is exactly what runs."""
    del example_inputs
    for node in graph.nodes:  # loop bodies get a memory plan too
        if isinstance(node.target, LoopRunner):
            _plan_loop(node.target)
    namespace: dict = {}
    plan = plan_memory(graph)
    source = graph.python_code(namespace, plan=plan)
    exec(compile_at_user_lines(graph, source, plan), namespace)  # noqa: S102
    return CompiledGraph(namespace[graph.name], "eager", MappingProxyType({"python": source}))


eager_backend.loop_nodes = True  # it runs a loop node's body as Python, once per iteration


def _plan_loop(runner: LoopRunner) -> None:
    """A loop node's body, and the bodies of the loops inside it, with memory plans."""
    for node in runner.body.nodes:
        if isinstance(node.target, LoopRunner):
            _plan_loop(node.target)
    runner.compile(plan_memory(runner.body))
