"""Random programs of boolean-mask selections behave like eager: reductions of selections and
of element-wise chains of selections with numbers (``(x[m] * 2.0 + 1.0).sum()``,
``(k[m] % 3).max()``, ``np.mean(np.sqrt(np.abs(x[m])))``, ``(x[m] > 0.5).any()``), of two
masks in one expression (a shape error where their counts differ), with writes between a
selection and its reduction (``t2 = x[m]; m[:2] = True; r = t2.sum()``), masked stores
(``x[m] = x[m] * 0.5 + 1.0``, ``k[m] += 1``), writes through views, branches and loops around
them, and selections kept and returned.

A small grammar generates the body of

    def prog(x, y, k, f, t):          # x, y: float64, k: int64 or int32, f: float32, t: float
        m = x > t; m2 = y < 0.3; m3 = (x > 0) & (y > 0)
        rows = x.reshape(x.shape[0], -1)[:, 0] > t    # rows (1-D x: elements)
        s = np.float64(0.0); c = 0; b = False; r = np.float64(0.0)
        t2 = y[m2]; out = x[m3] * 1.0
        <statements>                  # straight, or in ``for i in range(2):``
        return s, c, b, r, t2, out, x, y, k, f, m, m2, m3, rows

on arrays of shape (8,) or (4, 6), with masks that select nothing (``t`` large), everything
(``t`` very negative) and some. The tracer makes a selection that is only computed on and
reduced at its read (`tracer/state/masked.py`), keeps a stored one masked; the fused kernels
reduce element-wise chains of selections of one mask under the mask
(`backend/fused/lowering/selections.py`). Each program runs eagerly and compiled: on the eager
backend bitwise (`check_same_calls`, also with sizes from data off), on the cpu backend and in
its fused kernels called directly (whatever the input's size), and on the Triton backend
(under its interpreter) where torch and triton are installed, within a tolerance: float64 to
1e-12 relative (Triton: a few ULP of the largest value), integers and bools exactly, the same
exception (type and message), the same arguments after the call, and no tcompile warning of an
internal error.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import textwrap
import warnings

import numpy as np
import pytest
from harness import check_same_calls
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tcompile as tc

MASKS = ("m", "m2", "m3", "rows")  # rows: a mask of rows (of elements where x is 1-D)
# each array with the kind of its elements
SOURCES = (
    ("x[{m}]", "f"), ("y[{m}]", "f"), ("k[{m}]", "i"), ("f[{m}]", "f"), ("m3[{m}]", "b"),
    ("(x * 2.0)[{m}]", "f"), ("np.abs(y - 0.5)[{m}]", "f"), ("x.T[{m}.T]", "f"),
    ("k[::-1][{m}[::-1]]", "i"), ("x[{m}][y[{m}] > 0.5]", "f"),
)  # fmt: skip
EXAMPLES = int(os.environ.get("TC_SELECTIONS_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# -- the grammar ---------------------------------------------------------------------------------

# element-wise operations of one operand: (template, kinds it takes, kind it gives or None: same)
UNARY = [
    ("({e} * 2.0 + 1.0)", "fib", "f"),
    ("({e} + 1.0)", "fib", "f"),
    ("({e} - t)", "fi", "f"),
    ("({e} * s)", "fi", "f"),
    ("({e} * x[0])", "fi", "f"),
    ("({e} + np.int64(3))", "fi", None),
    ("({e} * 2)", "fi", None),
    ("(-{e})", "fi", None),
    ("np.abs({e})", "fi", None),
    ("np.sqrt(np.abs({e}))", "fi", "f"),
    ("np.exp({e} * 0.1)", "fi", "f"),
    ("np.maximum({e}, 0.5)", "fi", "f"),
    ("({e} % 3)", "fi", None),
    ("({e} // 2)", "fi", None),
    ("({e} ** 2)", "fi", None),
    ("({e} > 0.5)", "fi", "b"),
    ("({e} < t)", "fi", "b"),
    ("(~{e})", "b", "b"),
    ("({e}.astype(np.float64) * 0.5)", "fib", "f"),
    ("{e}.astype(np.float32)", "fib", "f"),
    ("{e}.astype(np.int64)", "fib", "i"),
    ("{e}.astype(np.int32)", "ib", "i"),
    ("{e}.astype(bool)", "fi", "b"),
    ("({e} - np.mean({e}))", "fib", "f"),
    ("({e} * {e}.max())", "fi", None),
    ("({e} + y[m2].sum())", "fi", "f"),
    ("np.where({e} > 0, {e}, 0.0)", "fi", "f"),
    ("scaled({e})", "fi", None),
]
REDUCTIONS = [
    ".sum()", ".prod()", ".max()", ".min()", ".any()", ".all()", ".mean()",
    "np.sum", "np.prod", "np.max", "np.min", "np.any", "np.all", "np.mean",
    ".sum(axis=0)", "np.max(%, initial=-100.0)", "len", "np.count_nonzero",
]  # fmt: skip


def _combine(kind_a: str, kind_b: str) -> str:
    return "f" if "f" in (kind_a, kind_b) else "i"


@st.composite
def selected(draw, mask: str | None = None, depth: int = 0) -> tuple[str, str]:
    """An expression whose value is the selected elements of a mask, and its kind."""
    mask = mask or draw(st.sampled_from(MASKS))
    source, kind = draw(st.sampled_from(SOURCES))
    text = source.format(m=mask)
    for _ in range(draw(st.integers(0, 3 if depth == 0 else 1))):
        if depth == 0 and draw(st.integers(0, 4)) == 0:  # with another selection
            other_mask = mask if draw(st.integers(0, 5)) else draw(st.sampled_from(MASKS))
            other, other_kind = draw(selected(other_mask, depth + 1))
            op = draw(st.sampled_from(["+", "*", "-"]))
            if kind == "b" or other_kind == "b":
                op = draw(st.sampled_from(["&", "|"])) if kind == other_kind else "+"
            text, kind = f"({text} {op} {other})", _combine(kind, other_kind)
            continue
        choices = [u for u in UNARY if kind in u[1] and ("{e}" not in u[0][5:] or len(text) < 40)]
        template, _, gives = draw(st.sampled_from(choices))
        text, kind = template.format(e=text), gives or kind
    return text, kind


@st.composite
def reduction(draw, operand: str | None = None) -> str:
    text = operand if operand is not None else draw(selected())[0]
    how = draw(st.sampled_from(REDUCTIONS))
    if how.startswith("."):
        return text + how
    if "%" in how:
        return how.replace("%", text)
    return f"{how}({text})"


# writes through views that the kernels do not make (externs): they reach the array
VIEW_WRITES = {
    "flip": "np.flip(x)[:1] = 5.0",
    "view": "x.view()[m] = -1.0",
    "asarray": "np.asarray(k)[m2] += 2",
}
WRITES = [
    "m[:2] = True",
    "m[:] = True",
    "m2[:] = False",
    "m = x > t",
    "m = m & m2",
    "m3 = ~m3",
    "x[m] = 0.0",
    "x[m] = x[m] * 0.5 + 1.0",
    "k[m] += 1",
    "k[m3] = k[m3] // 2",
    "y[m2] = y[m2] * 2.0 + x[m2]",
    "x *= 1.5",
    "y[:1] = -1.0",
    "t2 *= 2",
    "t2 = x[m]",
    "t2 = k[m2] * 2",
    "t2 = np.abs(y[m3]) + 1.0",
    "t2 = x[m] * s",
    "out = x[m] * 3",
    "out = t2 + 1",
    "sel = y[m2]\nout = sel * 3 + sel.sum()",
    "out = x[m][:2] * 1.0",
    "out = first(x[m])",
    "x[m] = x[m] - x[m].mean()",
    "x[m] += y[m] * 2.0",
    "k[m] -= k[m].min()",
    "y[m2] = x[m] * 2.0",
    "x[m2] = x[m].sum()",
    "store(y, m, x[m] * 2.0)",
    "s = s + total(x[m] * 2.0)",
    "x[rows] = x[rows] * 0.5 + 1.0",
    "k[rows] += 1",
    "rows[:1] = True",
    "if x.flat[0] > 0:\n    x[m] = 1.0\nelse:\n    m[:1] = False",
    "for j in range(2):\n    x[j] = 50.0",
    *VIEW_WRITES.values(),
]


@st.composite
def statement(draw) -> str:
    which = draw(st.integers(0, 9))
    if which < 4:  # a reduction of selections, into an accumulator
        target = draw(st.sampled_from(["s", "c", "r"]))
        return f"{target} = {target} + {draw(reduction())}"
    if which == 4:
        return f"b = b | {draw(reduction('(' + draw(selected())[0] + ' > 0.25)'))}"
    if which == 5:  # the kept selection reduced, after what came between
        return f"r = {draw(reduction(draw(st.sampled_from(['t2', '(t2 * 2.0)', 'np.abs(t2)']))))}"
    return draw(st.sampled_from(WRITES))


def program(body: list[str], looped: bool) -> str:
    text = "\n".join(body)
    if looped:
        text = "for i in range(2):\n" + textwrap.indent(text, "    ")
    return (
        "def prog(x, y, k, f, t):\n"
        "    m = x > t\n"
        "    m2 = y < 0.3\n"
        "    m3 = (x > 0) & (y > 0)\n"
        "    rows = x.reshape(x.shape[0], -1)[:, 0] > t\n"
        "    s = np.float64(0.0)\n"
        "    c = 0\n"
        "    b = False\n"
        "    r = np.float64(0.0)\n"
        "    t2 = y[m2]\n"
        "    out = x[m3] * 1.0\n"
        + textwrap.indent(text, "    ")
        + "\n    return s, c, b, r, t2, out, x, y, k, f, m, m2, m3, rows\n"
    )


programs = st.builds(program, st.lists(statement(), min_size=1, max_size=6), st.booleans())
straight_programs = st.builds(
    program, st.lists(statement(), min_size=1, max_size=6), st.just(False)
)


def total(v):
    return (v * 2.0).sum()


def scaled(v):
    return v * 3


def first(v):
    return v[:1]


def store(z, mask, v):
    z[mask] = v


def make(source: str):
    namespace = {"np": np, "total": total, "scaled": scaled, "first": first, "store": store}
    exec(compile(source, "<selection program>", "exec"), namespace)  # noqa: S102
    return namespace["prog"]


def arguments(seed: int, shape: tuple, t: float, special: bool) -> tuple:
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(shape), rng.random(shape)
    k = rng.integers(-6, 7, shape).astype(np.int32 if seed % 3 == 0 else np.int64)
    if special:  # NaN, infinities and signed zeros among the selected values
        x.flat[seed % x.size] = np.nan
        x.flat[(seed + 1) % x.size] = -0.0
        y.flat[(seed + 2) % y.size] = np.inf
    return x, y, k, x.astype(np.float32), t


# nothing selected by ``x > t``, everything, some
THRESHOLDS = (10.0, -10.0, 0.0, 0.5)


def calls(seed: int, shape: tuple, special: bool) -> list:
    return [(arguments(seed + n, shape, t, special), {}) for n, t in enumerate(THRESHOLDS)]


inputs = st.tuples(st.integers(0, 2**16), st.sampled_from([(8,), (4, 6)]), st.booleans())

# -- comparison within a tolerance ---------------------------------------------------------------


def assert_close(got, want, path: str, scaled: float | None) -> None:
    """``got`` is ``want`` up to float rounding: types, dtypes and shapes exactly, integers and
    bools exactly, float64 to 1e-12 relative (float32 1e-5); ``scaled`` (an epsilon): also to
    16 of it, or of the dtype's if larger, times the largest value (a sum in another order:
    Triton's float32 sums of float32 selections give float64 results float32's rounding)."""
    assert type(got) is type(want), f"{path}: type {type(got)} != {type(want)}"
    if isinstance(want, tuple | list):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{path}[{i}]", scaled)
        return
    if not isinstance(want, np.ndarray | np.generic | float):
        assert got == want, f"{path}: {got!r} != {want!r}"
        return
    want_a, got_a = np.asarray(want), np.asarray(got)
    assert (got_a.dtype, got_a.shape) == (want_a.dtype, want_a.shape), (
        f"{path}: {got_a.dtype}{got_a.shape} != {want_a.dtype}{want_a.shape}")  # fmt: skip
    if want_a.dtype.kind != "f":
        np.testing.assert_array_equal(got_a, want_a, err_msg=path)
        return
    rtol = 1e-12 if want_a.dtype.itemsize == 8 else 1e-5
    atol = 0.0
    if scaled is not None:
        finite = np.abs(want_a[np.isfinite(want_a)])
        eps = max(scaled, float(np.finfo(want_a.dtype).eps))
        atol = 16 * eps * max(1.0, float(finite.max()) if finite.size else 1.0)
    np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)


def _run(fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn(*args), None, caught
        except Exception as e:  # noqa: BLE001 (compared)
            return None, e, caught


def check_close(source: str, calls_: list, backend, scaled: float | None = None) -> None:
    """``prog`` compiled on ``backend`` against eager on each call (`assert_close`)."""
    fn = make(source)
    compiled = tc.compile(fn, backend=backend, fullgraph=False)
    for n, (args, _) in enumerate(calls_, start=1):
        eager_args, compiled_args = copy.deepcopy(args), copy.deepcopy(args)
        want, want_exc, _ = _run(fn, eager_args)
        got, got_exc, caught = _run(compiled, compiled_args)
        where = f"call {n} (t={args[-1]})"
        internal = [str(w.message) for w in caught if str(w.message).startswith("tcompile:")]
        assert not internal, f"{where}: {internal}"
        differs = f"{where}: exception differs\n  eager: {want_exc!r}\n  compiled: {got_exc!r}"
        assert (type(got_exc), str(got_exc)) == (type(want_exc), str(want_exc)), differs
        if want_exc is None:
            assert_close(got, want, f"{where}: result", scaled)
        assert_close(tuple(compiled_args), tuple(eager_args), f"{where}: args after", scaled)


def check_exact(source: str, calls_: list, backend="eager") -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # compared by check_same_calls on both sides
        check_same_calls(make(source), calls_, fullgraph=False, backend=backend)


# -- the tests ---------------------------------------------------------------------------------

needs_numba = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="the cpu backend needs numba"
)


@SETTINGS
@given(source=programs, case=inputs)
def test_random_selections_match_eager(source, case):
    note(source)
    check_exact(source, calls(*case))


@SETTINGS
@given(source=programs, case=inputs)
def test_random_selections_match_eager_with_sizes_from_data_off(source, case):
    """Without sizes from data, a read used up in its statement is a masked value (``where=``
    ufuncs); others break."""
    note(source)
    saved = tc.config.sizes_from_data
    tc.config.sizes_from_data = False
    try:
        check_exact(source, calls(*case))
    finally:
        tc.config.sizes_from_data = saved


@needs_numba
@SETTINGS
@given(source=programs, case=inputs)
def test_random_selections_match_eager_on_the_cpu_backend(source, case):
    note(source)
    check_close(source, calls(*case), "cpu")


@needs_numba
@SETTINGS
@given(source=programs, case=inputs)
def test_random_selections_match_eager_in_the_cpu_kernels(source, case):
    """The fused runtime called directly runs kernels at any size: chains of selections of one
    mask reduced under the mask."""
    from tcompile.backend.cpu.kernels import fused_backend

    note(source)
    # float32's transcendental functions in the kernels are a few ULP from NumPy's (vector
    # math, `vector_math.py`), which a float64 sum of them keeps: float32's rounding there
    float32 = "f[" in source or "float32" in source
    check_close(source, calls(*case), fused_backend,
                scaled=float(np.finfo(np.float32).eps) if float32 else None)  # fmt: skip


def _triton_ready() -> bool:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None:
        return False
    if "TRITON_INTERPRET" not in os.environ:  # as tests/triton/conftest.py: no GPU here
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    return True


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("triton") is None,
    reason="the Triton backend needs torch and triton",
)
@settings(SETTINGS, max_examples=max(5, EXAMPLES // 4))
@given(source=straight_programs, case=inputs)
def test_random_selections_match_eager_on_triton(source, case):
    assert _triton_ready()
    note(source)
    check_close(source, calls(*case)[:3], "triton", scaled=float(np.finfo(np.float32).eps))


def test_the_grammar_reduces_selections_in_one_graph():
    # not vacuous: a reduction of a chain of selections of one mask is captured, no break
    source = program(["s = s + (x[m] * 2.0 + 1.0).sum()", "c = c + (k[m] % 3).max()"], False)
    explained = tc.explain(make(source))(*arguments(0, (8,), 0.0, False))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained


@needs_numba
@pytest.mark.parametrize("write", list(VIEW_WRITES.values()), ids=list(VIEW_WRITES))
def test_a_write_through_a_view_between_a_selection_and_its_reduction_reaches_the_array(write):
    # the view is made outside the kernels (an extern step): a write through it must still
    # reach the array, and the selection made before it keeps the old values
    from tcompile.backend.cpu.kernels import fused_backend

    body = [
        "t2 = x[m]",
        write,
        "r = r + t2.max()",
        "c = c + np.sum(k[m] * 2)",
        "b = (x[m] > 0).any()",
    ]
    check_close(program(body, False), calls(0, (8,), False)[2:], fused_backend)
