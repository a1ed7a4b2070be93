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

from .memory_plan import plan_memory


def eager_backend(graph, example_inputs):
    """Compile ``graph.python_code()`` with a memory plan (``del`` after last uses, ``out=`` into
    dead operands, see `memory_plan`; loop bodies get theirs); what the user sees printed is
    exactly what runs. The loop nodes' functions are globals of the code (``loop_functions``),
    where a first run the trace kept can stand in for a loop's first call."""
    del example_inputs
    namespace: dict = {}
    lines = graph.code_lines(namespace, plan=plan_memory(graph))
    exec(compile_at_user_lines(graph.name, lines), namespace)  # noqa: S102
    source = "\n".join(text for text, _ in lines) + "\n"
    return CompiledGraph(namespace[graph.name], "eager", MappingProxyType({"python": source}),
                         loop_functions=namespace, trace_answers_first_call=True)  # fmt: skip


eager_backend.loop_nodes = True  # it runs a loop node's body as Python, once per iteration
