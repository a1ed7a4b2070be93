"""The eager backend: the graph's printed Python text, compiled and run as is."""

from __future__ import annotations

import itertools
import linecache

_ids = itertools.count()


def eager_backend(graph, example_inputs):
    """Compile ``graph.python_code()``; what the user sees printed is exactly what runs."""
    del example_inputs
    namespace: dict = {}
    source = graph.python_code(namespace)
    filename = f"<tcompile graph {graph.name} #{next(_ids)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    forward = namespace[graph.name]
    forward.source = source
    return forward
