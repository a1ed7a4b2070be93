"""Seed 001, the ``torch.compile`` FAQ: its graph-break, skip and escape-hatch examples that map to
NumPy.

- ``explain`` on ``toy_example``: 3 graphs, 2 graph breaks (``print``; ``if b.sum() < 0``), 6 ops;
- ``fullgraph=True`` (``nopython=True``) errors on the first break;
- frozen mode, ``tc.run``: prior compiled graphs are used, no new ones are generated;
- ``tc.graph_break()`` at the start of a function prevents inlining it;
- ``tc.allow_in_graph`` around a transformed function (``vmap(sum)`` read as ``np.vectorize``);
- ``tc.disable(a_fn, recursive=False)``: ``a_fn`` runs eagerly, ``aa_fn``/``ab_fn`` compile;
- the NumPy features torch.compile falls back to eager for, and its documented deviations from
  NumPy: tcompile gives exactly NumPy's results for all of them.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import check_same
from semantics_helpers import (
    all_ops,
    assert_points_at,
    assert_same,
    eager,
    explain_fresh,
    has_frame,
    line_of,
    randn,
    resume_frames,
    run_counted,
)

import tcompile as tc


def toy_example(a, b):
    x = a / (np.abs(a) + 1)
    print("woo")
    if b.sum() < 0:
        b = b * -1
    return x * b


# -- Identifying the cause of a graph break -------------------------------------------------------


@pytest.mark.usefixtures("branches_break")  # torch.compile's counts: its branch breaks
@pytest.mark.parametrize(
    "b_sign, ops", [(1.0, 6), (-1.0, 7)], ids=["branch-not-taken", "branch-taken"]
)
def test_explain_toy_example_three_graphs_two_breaks(capsys, b_sign, ops):
    a = randn(10)
    b = np.abs(randn(10, seed=1)) * b_sign
    expected = eager(toy_example, a, b)
    assert capsys.readouterr().out == "woo\n"

    report = explain_fresh(toy_example, a, b)
    assert capsys.readouterr().out == "woo\n"  # printed once, at run time
    # "Dynamo produced 3 graphs, with 2 graph break and 6 ops."
    assert report.graph_count == 3
    assert report.graph_break_count == 2
    assert len(all_ops(report)) == ops  # abs add div | sum lt | mul (and b * -1 when taken)
    first, second = report.break_reasons
    assert first.kind.id == "io_call"  # 1. call_function BuiltinVariable(print)
    assert first.location.lineno == line_of(toy_example, 'print("woo")')
    assert first.location.funcname == "toy_example"
    assert first.location.filename == __file__
    assert second.kind.id == "data_dependent_branch"  # 2. generic_jump
    assert second.location.lineno == line_of(toy_example, "if b.sum() < 0:")
    text = str(report)
    assert 'print("woo")' in text and "if b.sum() < 0:" in text
    assert has_frame(report.compiled_frames, "toy_example")
    assert len(resume_frames(report.compiled_frames)) == 2
    assert report.skipped_frames == []

    out, counts = run_counted(tc.compile(toy_example), a.copy(), b.copy())
    assert capsys.readouterr().out == "woo\n"
    assert_same(out, expected)
    assert counts["graphs"] == 3 and counts["graph_breaks"] == 2
    assert counts["frames_skipped"] == 0


def test_fullgraph_toy_example_errors_on_the_first_graph_break():
    compiled = tc.compile(toy_example, fullgraph=True)
    with pytest.raises(tc.Unsupported) as info:
        compiled(randn(10), randn(10, seed=1))
    message = str(info.value)
    assert_points_at(message, toy_example, 'print("woo")')
    assert f"line {line_of(toy_example, 'if b.sum() < 0:')}" not in message


# -- Why are you recompiling in production? (frozen mode) ---------------------------------------


def test_frozen_toy_example_uses_prior_graphs_and_never_compiles(capsys):
    compiled = tc.compile(toy_example)
    a, b = randn(10), np.abs(randn(10, seed=1))
    compiled(a.copy(), b.copy())  # warm up: compiles toy_example and its resume functions
    capsys.readouterr()
    before = dict(tc.counters())

    frozen_toy_example = tc.run(compiled)
    a2, b2 = randn(10, seed=2), np.abs(randn(10, seed=3))
    out = frozen_toy_example(a2.copy(), b2.copy())
    assert capsys.readouterr().out == "woo\n"
    assert_same(out, eager(toy_example, a2, b2))
    capsys.readouterr()
    after_hit = dict(tc.counters())
    assert after_hit["frames_compiled"] == before["frames_compiled"]
    assert after_hit["cache_hits"] > before["cache_hits"]

    # the branch never taken before, and new shapes: run eagerly, nothing new is compiled
    for a3, b3 in [(randn(10, seed=4), -np.abs(randn(10, seed=5))), (randn(7), randn(7, seed=1))]:
        out = frozen_toy_example(a3.copy(), b3.copy())
        assert capsys.readouterr().out == "woo\n"
        assert_same(out, eager(toy_example, a3, b3))
        capsys.readouterr()
    after = dict(tc.counters())
    assert after["frames_compiled"] == before["frames_compiled"]
    assert after["recompiles"] == before["recompiles"]
    assert after["graphs"] == before["graphs"]


# -- How do I graph break on a function? --------------------------------------------------------


def test_graph_break_at_the_start_of_a_function_prevents_inlining_it():
    def not_inlined(x):
        tc.graph_break()  # at the beginning of the function
        return x * 2

    @tc.compile
    def fn(x):
        y = x + 1
        return not_inlined(y) - 1

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)
    assert counts["frames_skipped"] == 0

    report = explain_fresh(fn, x)
    assert report.skipped_frames == []
    assert report.graph_break_count >= 1
    assert report.break_reasons[0].location.lineno == line_of(not_inlined, "# at the beginning")
    # x + 1 and not_inlined's x * 2 never share a graph
    for ops in report.ops_per_graph:
        assert not (any(" + " in op for op in ops) and any(" * " in op for op in ops)), ops
    assert sum(" * " in op for op in all_ops(report)) == 1  # but x * 2 is compiled


def test_disable_recursive_false_on_a_fn_compiles_aa_fn_and_ab_fn():
    # The FAQ's call-stack diagram: fn calls a_fn and b_fn; a_fn calls aa_fn and ab_fn.
    def aa_fn(x):
        return x + 1

    def ab_fn(x):
        return x * 2

    @tc.disable(recursive=False)
    def a_fn(x):
        return ab_fn(aa_fn(x))

    def b_fn(x):
        return x - 3

    @tc.compile
    def fn(x):
        return b_fn(a_fn(x))

    x = randn(3)
    expected = eager(fn, x)
    out, counts = run_counted(fn, x.copy())
    assert_same(out, expected)

    report = explain_fresh(fn, x)
    assert not has_frame(report.compiled_frames, "a_fn")
    assert has_frame(report.compiled_frames, "aa_fn")
    assert has_frame(report.compiled_frames, "ab_fn")
    assert has_frame(report.compiled_frames, "fn")
    assert report.graph_break_count >= 1  # at the call to the disabled a_fn
    assert any(" - " in op for op in all_ops(report))  # b_fn is traced (inlined) in fn


# -- Compiling functions besides the ones which are supported (escape hatch) ----------------------


@pytest.mark.parametrize("fullgraph", [False, True])
def test_allow_in_graph_on_a_vectorized_function_is_one_graph_without_breaks(fullgraph):
    row_sum = np.vectorize(np.sum, signature="(n)->()")  # torch.vmap(torch.sum)

    def f(x):
        return tc.allow_in_graph(row_sum)(x)

    x = randn(2, 3)
    expected = eager(f, x)
    out, counts = run_counted(tc.compile(f, fullgraph=fullgraph), x.copy())
    assert_same(out, expected)
    assert counts["graphs"] == 1 and counts["graph_breaks"] == 0

    report = explain_fresh(f, x)
    assert report.graph_count == 1 and len(all_ops(report)) == 1


# -- Which NumPy features does torch.compile support? ---------------------------------------------
# torch.compile "gracefully falls back to NumPy" for these; tcompile traces them or breaks, and in
# both cases the result, printed output, mutation and aliasing are exactly NumPy's.


class MyArray(np.ndarray):
    pass


class HasArray:
    def __init__(self):
        self.data = np.arange(4.0)

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)


def _structured():
    out = np.zeros(3, dtype=[("a", "f8"), ("b", "i4")])
    out["a"], out["b"] = [1.5, 2.5, 3.5], [1, 2, 3]
    return out


FALLBACK_FEATURES = {
    "datetime64": (lambda x: x.astype("datetime64[D]") + np.timedelta64(1, "D"), (np.arange(3),)),
    "strings": (lambda s: np.char.upper(s), (np.array(["ab", "c"]),)),
    "structured dtype": (lambda r: r["a"] * 2 + r["b"], (_structured(),)),
    "recarray": (lambda r: r.a + r.b, (_structured().view(np.recarray),)),
    "uint16": (lambda x: x.astype(np.uint16) * np.uint16(300), (np.arange(5),)),
    "uint32": (lambda x: x.astype(np.uint32) - np.uint32(1), (np.arange(5),)),
    "uint64": (lambda x: x.astype(np.uint64) << np.uint64(40), (np.arange(5),)),
    "ndarray subclass": (lambda x: x + 1, (randn(3).view(MyArray),)),
    "masked array": (lambda x: np.ma.masked_less(x, 0).sum(), (randn(6),)),
    "gufunc axes": (
        lambda a, b: np.matmul(a, b, axes=[(0, 1), (0, 1), (0, 1)]),
        (randn(2, 3), randn(3, 2, seed=1)),
    ),
    "ufunc reduce": (lambda x: np.add.reduce(x, axis=0), (randn(3, 2),)),
    "ufunc accumulate": (lambda x: np.multiply.accumulate(x), (randn(4),)),
    "ufunc outer": (lambda x: np.subtract.outer(x, x), (randn(3),)),
    "sort complex": (lambda x: np.sort(x + 1j * x[::-1]), (randn(5),)),
    "poly1d": (lambda x: np.poly1d([1.0, 2.0, 3.0])(x), (randn(4),)),
    "polynomial": (lambda x: np.polynomial.Polynomial([1.0, 2.0, 3.0])(x), (randn(4),)),
    "positional out1 out2": (
        lambda x, o1, o2: np.divmod(x, 0.5, o1, o2),
        (randn(3), np.empty(3), np.empty(3)),
    ),
    "out tuple": (lambda x, o1, o2: np.modf(x, out=(o1, o2)), (randn(3), np.empty(3), np.empty(3))),
    "__array__ object": (lambda obj: np.asarray(obj) * 2, (HasArray(),)),
    "ndarray.ctypes": (lambda x: x.ctypes.data == x.__array_interface__["data"][0], (randn(3),)),
}


@pytest.mark.parametrize("name", list(FALLBACK_FEATURES))
def test_numpy_features_torch_compile_falls_back_on_give_numpys_exact_results(name):
    fn, args = FALLBACK_FEATURES[name]
    check_same(fn, *args, fullgraph=False)


@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_extended_precision_dtypes_torch_compile_falls_back_on_give_numpys_results(dtype):
    def fn(x):
        return x.astype(dtype) * 3 + 1

    x = randn(3)
    expected = eager(fn, x)
    out = tc.compile(fn)(x.copy())
    assert type(out) is np.ndarray and out.dtype == expected.dtype
    # compared by value: the padding bytes of 80-bit extended precision are not defined
    assert np.array_equal(out, expected)


DEVIATIONS = {
    # "NumPy scalars: We model them as 0-D arrays" -- not in tcompile
    "numpy scalars": (lambda x: (np.float32(3), x.sum(), x[0], x.dtype.type(2) * 2), (randn(3),)),
    # "Negative strides: np.flip and slicing with a negative step return a copy" -- views here
    "negative strides": (lambda x: (np.flip(x), x[::-1], x[::-2] + 0), (randn(5),)),
    # "Type promotion: torch.compile implements NEP 50" -- the installed NumPy's rules here
    "promotion float32 + python float": (lambda x: x.astype(np.float32) + 3.0, (randn(3),)),
    "promotion numpy scalars": (lambda x: np.float32(3) + np.float64(3) + x[0], (randn(3),)),
    "promotion out of bounds python int": (lambda x: x.astype(np.uint8) + 300, (np.arange(3),)),
    # "{tril,triu}_indices_from/{tril,triu}_indices return arrays rather than a tuple of arrays"
    "tril_indices": (lambda x: np.tril_indices(x.shape[0]), (randn(3, 3),)),
    "triu_indices_from": (lambda x: np.triu_indices_from(x, 1), (randn(3, 3),)),
}


@pytest.mark.parametrize("name", list(DEVIATIONS))
def test_torch_compiles_documented_numpy_deviations_do_not_happen(name):
    fn, args = DEVIATIONS[name]
    check_same(fn, *args, fullgraph=False)


@pytest.mark.parametrize("name", list(DEVIATIONS))
def test_documented_deviations_also_hold_under_fullgraph(name):
    fn, args = DEVIATIONS[name]
    check_same(fn, *args, fullgraph=True)
