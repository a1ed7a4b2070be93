"""Graph passes (tracer/ir/graph_passes.py) and node metadata: common subexpressions are merged
only where nobody can tell, the graph lints after each pass, and every node carries a
structured TensorMeta."""

from __future__ import annotations

import numpy as np
from harness import check_same

import tcompile as tc
from tcompile.tracer.ir.compiled_graph import CompiledGraph
from tcompile.tracer.ir.node import TensorMeta


def compiled_report(fn, *args, backend="eager"):
    compiled = tc.compile(fn, backend=backend)
    compiled(*args)
    return compiled.__tc_compiled__.entries[-1].report


def op_names(fn, *args) -> list[str]:
    graph = compiled_report(fn, *args).graphs[0]
    graph.lint()
    return [
        getattr(n.target, "__name__", n.op) for n in graph.nodes if n.op not in ("input", "output")
    ]


INTS = np.arange(12).reshape(3, 4)
F = np.arange(12.0).reshape(3, 4)


def twice_integer(x):
    return (x[:, 1:] * 3).sum() + (x[:, 1:] * 3).sum()


def test_integer_work_done_twice_is_done_once():
    assert op_names(twice_integer, INTS).count("multiply") == 1
    check_same(twice_integer, INTS, calls=2)


def twice_float(x):
    return (x * 3).sum() + (x * 3).sum()


def test_float_work_that_can_warn_stays_twice_as_eager_code_warns_twice():
    assert op_names(twice_float, F).count("multiply") == 2
    check_same(twice_float, F, calls=2)


def both_returned(x):
    return x + 1, x + 1


def test_two_results_stay_two_arrays():
    a, b = tc.compile(both_returned)(INTS)
    assert a is not b and op_names(both_returned, INTS).count("add") == 2


def used_then_returned_twice(x):
    first = x[0]  # used, not returned: the returned copies below must not all become it
    total = first.sum()
    return x[0], x[0], total


def test_values_merged_into_one_that_stays_inside_stay_arrays_of_their_own():
    a, b, _ = tc.compile(used_then_returned_twice)(F)
    assert a is not b and np.shares_memory(a, b)
    check_same(used_then_returned_twice, F, calls=2)


def across_a_write(x):
    a = x + 1
    x[0] = 5
    b = x + 1
    return a, b


def test_a_write_between_two_computations_keeps_both():
    assert op_names(across_a_write, INTS.copy()).count("add") == 2
    check_same(across_a_write, INTS.copy(), calls=2)


def written_later(x):
    a = x * 2
    b = x * 2
    b[0] += 1  # a write into b: merging would show it in a
    return a.sum(), b.sum()


def test_a_value_written_later_is_not_merged():
    assert op_names(written_later, INTS).count("multiply") == 2
    check_same(written_later, INTS, calls=2)


def test_nodes_carry_structured_meta_rendered_in_the_comment():
    def f(x):
        v = x[1:, ::2]
        return v, x.sum(), x.reshape(-1) + 1

    graph = compiled_report(f, F).graphs[0]
    metas = {n.name: n.tensor for n in graph.nodes}
    view = next(m for m in metas.values() if m.kind == "array" and m.shape == (2, 2))
    assert view.view_of == "x" and view.contiguous is False and view.dtype == np.float64
    total = next(m for m in metas.values() if m.kind == "scalar")
    assert total.text() == "np.float64"
    assert TensorMeta.of(np.zeros((2, 3), np.float32)).text() == "f32[2, 3]"
    assert TensorMeta.of(np.zeros(())).shape == () and TensorMeta.of(np.zeros(())).kind == "array"
    assert "f64[2, 2]" in graph.python_code()


def test_symbolic_dims_are_named_after_the_input_dim():
    def f(x):
        return x * 2

    compiled = tc.compile(f, dynamic=True)
    compiled(np.ones((3, 4)))
    graph = compiled.__tc_compiled__.entries[-1].report.graphs[0]
    x = next(n for n in graph.nodes if n.op == "input" and n.tensor.kind == "array")
    assert x.tensor.shape == ("s0", "s1") and x.tensor.text() == "f64[s0, s1]"


def test_the_report_keeps_the_backends_compiled_graph():
    report = compiled_report(lambda x: np.sin(x) + 1, F)
    assert isinstance(report.compiled, CompiledGraph) and report.compiled.backend == "eager"
    assert "def " in report.compiled.sources["python"]
    assert report.sources["backend"] == report.compiled.source_text()


def test_a_user_backend_returning_a_plain_callable_is_wrapped():
    def mine(graph, example_inputs):
        return graph.python_callable() if hasattr(graph, "python_callable") else _run(graph)

    def _run(graph):
        ns: dict = {}
        exec(graph.python_code(ns), ns)  # noqa: S102
        return ns[graph.name]

    report = compiled_report(lambda x: x * 2, F, backend=mine)
    assert report.compiled.backend == "mine" and report.compiled.sources == {}
