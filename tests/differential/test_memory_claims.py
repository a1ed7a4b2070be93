"""What the NumPy table claims about memory, proven rather than trusted, and the memory plan
that relies on it.

`numpy_table.returns_new_memory` says which operations give an array of their own (never a
view of an argument); the eager backend's memory plan (backend/memory_plan.py) lets an
element-wise ufunc write into an operand that dies there only when every other user of that
operand makes new memory. A wrong claim lets the plan overwrite memory a view still shows:
``v = np.einsum("ij->ji", t); u = np.exp(t)`` became ``np.exp(t, out=t)`` and changed ``v``.

The audit runs every claimed operation (found from the table itself) over argument variants
(layouts, 0-d and size-1 arrays, scalars, empty axes, one operand or several) and checks
`np.shares_memory` against every argument; operations that can return a view must not be
claimed. The differential cases keep a view of a temporary that a ufunc consumes last.
"""

from __future__ import annotations

import operator
import types
import warnings

import numpy as np
import pytest
from diffharness import C, case_id

from tcompile.tracer.ir import numpy_table

# -- the audit ----------------------------------------------------------------------------------


def _table_candidates() -> list:
    """Every callable the table may be asked about: NumPy's namespaces, ndarray's methods
    (graphs hold them as ``np.ndarray.<name>``), operators, and ``**`` (the memory plan takes
    its results as fresh buffers too)."""
    found: dict[int, object] = {}
    for module in (np, np.linalg, np.fft):
        for name in dir(module):
            obj = getattr(module, name, None)
            if callable(obj) and not isinstance(obj, type):
                found.setdefault(id(obj), obj)
    for name in dir(np.ndarray):
        descriptor = getattr(np.ndarray, name)
        if isinstance(descriptor, types.MethodDescriptorType):
            found.setdefault(id(descriptor), descriptor)
    for name in dir(operator):
        fn = getattr(operator, name)
        if callable(fn):
            found.setdefault(id(fn), fn)
    return list(found.values())


CLAIMED = [fn for fn in _table_candidates() if numpy_table.returns_new_memory("call", fn)]
FRESH_BUFFERS = [operator.pow]  # backend/memory_plan.py `_owns_its_buffer`: ``x ** e`` results


def _arrays() -> list:
    """Arrays of every layout a claim must hold for."""
    m = np.arange(1.0, 7.0).reshape(2, 3)
    return [m, m.T, np.arange(1.0, 9.0)[::2], np.array(2.5), np.ones((1, 1)),
            np.ones((2, 1, 3)), np.zeros((0, 3)), np.float64(1.5), np.asfortranarray(m)]  # fmt: skip


def _reduction_calls():
    for a in _arrays():
        yield (a,), {}
        yield (a,), {"axis": ()}
        yield (a,), {"axis": (), "keepdims": True}
        yield (a,), {"axis": 0}
        yield (a,), {"axis": -1, "keepdims": True}
        yield (a,), {"keepdims": True}


def _scan_calls():
    for a in _arrays():
        yield (a,), {}
        yield (a,), {"axis": 0}
        yield (a,), {"axis": -1}


def _product_calls():
    m, v = np.arange(1.0, 5.0).reshape(2, 2), np.arange(1.0, 3.0)
    for a, b in [(m, m), (m, m.T), (v, v), (m, v), (v, m), (np.array(2.0), m), (m, np.array(2.0)),
                 (np.float64(3.0), v), (v, 2.0), (np.ones((1, 1)), np.ones((1, 1))),
                 (np.ones((2, 1, 2)), m)]:  # fmt: skip
        yield (a, b), {}


def _tensordot_calls():
    for args, _ in _product_calls():
        for axes in (0, 1):
            yield args, {"axes": axes}
    m = np.arange(1.0, 5.0).reshape(2, 2)
    yield (m, m), {"axes": 2}
    yield (m, m), {"axes": ([0, 1], [1, 0])}


def _where_calls():
    for a in _arrays():
        cond = np.asarray(a) > 2
        yield (cond, a, 0.0), {}
        yield (cond, a, a), {}
        yield (True, a, a), {}
        yield (np.bool_(False), 1.0, a), {}


