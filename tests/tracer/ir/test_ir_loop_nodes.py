"""Loop nodes in the IR (tracer/ir/loop_nodes.py): a ``loop`` or ``while_loop`` node's target is
plain data, the graph prints it as a real ``for`` or ``while`` statement holding the body's
operations, that text is what the eager backend runs, compiling changes no node, and the trace's
run of the loop is a memo of the compiled entry, taken by the first call only."""

from __future__ import annotations

import dataclasses

import numpy as np

import tcompile as tc
from tcompile.backend.eager import eager_backend
from tcompile.tracer.ir.first_run import FirstRun
from tcompile.tracer.ir.graph import loop_function
from tcompile.tracer.ir.loop_nodes import LOOP_OPS, ForLoop, WhileLoop


def stencil(u, c):
    for _ in range(50):
        u = u + c * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return u


def relax(x, tol):
    change = 1.0
    while change > tol:
        y = 0.5 * x
        change = np.abs(y - x).max()
        x = y
    return x


def nested(a):
    for i in range(4):
        for j in range(3):
            a[i, j] = a[i, j] * 2.0 + j
    return a


def _graph(fn, *args):
    (graph,) = tc.explain(fn)(*args).graphs
    return graph


def _loop_nodes(graph):
    return [n for n in graph.nodes if n.op in LOOP_OPS]


def test_a_stencil_time_loop_prints_as_a_for_statement_with_its_body():
    graph = _graph(stencil, np.linspace(0, 1, 16), 0.1)
    (node,) = _loop_nodes(graph)
    assert node.op == "loop" and isinstance(node.target, ForLoop)
    code = graph.python_code()
    function, forward = code.split("\n\n", 1)
    lines = function.splitlines()
    assert lines[0] == "def _loop_fn(__tc_first, __tc_count, u):"
    assert lines[1] == "    for k in range(__tc_first, __tc_first + __tc_count):"
    body = [line for line in lines[2:] if line.startswith("        ")]
    assert sum("np.roll(u" in line for line in body) == 2, code
    # the carried value is made under its name (no copy per iteration), the loop's tuple
    # unpacked into the graph's value
    assert body[-1].startswith("        u = u + "), code
    assert "    u_1, = _loop_fn(0, 50, u)" in forward, code


def test_a_while_loop_prints_as_a_while_statement():
    graph = _graph(relax, np.linspace(1, 2, 8), 1e-3)
    (node,) = _loop_nodes(graph)
    assert isinstance(node.target, WhileLoop) and not node.target.negate
    code = graph.python_code()
    assert "    while __tc_cond:\n        y_1 = 0.5 * x" in code, code
    assert "        change = absolute.max()" in code, code  # made under its carried name
    assert "        __tc_cond, x, y = gt, y_1, y_1" in code, code
    assert "_, x_1, _ = _while_loop_fn(gt, change, y, y)" in code, code


def test_nested_loops_print_as_nested_for_statements_in_one_function():
    graph = _graph(nested, np.arange(12.0).reshape(4, 3))
    code = graph.python_code()
    assert code.count("def _loop") == 1 and "_loop_fn_loop_fn" not in code, code
    assert "    for k in range(" in code and "        for k_2 in range(0, 0 + 3):" in code, code
    a = np.arange(12.0).reshape(4, 3)
    namespace: dict = {}
    exec(code, namespace)  # noqa: S102 - what prints is what runs
    namespace[graph.name](a)
    assert np.array_equal(a, nested(np.arange(12.0).reshape(4, 3)))


def test_a_loop_target_is_plain_data():
    graph = _graph(stencil, np.linspace(0, 1, 16), 0.1)
    (node,) = _loop_nodes(graph)
    loop = node.target
    assert dataclasses.is_dataclass(loop) and loop.carried == 1
    assert not callable(loop) and not hasattr(loop, "first_run")
    run = loop_function(loop)  # the loop alone, as the graph prints it
    u = np.linspace(0, 1, 16)
    (out,) = run(0, 50, u)
    assert np.array_equal(out, stencil(u, 0.1))


def test_compiling_changes_no_node():
    graph = _graph(stencil, np.linspace(0, 1, 16), 0.1)
    before = [(n.op, n.target, n.args, n.name) for n in graph.nodes]
    body_before = graph.python_code()
    compiled = eager_backend(graph, None)
    assert [(n.op, n.target, n.args, n.name) for n in graph.nodes] == before
    assert graph.python_code() == body_before
    assert "def _loop_fn(" in compiled.sources["python"]


def test_the_first_run_is_a_memo_of_the_entry_taken_once(monkeypatch):
    replays = []
    real = FirstRun.replay
    monkeypatch.setattr(
        FirstRun, "replay", lambda self, args: replays.append(1) or real(self, args)
    )
    f = tc.compile(stencil, backend="eager")
    u = np.linspace(0, 1, 16)
    first = f(u, 0.1)
    (entry,) = f.__tc_compiled__.entries
    functions = entry.compiled.loop_functions
    loop_fn = functions["_loop_fn"]
    assert loop_fn.__name__ == "_loop_fn", "after the first call the loop's own function runs"
    assert replays == [1]
    second = f(u, 0.1)
    assert replays == [1] and np.array_equal(first, second)
    assert np.array_equal(first, stencil(u, 0.1))
