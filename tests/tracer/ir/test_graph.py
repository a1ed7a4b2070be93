"""The graph IR (tracer/ir/graph.py) on hand-built graphs: the exact Python text a graph prints as
(and that this text runs), names, `lint` catching each broken invariant, dead-code elimination
keeping what eager code would observe, and `nodes_in`."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.node import FrameLoc, TensorMeta, nodes_in
from tcompile.tracer.ir.printer import literal_text

HERE = FrameLoc("/home/user/cell.py", 3, "f")
X = np.arange(4.0)


def array_input(graph: Graph, name: str = "x", example=X):
    node = graph.add("input", name, name=name, meta=TensorMeta.of(example).text())
    node.tensor = TensorMeta.of(example)
    return node


def op(graph: Graph, kind: str, target, *args, name: str = "v", risk: str = "silent", **kwargs):
    """A node with an array value, as the tracer records one, at ``HERE``."""
    node = graph.add(kind, target, args, kwargs, name=name, meta="f64[4]", stack=(HERE,), risk=risk)
    node.tensor = TensorMeta.of(X)
    return node


def small_graph() -> Graph:
    g = Graph("forward")
    x = array_input(g)
    y = op(g, "call", np.sin, x, name="y")
    z = op(g, "call", np.add, y, 1.5, name="z")
    t = op(g, "attr", "T", z, name="t")
    s = op(g, "method", "sum", t, name="s", axis=0)
    g.add("output", None, ((s, y),), name="output")
    return g


def test_a_graph_prints_as_python_with_types_and_locations():
    assert small_graph().python_code() == (
        "def forward(x):\n"
        "    y = np.sin(x)                             # f64[4]  cell.py:3 in f\n"
        "    z = y + 1.5                               # f64[4]  cell.py:3 in f\n"
        "    t = z.T                                   # f64[4]  cell.py:3 in f\n"
        "    s = t.sum(axis=0)                         # f64[4]  cell.py:3 in f\n"
        "    return (s, y)\n"
    )
    assert str(small_graph()).startswith("# input x: x  f64[4]\ndef forward(x):\n")


def test_the_printed_graph_is_what_runs():
    namespace: dict = {}
    exec(small_graph().python_code(namespace), namespace)  # noqa: S102
    s, y = namespace["forward"](X)
    np.testing.assert_array_equal(y, np.sin(X))
    assert s == (np.sin(X) + 1.5).T.sum(axis=0)


def test_statements_print_without_a_name():
    g = Graph("forward")
    x, w = array_input(g), array_input(g, "w")
    row = op(g, "getitem", None, x, (slice(1, None), Ellipsis), name="row")
    g.add("setitem", None, (x, slice(None, None, 2), row), name="setitem")
    g.add("inplace", operator.iadd, (w, 2), name="inplace")
    op(g, "call", np.multiply, w, 3, out=x, name="into")
    g.add("output", None, ((),), name="output")
    assert g.python_code(comments=False) == (
        "def forward(x, w):\n"
        "    row = x[1:, ...]\n"
        "    x[::2] = row\n"
        "    w += 2\n"
        "    np.multiply(w, 3, out=x)\n"
        "    return ()\n"
    )


def test_ops_traced_under_errstate_print_inside_it():
    g = Graph("forward")
    x = array_input(g)
    quiet = op(g, "call", np.log, x, name="quiet")
    quiet.errstate = (("divide", "ignore"),)
    g.add("output", None, ((op(g, "call", np.negative, quiet, name="loud"),),), name="output")
    assert g.python_code(comments=False).splitlines()[1:] == [
        "    with np.errstate(**{'divide': 'ignore'}):",
        "        quiet = np.log(x)",
        "    loud = -quiet",
        "    return (loud,)",
    ]


def test_other_callables_and_constants_are_bound_in_the_namespace():
    def scale(a, factor):
        return a * factor

    g = Graph("forward")
    x = array_input(g)
    out = op(g, "call", scale, x, float("nan"), name="out")
    g.add("output", None, ((out,),), name="output")
    namespace: dict = {}
    text = g.python_code(namespace, comments=False)
    assert "    out = _scale_1(x, _c_2)\n" in text
    assert namespace["_scale_1"] is scale and math.isnan(namespace["_c_2"])
    assert [literal_text(v) for v in (1, -0.0, float("-inf"), "a", None, 1j)] == [
        "1",
        "-0.0",
        "-float('inf')",
        "'a'",
        "None",
        None,
    ]


class _Plan:
    """A backend memory plan: ``y`` writes into x's array, and ``x`` dies after it."""

    def __init__(self, graph: Graph):
        self.x, self.y = graph.nodes[0], graph.nodes[1]

    def buffer_of(self, node):
        return self.x if node is self.y else None

    def released_after(self, node):
        return [self.x] if node is self.y else []


def test_a_memory_plan_adds_out_buffers_and_dels():
    g = small_graph()
    lines = g.python_code(comments=False, plan=_Plan(g)).splitlines()
    assert lines[1:3] == ["    y = np.sin(x, out=x)", "    del x"]


def test_format_node_is_the_nodes_statement():
    g = small_graph()
    assert [g.format_node(n) for n in g.nodes[1:]] == [
        "y = np.sin(x)",
        "z = y + 1.5",
        "t = z.T",
        "s = t.sum(axis=0)",
        "return (s, y)",
    ]