def _clip_calls():
    for a in _arrays():
        yield (a, 0.0, 2.0), {}
        yield (a, None, 2.0), {}
        yield (a, a, a), {}
        yield (a, -np.inf, np.inf), {}


def _join_calls():
    for a in _arrays():
        if np.ndim(a):
            yield ([a],), {}
            yield ([a, a],), {}
            yield ((a,),), {"axis": -1}
            yield ([a],), {"axis": None}


def _stack_calls():
    for a in _arrays():
        yield ([a],), {}
        yield ([a, a],), {"axis": -1}


def _copy_calls():
    for a in _arrays():
        for order in ("K", "A", "C", "F"):
            yield (a,), {"order": order}


def _method_calls():
    for a in _arrays():
        if isinstance(a, np.ndarray):
            yield (a,), {}
            yield (a,), {"order": "F"}
            yield (a,), {"order": "K"}


def _power_calls():
    for a in _arrays():
        for exponent in (1, 2, 0, -1, 0.5, 1.0, 3, np.int64(1), np.float64(1.0), 2.0):
            yield (a, exponent), {}
        yield (2.0, a), {}
        yield (a, a), {}
    yield (np.arange(1, 7).reshape(2, 3), 1), {}  # integers: the fast paths of ``**``


def _ufunc_dtypes(ufunc: np.ufunc) -> list[np.dtype] | None:
    """Input dtypes ``ufunc`` has a loop for: numeric ones, else datetimes."""
    for kinds in ("?bBhHiIlLqQefdgFDG", "Mm"):
        for signature in ufunc.types:
            inputs = signature.split("->")[0]
            if all(c in kinds for c in inputs):
                return [np.dtype(c + ("8[s]" if c in "Mm" else "")) for c in inputs]
    return None


def _as(a, dtype: np.dtype):
    a = np.asarray(a).astype(np.int64 if dtype.kind in "Mm" else dtype).astype(dtype)
    return a if a.ndim else a[()]


def _ufunc_calls(ufunc: np.ufunc):
    dtypes = _ufunc_dtypes(ufunc)
    if dtypes is None:
        return
    for a in _arrays():
        operands = tuple(_as(a, dtype) for dtype in dtypes)
        yield operands, {}
        if ufunc.nin == 2 and np.ndim(a):
            yield (operands[0], operands[1][..., :1]), {}  # broadcasting
            yield (operands[0].dtype.type(1), operands[1]), {}  # a NumPy scalar and an array
        if len(set(dtypes)) == 1:
            yield operands, {"dtype": dtypes[0]}


def _like_calls():
    for a in _arrays():
        yield (a,), {}
        yield (a,), {"dtype": np.int32}
        yield (a,), {"order": "F"}


def _full_like_calls():
    for (a,), kwargs in _like_calls():
        yield (a, 7.0), kwargs


def _sort_calls():
    for a in _arrays():
        yield (a,), {}
        yield (a,), {"axis": 0}
        yield (a,), {"axis": None}
        yield (a,), {"kind": "stable"}


def _tile_calls():
    for a in _arrays():
        for reps in (1, 2, (1, 1), (2, 1), 0):
            yield (a, reps), {}


def _repeat_calls():
    for a in _arrays():
        yield (a, 1), {}
        yield (a, 2), {"axis": 0}
        yield (a, 1), {"axis": -1}


def _roll_calls():
    for a in _arrays():
        yield (a, 0), {}
        yield (a, 1), {"axis": 0}
        yield (a, (1, 0)), {"axis": (0, -1)}


def _pad_calls():
    for a in _arrays():
        yield (a, 0), {}
        yield (a, 1), {"mode": "wrap"}
        yield (a, 1), {"mode": "edge"}


