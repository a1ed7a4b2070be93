"""The CPU backend: a captured graph compiled to machine code by numba (``backend="cpu"``).

Two parts, one per kind of code:

- **array statements** become fused kernels (`kernels`): the lowering and fusion the Triton
  backend uses (`tcompile.backend.fused`), generated as numba source by `codegen` (each ufunc
  on scalars of NumPy's loop dtypes: `scalar_ops`, `intrinsics`), run on NumPy arrays
  (`device`);
- **loop nodes** are compiled whole (`native_loops`): the loop, its scalar indexing and
  arithmetic run as one native function, printed from the graph for numba (`native_source`,
  with `int_ranges`, `index_checks`, `native_prelude`'s helpers, and the element-wise array
  statements of its body fused into loop nests by `native_elementwise`) and checked against
  the trace's types (`numba_types`).

numba starts in the background when a function is compiled for the backend (`numba_start`);
a graph compiled before it is ready runs its NumPy code until a call finds it so
(`while_starting`): no call waits for numba's start.

A graph with loop nodes runs as the eager backend's NumPy code with its loops native; a loop-free
one (cond nodes included: a host branch between two programs of kernels) runs its NumPy code or
its kernels, whichever was measured faster for its input shapes (`tiers`). numba is an optional dependency
(``pip install 'tcompile[cpu]'``), imported only when the backend runs.
"""

from __future__ import annotations

from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import LOOP_OPS

from ..eager import eager_backend
from . import numba_start, while_starting
from .kernels import NumbaTarget, unavailable
from .tiers import Tiers, small


def cpu_backend(graph, example_inputs) -> CompiledGraph:
    """``graph`` as fused numba kernels or NumPy code (`tiers.Tiers`), or, with loop nodes, as
    NumPy code with its loops native. The kernels are made for the example inputs now when
    those are not small (their sources go in the report), else at the first call whose inputs
    are not; while numba is still starting, at the graph's second call, for its inputs
    (`while_starting`)."""
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    eager = eager_backend(graph, None)
    if not numba_start.ready():
        return while_starting.compiled(eager, lambda inputs: _compiled(graph, inputs, eager))
    return _compiled(graph, example_inputs, eager)


def _compiled(graph, example_inputs, eager: CompiledGraph) -> CompiledGraph:
    from ..fused.runtime import Runner, compile_graph

    plain = native_eager(graph, eager)
    if _has_loops(graph):
        # a loop graph's time is its loops: machine code already, and the kernels' runtime
        # would copy the arrays a loop may write on every call
        return plain
    if small(example_inputs):
        sources = dict(plain.sources)
        tiers = Tiers(plain.fn, lambda: Runner(graph, NumbaTarget()), sources)
        return CompiledGraph(tiers, "cpu", MappingProxyType(sources), plain.details,
                             plain.loop_functions, trace_answers_first_call=True)  # fmt: skip
    fused = compile_graph(graph, example_inputs, NumbaTarget(), "cpu")
    sources = dict(fused.sources)
    tiers = Tiers(plain.fn, lambda: fused.fn, sources)
    return CompiledGraph(tiers, "cpu", MappingProxyType(sources), fused.details,
                         trace_answers_first_call=True)  # fmt: skip


cpu_backend.loop_nodes = True  # a loop node is compiled whole, or runs as the eager code's loop
cpu_backend.prepare = numba_start.start  # when a function is compiled for it: numba starts


def _has_loops(graph) -> bool:
    """Whether ``graph`` holds a loop node, or a cond node one of whose sides does."""
    return any(
        node.op in LOOP_OPS
        or (node.op == Cond.op and any(_has_loops(side) for side in node.target.bodies))
        for node in graph.nodes
    )


def native_eager(graph, eager: CompiledGraph) -> CompiledGraph:
    """The eager backend's code for ``graph`` (``eager``), each loop node's function compiled
    by numba (where it can be, exactly: see `native_loops`)."""
    from .native_loops import native_loops

    loops = native_loops(graph, eager.loop_functions)
    sources = dict(eager.sources)
    native = [loop.source for loop in loops if loop.dispatcher is not None]
    if native:
        sources["native loops"] = "\n\n".join(native)
    return CompiledGraph(eager.fn, "cpu", MappingProxyType(sources),
                         tuple(loop.info() for loop in loops), eager.loop_functions,
                         trace_answers_first_call=True)  # fmt: skip


__all__ = ["cpu_backend", "native_eager", "unavailable"]