@pytest.mark.parametrize(
    ("hint", "name"),
    [("x", "x"), ("a.b", "a_b"), ("2d", "v_2d"), ("sum", "sum_"), ("np", "np_"),
     ("forward", "forward_"), ("class", "class_"), ("", "v"), ("[0]", "v_0")],
)  # fmt: skip
def test_fresh_names_are_identifiers_that_shadow_nothing(hint, name):
    g = Graph()
    assert g.fresh_name(hint) == name
    assert g.fresh_name(hint) == f"{name}_1"


def test_rename_frees_the_old_name():
    g = Graph()
    node = g.add("input", "x", name="tmp")
    g.rename(node, "x")
    assert node.name == "x" and g.fresh_name("tmp") == "tmp"


def test_graph_summary_properties():
    g = small_graph()
    assert [n.name for n in g.inputs] == ["x"]
    assert g.output is g.nodes[-1] and g.op_count() == 4
    assert Graph().output is None


# -- lint ---------------------------------------------------------------------------------------


def broken(change) -> Graph:
    g = small_graph()
    change(g)
    return g


def late_input(g: Graph) -> None:
    g.nodes.insert(2, g.add("input", "w", name="w"))
    g.nodes.pop()  # add appended it too


def test_a_well_formed_graph_lints():
    small_graph().lint()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda g: setattr(g.nodes[1], "graph", Graph()), "belongs to another graph"),
        (lambda g: setattr(g.nodes[1], "op", "bogus"), "unknown op 'bogus'"),
        (lambda g: setattr(g.nodes[2], "name", "y"), "bad name 'y'"),
        (lambda g: setattr(g.nodes[2], "name", "not valid"), "bad name 'not valid'"),
        (late_input, "input %w after an op"),
        (lambda g: g.nodes.insert(2, g.nodes.pop()), "output is not the last node"),
        (lambda g: g.nodes.insert(1, g.nodes.pop(2)), "%z uses %y before it is defined"),
        (lambda g: setattr(g.nodes[2], "args", (Graph().add("input", "q", name="q"),)),
         "%z uses %q of another graph"),
        (lambda g: setattr(g.nodes[1], "op", "setitem"), "uses the value of statement %y"),
    ],
    ids=["graph", "op", "duplicate", "identifier", "input", "output", "order", "foreign", "stmt"],
)  # fmt: skip
def test_lint_names_the_broken_invariant(change, message):
    with pytest.raises(AssertionError, match=message.replace("(", r"\(")):
        broken(change).lint()


def test_a_node_used_inside_nested_arguments_is_checked_too():
    g = small_graph()
    y, z = g.nodes[1], g.nodes[2]
    z.args = ({"deep": [slice(None, z)]},)  # uses itself
    with pytest.raises(AssertionError, match="%z uses %z before it is defined"):
        g.lint()
    z.args = ({"deep": [slice(None, y)]},)
    g.lint()


# -- dead-code elimination ----------------------------------------------------------------------


def test_dce_drops_unused_silent_nodes_and_what_only_they_use():
    g = Graph()
    x = array_input(g)
    a = op(g, "call", np.abs, x, name="a")
    op(g, "call", np.negative, a, name="unused")  # uses a; nothing uses it
    kept = op(g, "call", np.sqrt, x, name="kept")
    g.add("output", None, ((kept,),), name="output")
    g.eliminate_dead_code()
    g.lint()
    assert [n.name for n in g.nodes] == ["x", "kept", "output"]


@pytest.mark.parametrize("risk", ["raise", "fp"])
def test_dce_keeps_unused_nodes_that_may_raise_or_warn(risk):
    g = Graph()
    x = array_input(g)
    op(g, "call", np.log, x, name="warns", risk=risk)
    g.add("output", None, ((),), name="output")
    g.eliminate_dead_code()
    assert [n.name for n in g.nodes] == ["x", "warns", "output"]


def test_dce_keeps_writes_and_the_values_they_use():
    g = Graph()
    x = array_input(g)
    value = op(g, "call", np.abs, x, name="value")
    g.add("setitem", None, (x, 0, value), name="setitem", risk="silent")
    step = op(g, "call", np.negative, x, name="step")
    g.add("inplace", operator.iadd, (x, step), name="inplace", risk="silent")
    op(g, "method", "sort", x, name="sort_in_place").mutates = True
    op(g, "call", np.cos, x, name="dead")
    g.add("output", None, ((),), name="output")
    g.eliminate_dead_code()
    names = [n.name for n in g.nodes]
    assert names == ["x", "value", "setitem", "step", "inplace", "sort_in_place", "output"]


def test_has_value_excludes_statements_and_out_calls():
    g = Graph()
    x = array_input(g)
    stmt = g.add("setitem", None, (x, 0, 1.0), name="setitem")
    into = g.add("call", np.add, (x, 1), {"out": x}, name="into")
    value = g.add("call", np.add, (x, 1), name="value")
    output = g.add("output", None, ((value,),), name="output")
    assert value.has_value and x.has_value
    assert not stmt.has_value and not into.has_value and not output.has_value


# -- nodes_in -----------------------------------------------------------------------------------


def test_nodes_in_finds_nodes_in_any_nesting_in_order():
    g = small_graph()
    x, y, z = g.nodes[:3]
    nested = (1, [y, {"k": z, "c": 2.0}], slice(x, None, y), "x")
    assert nodes_in(nested) == [y, z, x, y]
    assert nodes_in(((), [], {}, slice(None), 3)) == []
    assert nodes_in(z) == [z]