_CALLS = {
    **{id(f): _reduction_calls for f in numpy_table.REDUCTIONS},
    **{id(f): _scan_calls for f in numpy_table.SCANS},
    **{id(f): _product_calls for f in (np.matmul, np.dot, np.inner, np.vdot, np.outer)},
    id(np.tensordot): _tensordot_calls,
    id(np.where): _where_calls,
    id(np.clip): _clip_calls,
    id(np.concatenate): _join_calls,
    id(np.stack): _stack_calls,
    id(np.copy): _copy_calls,
    id(np.ndarray.copy): _method_calls,
    id(np.ndarray.flatten): _method_calls,
    id(operator.pow): _power_calls,
    **{id(f): _like_calls for f in (np.zeros_like, np.ones_like, np.empty_like)},
    id(np.full_like): _full_like_calls,
    **{id(f): _sort_calls for f in (np.sort, np.argsort)},
    id(np.tile): _tile_calls,
    id(np.repeat): _repeat_calls,
    id(np.roll): _roll_calls,
    id(np.pad): _pad_calls,
}


def _variants(fn) -> list:
    if numpy_table.elementwise_ufunc(fn) is not None:
        return list(_ufunc_calls(fn))
    make = _CALLS.get(id(fn))
    return list(make()) if make is not None else []


def _array_leaves(obj) -> list:
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [a for item in obj for a in _array_leaves(item)]
    if isinstance(obj, dict):
        return _array_leaves(list(obj.values()))
    return []


def _name(fn) -> str:
    owner = getattr(fn, "__objclass__", None)
    name = getattr(fn, "__name__", repr(fn))
    return f"{owner.__name__}.{name}" if owner is not None else name


@pytest.mark.parametrize("fn", CLAIMED + FRESH_BUFFERS, ids=_name)
def test_a_new_memory_claim_holds_over_argument_variants(fn):
    calls = _variants(fn)
    assert calls, f"{_name(fn)} is claimed to make new memory: give it variants to prove it"
    ran = 0
    for args, kwargs in calls:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = fn(*args, **kwargs)
        except (TypeError, ValueError, IndexError):
            continue  # arguments this operation does not take
        ran += 1
        for made in _array_leaves(result):
            for argument in _array_leaves((args, kwargs)):
                assert not np.shares_memory(made, argument), (
                    f"{_name(fn)}(*{args!r}, **{kwargs!r}) returns a view of its argument"
                )
    assert ran >= 3, f"only {ran} variants of {_name(fn)} ran"


def _square() -> np.ndarray:
    return np.arange(4.0).reshape(2, 2)


# Operations that give back (a view of) their argument for some arguments: never new memory.
VIEW_MAKERS = [
    ("einsum_transpose", np.einsum, ("ij->ji", _square()), {}),
    ("einsum_diagonal", np.einsum, ("ii->i", _square()), {}),
    ("einsum_identity", np.einsum, ("i->i", np.arange(3.0)), {}),
    ("einsum_implicit", np.einsum, ("ij", _square()), {}),
    ("einsum_ellipsis", np.einsum, ("...", _square()), {}),
    ("einsum_optimized", np.einsum, ("ij->ji", _square()), {"optimize": True}),
    ("asarray", np.asarray, (_square(),), {}),
    ("asanyarray", np.asanyarray, (_square(),), {}),
    ("ascontiguousarray", np.ascontiguousarray, (_square(),), {}),
    ("asfortranarray", np.asfortranarray, (_square().T,), {}),
    ("array_copy_false", np.array, (_square(),), {"copy": False}),
    ("array_copy_none", np.array, (_square(),), {"copy": None}),
    ("astype_copy_false", np.ndarray.astype, (_square(), np.float64), {"copy": False}),
    ("reshape", np.reshape, (_square(), (4,)), {}),
    ("ravel", np.ravel, (_square(),), {}),
    ("squeeze", np.squeeze, (np.ones((1, 3)),), {}),
    ("real", np.real, (_square(),), {}),
    ("imag_of_complex", np.imag, (_square() * 1j,), {}),
    ("diagonal", np.diagonal, (_square(),), {}),
    ("diag_of_matrix", np.diag, (_square(),), {}),
    ("transpose", np.transpose, (_square(),), {}),
    ("broadcast_to", np.broadcast_to, (np.arange(2.0), (3, 2)), {}),
    ("broadcast_arrays", np.broadcast_arrays, (np.arange(2.0), _square()), {}),
    ("atleast_1d", np.atleast_1d, (np.arange(2.0),), {}),
    ("atleast_2d", np.atleast_2d, (np.arange(2.0),), {}),
    ("atleast_3d", np.atleast_3d, (_square(),), {}),
    ("expand_dims", np.expand_dims, (_square(), 0), {}),
    ("moveaxis", np.moveaxis, (_square(), 0, 1), {}),
    ("swapaxes", np.swapaxes, (_square(), 0, 1), {}),
    ("flip", np.flip, (_square(),), {}),
    ("rot90", np.rot90, (_square(),), {}),
    ("split", np.split, (_square(), 2), {}),
    ("ndarray_conj_of_real", np.ndarray.conj, (_square(),), {}),
    ("ndarray_view", np.ndarray.view, (_square(),), {}),
    ("matrix_transpose", np.matrix_transpose, (_square(),), {}),
]


