"""The cpu backend's loop nodes, compiled whole by numba: NumPy's typing spelled out for numba
(NEP 50 scalars, small integers, Python ints that outgrow 64 bits), errors NumPy and Python
raise, the check of numba's types against the trace, the source shown, and the disk cache.

Every case compares the compiled call with the plain one (results, dtypes, errors, arguments
after the call) and says whether the loop ran as machine code: a case that passes only because
the loop ran as Python would test nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tcompile as tc

pytest.importorskip("numba", reason="the cpu backend needs numba: pip install 'tcompile[cpu]'")

from tcompile.backend.cpu import native_loops, numba_types  # noqa: E402
from tcompile.tracer.ir.node import TensorMeta  # noqa: E402


def same(fn, *make_args, calls: int = 3):
    """``fn`` plain and on the cpu backend on fresh arguments from each of ``make_args`` in
    turn, ``calls`` calls in all (the last builder repeats): equal results (same types, ints
    and bools bitwise, floats within 16 ulps), equal arguments after the call, equal errors."""
    compiled = tc.compile(fn, backend="cpu")
    for call in range(calls):
        make = make_args[min(call, len(make_args) - 1)]
        plain_args, cpu_args = make(), make()
        want, got = _outcome(fn, plain_args), _outcome(compiled, cpu_args)
        assert type(want) is type(got), (want, got)
        if isinstance(want, BaseException):
            assert str(want) == str(got)
        else:
            _assert_identical(got, want)
        _assert_identical(cpu_args, plain_args)


def _outcome(fn, args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return e


def _assert_identical(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_identical(g, w)
        return
    assert type(got) is type(want), (got, want)
    if isinstance(want, np.ndarray | np.generic):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        if want.dtype.kind in "fc":  # the backend's trade: sums in another order
            eps = 16 * np.finfo(want.dtype).eps
            np.testing.assert_allclose(got, want, rtol=eps, atol=eps, equal_nan=True)
        else:
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)
    else:
        assert got == want


def native(made) -> list[bool]:
    return [loop.dispatcher is not None for loop in made]


# -- NumPy's typing, spelled for numba ------------------------------------------------------------


def float32_recurrence(x):
    """NEP 50: a Python float meeting a float32 computes in float32 (numba: in float64)."""
    t = np.float32(1.0)
    for i in range(x.shape[0]):
        t = t * np.float32(0.5) + 0.1 + x[i]
        x[i] = t
    return t


def test_python_floats_meeting_float32_compute_in_float32(loops):
    same(float32_recurrence, lambda: (np.linspace(0, 1, 50, dtype=np.float32),))
    assert native(loops) == [True]
    assert "np.float32(0.1)" in loops[0].source


def float32_compared(x, out):
    """``f32 > 0.1`` compares in float32 (0.1 rounded to float32 first)."""
    for i in range(x.shape[0]):
        out[i] = x[i] > 0.1
    return out


def test_comparisons_with_python_floats_happen_in_the_arrays_type(loops):
    x = np.array([np.float32(0.1), np.float32(0.10000001), 0.2] * 5, dtype=np.float32)
    same(float32_compared, lambda: (x.copy(), np.zeros(x.shape, bool)))
    assert native(loops) == [True]


def int8_wraps(x):
    s = np.int8(100)
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


@pytest.mark.filterwarnings("ignore:overflow encountered in scalar:RuntimeWarning")
def test_small_integers_wrap_around_as_numpy_s_do(loops):
    same(int8_wraps, lambda: (np.arange(40, dtype=np.int8),))
    assert native(loops) == [True]


def uint8_minus_index(x):
    for i in range(x.shape[0]):
        x[i] = x[i] - np.uint8(3)
    return x


@pytest.mark.filterwarnings("ignore:overflow encountered in scalar:RuntimeWarning")
def test_unsigned_integers_wrap_below_zero(loops):
    same(uint8_minus_index, lambda: (np.arange(20, dtype=np.uint8),))
    assert native(loops) == [True]


def floor_and_mod(a, b, out):
    for i in range(a.shape[0]):
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
    return out


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_floor_division_and_remainder_take_the_divisors_sign(loops, dtype):
    a = np.array([7, -7, 7, -7, 0, 5], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, 5], dtype=dtype)
    same(floor_and_mod, lambda: (a.copy(), b.copy(), np.zeros((6, 2), dtype)))
    assert native(loops) == [True]


def nan_aware(a, b, out):
    for i in range(a.shape[0]):
        out[i, 0] = np.maximum(a[i], b[i])
        out[i, 1] = np.fmax(a[i], b[i])
    return out


def test_maximum_propagates_nan_and_fmax_does_not(loops):
    a = np.array([1.0, np.nan, 3.0, np.nan])
    b = np.array([np.nan, 2.0, 1.0, np.nan])
    same(nan_aware, lambda: (a.copy(), b.copy(), np.zeros((4, 2))))
    assert native(loops) == [True]


# -- Python ints and errors ------------------------------------------------------------------------


def factorial_and_fill(x, n):
    p = 1
    for i in range(1, n):
        p = p * i
        x[i] = x[i - 1] + 1.0
    return p, x


@pytest.mark.parametrize("n", [10, 30])
def test_python_ints_that_outgrow_64_bits_are_exact(loops, n):
    """29! does not fit an int64: the machine code raises OverflowError, its writes are undone
    and the loop runs as Python."""
    same(factorial_and_fill, lambda: (np.zeros(40), n))
    assert native(loops) == [True]
    assert "_int_mul(p, i)" in loops[0].source


def divide_by_index_offset(x, k):
    s = 0
    for i in range(x.shape[0]):
        s = s + i // k
        x[i] = s
    return s


def test_a_zero_python_divisor_raises_python_s_error(loops):
    same(divide_by_index_offset, lambda: (np.zeros(6), 3), lambda: (np.zeros(6), 0))


def gather_from(v, idx):
    out = np.zeros_like(v)
    for i in range(v.shape[0]):
        out[i] = v[i] + v[idx[i]]
    return out


@pytest.mark.parametrize("bad", [9, -9])
def test_an_index_out_of_range_raises_numpy_s_error(loops, bad):
    same(gather_from, lambda: (np.arange(5.0), np.array([4, 3, -1, 1, 0])),
         lambda: (np.arange(5.0), np.array([4, 3, bad, 1, 0])))  # fmt: skip
    assert native(loops) == [True]
    # the index read from data is checked where it is used, not by numba's boundscheck
    assert "_at(" in "\n".join(loops[0].lines) and not loops[0].boundscheck


def pick_columns(a, cols):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = a[i, cols[i]] + a[i, -1]
    return out


@pytest.mark.parametrize("bad", [3, -4])
def test_an_index_from_data_is_checked_where_the_counter_s_are_checked_per_call(loops, bad):
    """``a[i, cols[i]]``: the row checked once per call, the column at each access."""
    a = np.arange(12.0).reshape(4, 3)
    same(pick_columns, lambda: (a, np.array([0, 2, -3, 1])), lambda: (a, np.array([0, bad, 1, 1])))
    assert native(loops) == [True] and loops[0].index_checks and not loops[0].boundscheck
    assert "_at(cols_item, a.shape[1])" in "\n".join(loops[0].lines)


def shifted(v, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = v[i + 1]
    return out


def test_indices_affine_in_the_counter_are_checked_once_per_call(loops):
    """No per-access bounds check in the machine code: the call checks the first and last
    index (at a trip count that runs past the end, NumPy raises its own error)."""
    v = np.arange(10.0)
    same(shifted, *[lambda n=n: (v.copy(), n) for n in (3, 5, 9, 7, 10)], calls=5)
    assert all(loop.dispatcher is not None and loop.index_checks for loop in loops)
    assert not per_access_checks(loops[-1])


def per_access_checks(loop) -> bool:
    return loop.boundscheck or "_at(" in "\n".join(loop.lines)


def backward(dp, cp):
    x = np.empty_like(dp)
    x[-1] = dp[-1]
    for i in range(dp.shape[0] - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


def test_a_loop_running_backwards_is_checked_at_both_ends(loops):
    same(backward, lambda: (np.linspace(1, 2, 30), np.linspace(0, 0.5, 30)))
    assert native(loops) == [True] and not per_access_checks(loops[0])


def writes_then_fails(v, idx):
    for i in range(v.shape[0]):
        v[i] = v[i] * 2.0 + v[idx[i]]
    return v


def test_a_loop_that_fails_midway_leaves_the_caller_s_arrays_as_eager_code_does(loops):
    """The glue undoes the machine code's writes into an input, then runs the frame eagerly:
    the arrays end as NumPy's own run leaves them."""
    same(writes_then_fails, lambda: (np.arange(6.0), np.array([0, 1, 2, 3, 4, 5])),
         lambda: (np.arange(6.0), np.array([0, 1, 2, 9, 4, 5])))  # fmt: skip
    assert native(loops) == [True]


