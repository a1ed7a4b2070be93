"""Canonical operations (tracer/ir/canonical.py): every spelling of an operation gives one graph
node, the printed graph spells it back the fastest exact way, and results stay bitwise eager's."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from harness import check_same

import tcompile as tc
from tcompile.backend.lowering_kinds import lowering_kind
from tcompile.tracer.ir.operators import power_ufunc


def graph_of(fn, *args):
    compiled = tc.compile(fn, backend="eager", fullgraph=True)
    compiled(*args)
    report = compiled.__tc_compiled__.entries[-1].report
    return report.graphs[0], report.sources["backend"]


def ops_of(fn, *args):
    graph, _ = graph_of(fn, *args)
    return [(n.op, n.target, n.kwargs) for n in graph.nodes if n.op not in ("input", "output")]


X = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "spellings",
    [
        [lambda x: x + 1.5, lambda x: np.add(x, 1.5), lambda x: operator.add(x, 1.5)],
        [lambda x: x.sum(0), lambda x: np.sum(x, 0), lambda x: np.sum(x, axis=0)],
        [lambda x: x.max(axis=1), lambda x: np.amax(x, 1), lambda x: np.max(x, axis=1)],
        [lambda x: x.reshape(4, 3), lambda x: x.reshape((4, 3)), lambda x: np.reshape(x, (4, 3))],
        [lambda x: x.T, lambda x: x.transpose(), lambda x: np.transpose(x)],
        [lambda x: x.transpose(1, 0), lambda x: np.transpose(x, (1, 0))],
        [lambda x: -x, lambda x: np.negative(x)],
        [lambda x: abs(x), lambda x: np.abs(x), lambda x: np.absolute(x)],
        [lambda x: x**2, lambda x: np.square(x)],
        [lambda x: x**0.5, lambda x: np.sqrt(x)],
        [lambda x: x < 3, lambda x: np.less(x, 3)],
        [lambda x: np.round(x, 1), lambda x: np.around(x, 1), lambda x: x.round(1)],
    ],
    ids=[
        "add",
        "sum",
        "max",
        "reshape",
        "T",
        "transpose",
        "neg",
        "abs",
        "square",
        "sqrt",
        "less",
        "round",
    ],  # fmt: skip
)
def test_every_spelling_of_an_operation_is_one_node(spellings):
    forms = [ops_of(fn, X) for fn in spellings]
    assert all(form == forms[0] for form in forms), forms
    for fn in spellings:
        check_same(fn, X, calls=2)


def test_in_place_operators_become_ufuncs_writing_their_target():
    def f(x, o):
        x += 1
        np.multiply(x, 2, o)
        return x, o

    (add, mul) = ops_of(f, X.copy(), np.zeros_like(X))
    assert add == ("call", np.add, {"out": add[2]["out"]}) and mul[1] is np.multiply
    _, code = graph_of(f, X.copy(), np.zeros_like(X))
    assert "x += 1" in code and "np.multiply(x, 2, out=o)" in code
    check_same(f, X.copy(), np.zeros_like(X), calls=2)


def test_methods_without_an_equal_function_stay_methods_of_ndarray():
    def f(x):
        return x.astype(np.float32), x.copy(), x.conj(), x.flatten()

    targets = [t for _, t, _ in ops_of(f, X)]
    assert targets == [np.ndarray.astype, np.ndarray.copy, np.ndarray.conj, np.ndarray.flatten]
    _, code = graph_of(f, X)
    assert "x.astype(np.float32)" in code and "x.copy()" in code
    check_same(f, X, calls=2)


def test_arguments_are_normalised_array_operands_positional_the_rest_by_keyword():
    def f(x, i):
        return np.take(x, i, 1), np.clip(x, 1, 5), np.cumsum(x, 0)

    take, clip, cumsum = ops_of(f, X, np.array([0, 2]))
    assert take[2] == {"axis": 1} and clip[2] == {"a_min": 1, "a_max": 5}
    assert cumsum[2] == {"axis": 0}
    check_same(f, X, np.array([0, 2]), calls=2)


def test_printed_graph_uses_the_fast_exact_spelling():
    def f(x, y):
        return (x + y).sum(axis=0), np.clip(x, 0, 1), x.T, (x * y).max(1, keepdims=True)

    _, code = graph_of(f, X, X)
    assert "x + y" in code and ".sum(axis=0)" in code and "x.T" in code
    assert ".max(axis=1, keepdims=True)" in code
    assert "np.clip(x, a_min=0, a_max=1)" in code  # the method's parameters are min/max
    check_same(f, X, X, calls=2)


def test_operators_on_numpy_scalars_alone_stay_operators():
    """NumPy's scalar arithmetic warns on integer overflow where its ufuncs do not."""

    def f(x):
        s = x.sum()
        return s * s + 1

    kinds = [t for _, t, _ in ops_of(f, np.arange(5, dtype=np.int8))]
    assert operator.mul in kinds and operator.add in kinds and np.multiply not in kinds
    check_same(f, np.arange(5, dtype=np.int8), calls=2)


@pytest.mark.parametrize("dtype", ["f8", "f4", "f2", "i8", "i2", "u1", "?", "c16"])
@pytest.mark.parametrize("exponent", [2, 2.0, 0.5, -1, -1.0, 1, 3, 0, 1.5, -0.5])
def test_power_ufunc_is_the_computation_numpy_runs_for_the_operator(dtype, exponent):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(0, 50, 300), [-0.0, 0.0, np.inf, -np.inf, np.nan]])
    with np.errstate(all="ignore"):
        base = (
            values.astype(dtype) if dtype.kind in "fc" else rng.integers(-9, 9, 300).astype(dtype)
        )
        ufunc = power_ufunc(dtype, exponent)
        try:
            expected = base**exponent
        except (ValueError, OverflowError):  # integers to negative powers
            assert ufunc is None
            return
        got = ufunc(base) if ufunc.nin == 1 else ufunc(base, exponent)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


@pytest.mark.parametrize(
    ("fn", "kind"),
    [
        (lambda x: np.exp(x) + 1, "pointwise"),
        (lambda x: x.sum(axis=1), "reduction"),
        (lambda x: np.cumsum(x, 0), "scan"),
        (lambda x: x[::-1, 1:], "view"),
        (lambda x: x.T, "view"),
        (lambda x: x[np.array([0, 2])], "gather"),
        (lambda x: x @ x.T, "matmul"),
        (lambda x: np.sort(x), "extern"),
    ],
)
def test_the_lowering_table_says_how_each_canonical_op_lowers(fn, kind):
    graph, _ = graph_of(fn, X)
    nodes = [n for n in graph.nodes if n.op not in ("input", "output")]
    kinds = {lowering_kind(n.op, n.target, n.args) for n in nodes}
    assert kind in kinds, kinds