@pytest.mark.parametrize(("fn", "args", "kwargs"), [v[1:] for v in VIEW_MAKERS],
                         ids=[v[0] for v in VIEW_MAKERS])  # fmt: skip
def test_an_operation_that_can_return_a_view_is_not_claimed_new(fn, args, kwargs):
    result = fn(*args, **kwargs)
    assert any(np.shares_memory(r, a) for r in _array_leaves(result) for a in _array_leaves(args))
    assert not numpy_table.returns_new_memory("call", fn)


# -- the memory plan: a view of a temporary that a ufunc consumes last --------------------------


def kept_view(make_view):
    """``t`` dies at ``np.exp(t)``: the plan may give ``exp`` its buffer only when nothing
    else can still see it."""

    def fn(x):
        t = x * 2
        v = make_view(t)
        u = np.exp(t)
        return v, u

    return fn


def kept_view_then_combined(make_view):
    """The view is read after ``t``'s last use (``v + u``), not returned."""

    def fn(x):
        t = x - 1
        v = make_view(t)
        u = np.sqrt(t * t)
        return v + u

    return fn


def kept_view_in_a_list(make_view):
    def fn(x, log):
        t = x + 0.5
        log.append(make_view(t))
        u = np.negative(t)
        return u

    return fn


def square(n=3):
    return lambda: (np.arange(float(n * n)).reshape(n, n),)


def rect(n=2, m=3):
    return lambda: (np.arange(float(n * m)).reshape(n, m) - 2.5,)


def cube():
    return lambda: (np.arange(24.0).reshape(2, 3, 4),)


def vector(n=5):
    return lambda: (np.linspace(-1.0, 1.0, n),)


def complex_square():
    return lambda: (np.arange(4.0).reshape(2, 2) * (1 + 2j),)


def with_log(make):
    return lambda: (*make(), [])


EINSUM = [
    ("einsum_transpose", lambda t: np.einsum("ij->ji", t), square(3), rect(2, 3)),
    ("einsum_diagonal", lambda t: np.einsum("ii->i", t), square(3), square(4)),
    ("einsum_identity_1d", lambda t: np.einsum("i->i", t), vector(5), vector(6)),
    ("einsum_implicit_ij", lambda t: np.einsum("ij", t), square(3), rect(3, 2)),
    ("einsum_implicit_ba", lambda t: np.einsum("ba", t), rect(2, 3), square(2)),
    ("einsum_explicit_ij", lambda t: np.einsum("ij->ij", t), rect(2, 3), rect(3, 4)),
    ("einsum_ellipsis", lambda t: np.einsum("...", t), rect(2, 3), vector(4)),
    ("einsum_ellipsis_arrow", lambda t: np.einsum("...->...", t), cube(), square(2)),
    ("einsum_3d_reversed", lambda t: np.einsum("ijk->kji", t), cube(), cube()),
    ("einsum_3d_partial", lambda t: np.einsum("ijk->ikj", t), cube(), cube()),
    ("einsum_ellipsis_last", lambda t: np.einsum("...i->i...", t), cube(), rect(2, 3)),
    (
        "einsum_optimize_true",
        lambda t: np.einsum("ij->ji", t, optimize=True),
        square(3),
        rect(2, 4),
    ),
    (
        "einsum_optimize_greedy",
        lambda t: np.einsum("ii->i", t, optimize="greedy"),
        square(3),
        square(2),
    ),
    (
        "einsum_optimize_optimal",
        lambda t: np.einsum("i->i", t, optimize="optimal"),
        vector(4),
        vector(7),
    ),
    ("einsum_operands_list", lambda t: np.einsum(t, [0, 1], [1, 0]), square(3), rect(3, 2)),
    # controls: einsum that sums or multiplies makes new memory
    ("einsum_trace", lambda t: np.einsum("ii", t), square(3), square(4)),
    ("einsum_row_sums", lambda t: np.einsum("ij->i", t), rect(2, 3), square(3)),
    ("einsum_two_operands", lambda t: np.einsum("ij,jk->ik", t, t.T), rect(2, 3), square(2)),
]