def row_sums(indptr, values, x):
    """Rows of a CSR matrix, each a loop from data: ``values[j]`` is checked before each row's
    loop runs, ``x[2 * j + 1]`` too (the gather by data, ``x[indices[j]]``, where it is used)."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            total += values[j] * x[2 * j + 1] - x[2 * j]
        y[i] = total
    return y


def _rows(*bounds):
    return lambda: (np.array(bounds, dtype=np.int64), np.arange(1.0, 6.0), np.arange(10.0) ** 2)


@pytest.mark.parametrize("bad", [(0, 2, 6), (0, 4, 3, 5), (-6, 0, 2)])
def test_a_loop_inside_the_loop_checks_its_indices_before_it_runs(loops, bad):
    """Rows past the end, and below NumPy's ``-n``, raise NumPy's error; negative rows wrap as
    NumPy's do; an empty row reads nothing, wherever it points."""
    same(row_sums, _rows(0, 2, 5), _rows(-3, 0, 2, 2, 9, 9), _rows(*bad), calls=3)
    assert native(loops) == [True]
    text = "\n".join(loops[0].lines)
    assert text.count("_span_at(") == 2 and "_at(j" not in text and "_int_add(k" not in text


def sqrt_steps(x):
    for i in range(x.shape[0]):
        x[i] = np.sqrt(x[i] - 2.0)
    return x