OTHER_VIEWS = [
    ("transpose", np.transpose, rect(2, 3), square(3)),
    ("T", lambda t: t.T, rect(2, 3), square(3)),
    ("reshape", lambda t: np.reshape(t, (-1,)), rect(2, 3), square(3)),
    ("ravel_method", lambda t: t.ravel(), rect(2, 3), square(3)),
    ("diagonal", np.diagonal, square(3), rect(3, 4)),
    ("diag_of_matrix", np.diag, square(3), square(2)),
    ("real_of_complex", np.real, complex_square(), complex_square()),
    ("imag_of_complex", np.imag, complex_square(), complex_square()),
    ("broadcast_to", lambda t: np.broadcast_to(t, (2, *t.shape)), vector(4), rect(2, 2)),
    ("broadcast_arrays", lambda t: np.broadcast_arrays(t, t[:1])[0], rect(2, 3), square(3)),
    ("atleast_1d", np.atleast_1d, vector(4), rect(2, 3)),
    ("atleast_2d", np.atleast_2d, rect(2, 3), vector(3)),
    ("atleast_3d", np.atleast_3d, cube(), rect(2, 3)),
    ("asarray", np.asarray, rect(2, 3), vector(3)),
    ("ascontiguousarray", np.ascontiguousarray, rect(2, 3), vector(3)),
    ("asfortranarray_of_column", lambda t: np.asfortranarray(t[:, :1]), rect(2, 3), square(3)),
    ("array_copy_none", lambda t: np.array(t, copy=None), rect(2, 3), vector(3)),
    ("astype_copy_false", lambda t: t.astype(t.dtype, copy=False), rect(2, 3), vector(3)),
    ("expand_dims", lambda t: np.expand_dims(t, 0), rect(2, 3), vector(3)),
    ("moveaxis", lambda t: np.moveaxis(t, 0, -1), cube(), rect(2, 3)),
    ("swapaxes", lambda t: np.swapaxes(t, 0, 1), rect(2, 3), cube()),
    ("flip", np.flip, rect(2, 3), vector(3)),
    ("rot90", np.rot90, rect(2, 3), square(3)),
    ("split_first", lambda t: np.split(t, 2)[0], square(2), rect(4, 3)),
    ("conj_method_of_real", lambda t: t.conj(), rect(2, 3), vector(3)),
    ("view_method", lambda t: t.view(), rect(2, 3), vector(3)),
    ("ellipsis_item", lambda t: t[...], rect(2, 3), vector(3)),
    ("slice_item", lambda t: t[1:], rect(2, 3), vector(3)),
    ("matrix_transpose", np.matrix_transpose, rect(2, 3), cube()),
    # controls: copies
    ("copy", np.copy, rect(2, 3), vector(3)),
    ("conjugate_ufunc", np.conjugate, rect(2, 3), vector(3)),
    ("sum_over_no_axis", lambda t: np.sum(t, axis=()), rect(2, 3), vector(3)),
]

CASES = (
    [C(name, kept_view(view), a, b) for name, view, a, b in EINSUM]
    + [C(name, kept_view(view), a, b) for name, view, a, b in OTHER_VIEWS]
    + [
        C(f"{name}_read_after", kept_view_then_combined(view), a, b)
        for name, view, a, b in EINSUM[:6]
    ]
    + [
        C(f"{name}_in_a_list", kept_view_in_a_list(view), with_log(a), with_log(b))
        for name, view, a, b in EINSUM[:3]
    ]
)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_view_of_a_dying_temporary_keeps_its_values(case):
    case.run()