def test_errstate_raise_gets_numpy_s_floating_point_error(loops):
    compiled = tc.compile(sqrt_steps, backend="cpu")
    compiled(np.arange(3.0, 8.0))  # compiled, native, no error
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value encountered in sqrt"):
            compiled(np.arange(5.0))
    assert native(loops) == [True]


def histogram_batches(samples, bins_of, nbins):
    hist = np.zeros(nbins)
    counts = np.zeros(nbins, dtype=np.int64)
    for i in range(samples.shape[0]):
        np.add.at(hist, bins_of[i], samples[i])
        np.add.at(counts, bins_of[i], 1)
    return hist, counts


def test_add_at_adds_repeated_and_negative_indices_in_order_and_raises_out_of_range(loops):
    rng = np.random.default_rng(3)
    samples, bins = rng.random((5, 30)), rng.integers(-8, 8, (5, 30))
    wild = bins.copy()
    wild[3, 7] = 8
    same(histogram_batches, lambda: (samples.copy(), bins, 8), lambda: (samples.copy(), wild, 8))
    assert native(loops) == [True] and "_add_at(counts, " in loops[0].source


def quiet_logs(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        with np.errstate(invalid="ignore", divide="ignore"):
            out[i] = np.log(x[i])
    return out


def loud_logs(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        with np.errstate(invalid="raise"):
            out[i] = np.log(x[i])
    return out


def test_errstate_in_a_body_compiles_where_it_ignores_and_not_where_it_raises(loops):
    values = lambda: (np.array([1.0, 0.0, -1.0, 2.0]),)  # noqa: E731
    same(quiet_logs, values)
    same(loud_logs, lambda: (np.array([1.0, 2.0]),), lambda: (np.array([1.0, -1.0]),))
    assert native(loops) == [True, False] and "raises" in loops[1].reason


# -- the check against the trace, the source, the Kernels tab ---------------------------------------


def test_numba_typing_that_differs_from_the_trace_is_named():
    """numba's typemap against the trace's metas: every version of a variable is compared."""
    from numba.core import types

    metas = {"t": TensorMeta.of(np.float32(1)), "i": TensorMeta.of(1),
             "a": TensorMeta.of(np.zeros(3, np.int8))}  # fmt: skip
    typemap = {"t": types.float32, "t.1": types.float64, "i": types.int64,
               "a": types.Array(types.int8, 1, "C"), "$tmp": types.float64}  # fmt: skip
    assert numba_types.mismatches(typemap, metas) == [
        "t.1: numba types it float64, NumPy gives np.float32"
    ]
    typemap["a"] = types.Array(types.int64, 1, "C")
    assert len(numba_types.mismatches(typemap, metas)) == 2
    # a C array where NumPy made an F one: the layout counts where both know it
    fortran = {"f": TensorMeta.of(np.asfortranarray(np.ones((2, 3))))}
    assert numba_types.mismatches({"f": types.Array(types.float64, 2, "C")}, fortran)
    assert not numba_types.mismatches({"f": types.Array(types.float64, 2, "F")}, fortran)
    assert not numba_types.mismatches({"f": types.Array(types.float64, 2, "A")}, fortran)


def total_of_blocks(m):
    out = np.empty(m.shape[0])
    for i in range(m.shape[0]):
        out[i] = np.sum(m[i])
    return out


@pytest.mark.parametrize(("cols", "compiled"), [(4, True), (250, False)])
def test_float_sums_of_matrices_compile_only_where_numba_s_order_rounds_as_numpy_s(
    loops, cols, compiled
):
    """numba adds in order, NumPy pairwise: alike for a few elements, parting beyond (a
    vector's sum is NumPy's own pairwise one, below)."""
    same(total_of_blocks, lambda: (np.random.default_rng(5).random((4, 4, cols)),))
    assert native(loops) == [compiled]
    if not compiled:
        assert "pairwise" in loops[0].reason


def einsum_rows(a, b):
    out = np.empty(b.shape[0])
    for i in range(b.shape[0]):
        out[i] = np.einsum("i,i->", a[i], b[i])
    return out


def test_a_loop_numba_cannot_compile_runs_as_python_and_says_why(loops):
    same(einsum_rows, lambda: (np.ones((4, 3)), np.ones((4, 3))), calls=2)
    assert native(loops) == [False] and loops[0].reason
    assert "runs as Python" in loops[0].info().notes[0]


def test_the_native_source_carries_the_user_s_lines_and_shows_in_the_report(loops):
    x = np.linspace(0, 1, 20, dtype=np.float32)
    explained = tc.explain(float32_recurrence, backend="cpu")(x)
    compiled = explained.reports[0].compiled
    source = compiled.sources["native loops"]
    assert "@numba.njit(" in source and "def _loop_fn(" in source
    assert "test_native_loops.py:" in source and "in float32_recurrence" in source
    (info,) = compiled.details
    assert info.kind == "native loop" and info.notes == (native_loops.NATIVE_NOTE,)
    assert any("t = t * np.float32(0.5) + 0.1 + x[i]" in line for line in info.lines)


SMOOTH = """\
def smooth(v):
    out = v.copy()
    for i in range(1, v.shape[0] - 1):
        out[i] = (v[i - 1] + v[i] + v[i + 1]) / 3
    return out
"""


def test_the_cell_magic_shows_the_native_loop_in_the_kernels_tab(shell, tmp_path, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    from tcompile.widgets.kernels_tab import kernels_html

    monkeypatch.setenv("TCOMPILE_CACHE_DIR", str(tmp_path))
    shell.run_cell("import numpy as np")
    body = SMOOTH + "smooth(np.arange(10.0)).sum()\n"
    result = shell.run_cell("%%tcompile --backend cpu\n" + body)
    assert result.success and result.result == pytest.approx(45.0)
    magics = InteractiveShell.instance().magics_manager.registry["TcompileMagics"]
    page = kernels_html(magics.last_widget.run)
    assert "compiled whole by numba" in page and "numba.njit" in page


def scaled_by(c):
    def spin(z, n):
        for _ in range(n):
            z = z * c + 1.0
        return z

    return spin


def test_loops_printed_alike_around_other_constants_keep_their_own(loops):
    """A complex constant is bound, not printed: two graphs print the same text around
    different values, and each loop computes with its own (no module, no cache shared)."""
    first, second = scaled_by(0.5 + 0.25j), scaled_by(0.25 - 1j)
    same(first, lambda: (np.complex128(1 + 2j), 5))
    same(second, lambda: (np.complex128(1 + 2j), 5))
    assert native(loops) == [True, True] and loops[0].source == loops[1].source


def casts_in_a_loop(x):
    counts = np.zeros(x.shape[0], np.uint64)
    small = np.empty(x.shape[0], np.int8)
    for i in range(x.shape[0]):
        small[i] = np.int8(x[i] * 2.0)  # through int32, as NumPy: 255.5 -> -1
    wide = np.zeros(x.shape[0], np.int64)
    for step in range(2):
        counts = counts + (x * (step + 1)).astype(np.uint64)
        wide = wide + np.asarray(x * step, dtype=np.int64) + np.array(x, dtype=np.uint8)
    return counts, small, wide, np.uint32(x[0])


def test_floats_cast_to_integers_in_a_loop_are_numpys_and_past_the_bounds_run_as_python(loops):
    """Within the bounds a float converts in machine code as NumPy converts it (a negative
    one into an unsigned type wraps); NaN, infinities and 1e30 raise there, and the loop runs
    as Python, where NumPy gives the machine's values."""

    def inside():
        return (np.abs(np.random.default_rng(5).standard_normal(500)) * 200.0,)

    def outside():
        x = np.random.default_rng(6).standard_normal(500) * 200.0
        x[::7], x[3::11], x[5::13], x[6::17] = np.nan, np.inf, 1e30, -3e9
        return (x,)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "invalid value in cast"
        same(casts_in_a_loop, inside, outside, inside, calls=3)
    assert native(loops) == [True, True]
    assert "_within(" in loops[0].source and "_all_within(" in loops[1].source


# -- the disk cache ---------------------------------------------------------------------------------

CHILD = f"""
import time, numpy as np, numba, tcompile as tc
from tcompile.backend.cpu import native_loops

{SMOOTH}
made = []
real = native_loops.NativeLoop.__init__
native_loops.NativeLoop.__init__ = lambda self, *a: (real(self, *a), made.append(self))[0]
compiled = tc.compile(smooth, backend="cpu")
compiled(np.arange(10.0))  # while numba starts, the NumPy code runs (while_starting.py)
compiled(np.arange(10.0))
(loop,) = made
print(loop.dispatcher is not None, sum(loop.dispatcher.stats.cache_hits.values()))
"""


def test_a_second_process_takes_the_machine_code_from_the_disk_cache(tmp_path):
    env = dict(os.environ, TCOMPILE_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]  # fmt: skip
    assert runs == [["True", "0"], ["True", "1"]]
    (checked,) = (tmp_path / "cpu").glob("*.checked.json")
    # machine code in numba's cache whose check was lost (a process stopped in between): the
    # function is typed anew, past the cache, and checked
    checked.unlink()
    again = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                           text=True, check=True).stdout.split()  # fmt: skip
    assert again == ["True", "1"] and checked.exists()


# -- slice assignment ------------------------------------------------------------------------------


def shifts_and_fills(a, row, steps):
    """Slice assignments of arrays: from an overlapping view of the target itself, both ways,
    broadcast from a row, into a reversed slice, into an empty slice, in 3-D."""
    for _ in range(steps):
        a[1:, :] = a[:-1, :]  # overlaps: NumPy reads all of the source first
        a[:-1, 1:] = a[1:, :-1] * 0.5
        a[1:-1, 1:-1] = row[1:-1]  # broadcast along the rows
        a[::-1, 0] = a[:, 1]  # a reversed slice from an overlapping column
        a[3:3, :] = a[:0, :]  # empty: nothing stored
    return a


def test_slice_assignments_store_as_numpy_does(loops):
    a, row = np.random.default_rng(3).standard_normal((2, 7, 5))
    same(shifts_and_fills, lambda: (a.copy(), row[0].copy(), 3))
    assert native(loops) == [True]
    assert loops[0].source.count("_assign(") == 5  # the helper, and each store by slices alone


def cube_steps(c, steps):
    for _ in range(steps):
        c[1:, 1:, :] = c[:-1, :-1, :] + c[1:, 1:, :]
    return c


def test_slice_assignments_in_three_dimensions(loops):
    same(cube_steps, lambda: (np.arange(60.0).reshape(3, 4, 5), 4))
    assert native(loops) == [True]


# -- float dot products and sums of vectors ----------------------------------------------------


def dot_forms(a, m, out):
    """Each spelling of a vector's dot product, over slices that grow with ``i`` (the first
    empty), reversed and strided (a column of ``m``)."""
    for i in range(a.shape[0]):
        out[i, 0] = np.dot(a[:i], m[:i, i])
        out[i, 1] = a[i:] @ m[i, i:]
        out[i, 2] = np.inner(a[i::-1], m[i, : i + 1])
        out[i, 3] = np.vdot(a[:i][::-1], m[i, :i])
        out[i, 4] = a[:i].dot(m[i, ::-1][:i])
        out[i, 5] = np.matmul(m[:i, 0], a[:i])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_products_of_vectors_of_any_size_compile_within_tolerance(loops, dtype):
    """NumPy's BLAS adds in an order no loop reproduces: 8 partial sums, within tolerance."""
    rng = np.random.default_rng(21)
    a, m = rng.random(300).astype(dtype), rng.random((300, 300)).astype(dtype)
    same(dot_forms, lambda: (a.copy(), m.copy(), np.zeros((300, 6), dtype)), calls=2)
    assert native(loops) == [True] and loops[0].source.count("= _dot(") == 6


def csr_rows(indptr, starts, values, x, y):
    """``y = A @ x`` a row at a time, each row's bounds from data: ``values[indptr[i]:
    indptr[i + 1]]`` against as long a piece of ``x`` from ``starts[i]``."""
    for i in range(indptr.shape[0] - 1):
        start, stop = indptr[i], indptr[i + 1]
        first = starts[i]
        y[i] = values[start:stop] @ x[first : first + stop - start]
    return y


def csr_case(dtype, mismatch: bool = False):
    rng = np.random.default_rng(22)
    per_row = rng.poisson(40.0, 50)  # some rows long, some empty
    per_row[[3, 17]] = 0
    indptr = np.concatenate([[0], np.cumsum(per_row)])
    starts = rng.integers(0, 100, 50)
    if mismatch:  # row 30 runs past x's end: a shorter piece of x than of values
        starts[30] = 199 - per_row[30] // 2
    values, x = rng.random(indptr[-1]).astype(dtype), rng.random(200).astype(dtype)
    return lambda: (indptr, starts, values, x, np.full(50, -1.0, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_products_over_bounds_from_data_raise_numpy_s_error_where_lengths_differ(loops, dtype):
    """Lengths known only at run time: where they differ, the machine code raises, its writes
    are undone and the frame runs as NumPy, which raises its own error to the user."""
    good, bad = csr_case(dtype), csr_case(dtype, mismatch=True)
    same(csr_rows, good, good, bad, good)
    assert native(loops) == [True] and "_dot(" in loops[0].source
    with pytest.raises(ValueError, match="matmul: Input operand 1 has a mismatch"):
        tc.compile(csr_rows, backend="cpu")(*bad())


def sums_and_means(v, m, out):
    """Sums and means of vectors: growing and shrinking slices (the first sum empty), a
    strided column, a reversed slice, every spelling."""
    for i in range(m.shape[0]):
        out[i, 0] = np.sum(v[:i])
        out[i, 1] = v[i:].sum()
        out[i, 2] = m[:, i].sum(axis=0)
        out[i, 3] = np.sum(v[::-3][i:], axis=-1)
        out[i, 4] = np.mean(v[: i + 1])
        out[i, 5] = m[i, i::-1].mean()
    return out


def assert_bitwise(fn, *args):
    """The second call runs the loop node (the first runs the trace): NumPy's bytes."""
    compiled, want = tc.compile(fn, backend="cpu"), fn(*[a.copy() for a in args])
    for _ in range(2):
        got = compiled(*[a.copy() for a in args])
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_and_means_of_vectors_are_numpy_s_bit_for_bit(loops, dtype):
    """NumPy's pairwise order, started from +0.0; a float32 mean divided in float64."""
    rng = np.random.default_rng(23)
    v = (rng.standard_normal(3000) * 10.0 ** rng.uniform(-3, 3, 3000)).astype(dtype)
    m = rng.standard_normal((300, 300)).astype(dtype)
    assert_bitwise(sums_and_means, v, m, np.zeros((300, 6), dtype))
    same(sums_and_means, lambda: (v.copy(), m.copy(), np.zeros((300, 6), dtype)), calls=1)
    assert native(loops) == [True, True] and loops[0].source.count("= _sum(") == 4
    # a sum of -0.0s is +0.0
    assert_bitwise(sums_and_means, -np.zeros(40, dtype), -np.zeros((9, 9), dtype),
                   np.ones((9, 6), dtype))  # fmt: skip


def means_from(v, starts, out):
    for i in range(starts.shape[0]):
        out[i] = np.mean(v[starts[i] :])
    return out


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_the_mean_of_an_empty_vector_warns_and_gives_nan_as_numpy_s(loops):
    """The machine code raises for it, and the frame runs as NumPy: its warning, its NaN."""
    v, compiled = np.arange(10.0), tc.compile(means_from, backend="cpu")
    for _ in range(2):  # the trace, then the loop node
        fine = compiled(v, np.array([0, 5, 9]), np.zeros(3))
        assert fine.tobytes() == means_from(v, np.array([0, 5, 9]), np.zeros(3)).tobytes()
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = compiled(v, np.array([0, 10, 9]), np.zeros(3))
    assert np.isnan(got[1]) and got[2] == 9.0 and native(loops) == [True]


def mixed_and_complex(a, b, c, out):
    for i in range(a.shape[0]):
        out[i, 0] = np.dot(a[i], b[i])  # float32 with float64
        out[i, 1] = np.dot(c[i], c[i]).real
        out[i, 2] = np.sum(a[i], dtype=np.float64)
    return out


def test_mixed_dtypes_complex_vectors_and_sums_with_a_dtype_are_not_compiled(loops):
    rng = np.random.default_rng(24)
    a, b = rng.random((3, 200)).astype(np.float32), rng.random((3, 200))
    c = rng.random((3, 200)) + 1j * rng.random((3, 200))
    same(mixed_and_complex, lambda: (a, b, c, np.zeros((3, 3))), calls=1)
    assert native(loops) == [False] and "floats" in loops[0].reason


# Kernels of the benchmark corpus whose dot products kept them Python before (bench/README.md).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import loop_kernels  # noqa: E402


@pytest.mark.parametrize("name", ["levinson", "cholesky", "lu", "spmv"])
def test_benchmark_kernels_with_dot_products_run_as_machine_code(loops, name):
    (kernel,) = [k for k in loop_kernels.KERNELS if k.name == name]
    trips = 2 * kernel.quick_trips
    same(kernel.fn, lambda: tuple(np.copy(a) for a in kernel.setup(trips)), calls=2)
    assert loops and all(native(loops))
