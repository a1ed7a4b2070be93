"""Recompiles (read from `tc.counters()` after a sequence of calls), the names the printed graph
binds, and the reasons `tc.explain` gives for frames that run eagerly.

Recompile limits: a NaN constant, parameters named like builtins, new np.matrix / masked / record
/ subclass arguments of one shape must not recompile on every call. Python float and int
arguments with new values are checked for correctness; their recompile count is printed only.
The printed graph is the code that runs: it must not bind a name that shadows a builtin or `np`.
"""

from __future__ import annotations

import ast
import builtins
import itertools

import numpy as np
import numpy as numpy_alias
import pytest
from diffharness import C, case_id, max_recompiles

import tcompile as tc


def values(n, make):
    """n builders, each giving the arguments made by ``make(i)`` (new objects, new values)."""
    return [lambda i=i: make(i) for i in range(n)]


SIX = "ABCDEF"


# --- recompiles -------------------------------------------------------------------------------


def nan_scale(x, s):
    return np.nan_to_num(x * s, nan=-1.0)


def nan_in_tuple(x, t):
    return x + t[0], t[1] != t[1]


def nan_dict_value(x, d):
    return np.where(x > 0, d["fill"], x)


def param_type(x, type):
    return x * type


def param_len(x, len):
    return x + len


def param_id(x, id):
    return x - id


def param_isinstance(x, isinstance):
    return x * isinstance


def param_tuple(x, tuple):
    return x + tuple[0]


def param_getattr(x, getattr):
    return x / getattr


def params_builtin_names_python_values(x, type, len, id):
    return x * type + len - id


def matrix_arg(m):
    return m * m.T, m.sum()


def masked_arg(m):
    return (m * 2).sum(), m.mean()


def recarray_arg(r):
    return r.a + r.b


class Sub(np.ndarray):
    pass


def subclass_arg(s):
    return s * 2, (s + 1).sum()


def float_arg(x, a):
    return x * a + a


def int_arg(x, k):
    return x * k + k


def same_shapes_new_values(x, y):
    return x @ y, (x + y.T).sum()


def tuple_of_arrays(t):
    return t[0] + t[1]


def dict_arg(d):
    return d["a"] * d["b"]


class Point:
    def __init__(self, xy, w):
        self.xy = xy
        self.w = w


def object_arg(p):
    return p.xy * p.w


def matrix_of(i):
    return np.matrix([[1.0 + i, 2.0], [3.0, 4.0 - i]])


CASES = [
    C(
        "nan_scale_fresh_nan",
        nan_scale,
        *values(6, lambda i: (np.arange(3.0) + i, float("nan"))),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "nan_in_tuple",
        nan_in_tuple,
        *values(6, lambda i: (np.arange(3.0) * i, (float(i), float("nan")))),
        pattern=SIX,
        after=max_recompiles(2),
    ),
    C(
        "nan_dict_value",
        nan_dict_value,
        *values(6, lambda i: (np.arange(3.0) - i, {"fill": float("nan")})),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_type",
        param_type,
        *values(6, lambda i: (np.arange(3.0), np.array(float(i)))),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_len",
        param_len,
        *values(6, lambda i: (np.arange(3.0), np.arange(3.0) * i)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_id",
        param_id,
        *values(6, lambda i: (np.arange(3.0), np.full(3, i * 0.5))),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_isinstance",
        param_isinstance,
        *values(6, lambda i: (np.arange(3.0), np.array(i - 2.0))),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_tuple",
        param_tuple,
        *values(6, lambda i: (np.arange(3.0), (np.arange(3.0) + i,))),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "param_named_getattr",
        param_getattr,
        *values(6, lambda i: (np.arange(3.0), np.arange(1.0, 4.0) + i)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "params_builtin_names_same_python_values",
        params_builtin_names_python_values,
        *values(6, lambda i: (np.arange(3.0) + i, 2.0, 3, 1)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "matrix_new_objects",
        matrix_arg,
        *values(6, lambda i: (matrix_of(i),)),
        pattern=SIX,
        after=max_recompiles(2),
    ),
    C(
        "masked_new_objects",
        masked_arg,
        *values(6, lambda i: (np.ma.array(np.arange(4.0) + i, mask=[i % 2, 0, 1, 0]),)),
        pattern=SIX,
        after=max_recompiles(2),
    ),
    C(
        "recarray_new_objects",
        recarray_arg,
        *values(6, lambda i: (np.rec.fromarrays([np.arange(3.0) + i, np.ones(3)], names="a,b"),)),
        pattern=SIX,
        after=max_recompiles(2),
    ),
    C(
        "subclass_new_objects",
        subclass_arg,
        *values(6, lambda i: ((np.arange(3.0) - i).view(Sub),)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "arrays_new_values_no_recompile",
        same_shapes_new_values,
        *values(6, lambda i: (np.ones((2, 3)) * i, np.arange(6.0).reshape(3, 2) - i)),
        pattern=SIX,
        after=max_recompiles(0),
    ),
    C(
        "tuple_of_arrays_no_recompile",
        tuple_of_arrays,
        *values(6, lambda i: ((np.arange(3.0) * i, np.ones(3)),)),
        pattern=SIX,
        after=max_recompiles(0),
    ),
    C(
        "dict_arg_new_objects",
        dict_arg,
        *values(6, lambda i: ({"a": np.arange(3.0) + i, "b": np.ones(3)},)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
    C(
        "object_arg_new_instances",
        object_arg,
        *values(6, lambda i: (Point(np.arange(2.0) - i, np.ones(2)),)),
        pattern=SIX,
        after=max_recompiles(1),
    ),
]


# --- parameter names that generated guard or graph code might use itself ----------------------


def param_G(x, G):
    return x * G


def param_L(x, L):
    return x + L


def param_check(x, check):
    return x - check


def param_np(x, np):
    return x * np


def params_args_kwargs(x, args, kwargs):
    return x * args + kwargs


def param_self_first(self, x):
    return x * self


def locals_like_graph_names(x):
    add = x + 1
    add_1 = add * 2
    mul = add_1 - 1
    sin = np.sin(mul)
    sum_1 = sin.sum()
    return add + add_1 + mul + sin + sum_1 + np.sum(x)


def times(x, s):
    return x * s


def plus_first(x, lst):
    return x + lst[0]


def where_fill(x, s):
    return np.where(x > 0, s, x)


def nested_nan(x, d):
    return x + d["v"][0]


def arr3(v):
    return np.array([1.0, -2.0, 0.5]) * 0 + v


CASES += [
    C(
        "param_named_G",
        param_G,
        *values(4, lambda i: (arr3(1.0), np.array(float(i)))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "param_named_L",
        param_L,
        *values(4, lambda i: (arr3(1.0), np.array(float(i)))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "param_named_check",
        param_check,
        *values(4, lambda i: (arr3(1.0), np.array(float(i)))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "param_named_np",
        param_np,
        *values(4, lambda i: (arr3(1.0), np.array(float(i)))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "params_named_args_kwargs",
        params_args_kwargs,
        *values(4, lambda i: (arr3(1.0), np.array(float(i)), np.array(1.0))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "param_named_self_first",
        param_self_first,
        *values(4, lambda i: (np.array(float(i)), arr3(1.0))),
        pattern="ABCD",
        after=max_recompiles(1),
    ),
    C(
        "locals_like_graph_names",
        locals_like_graph_names,
        lambda: (arr3(1.0),),
        lambda: (arr3(-2.0),),
    ),
    C(
        "neg_zero_alternating",
        times,
        lambda: (arr3(1.0), 0.0),
        lambda: (arr3(1.0), -0.0),
        pattern="ABABAB",
        after=max_recompiles(2),
    ),
    C(
        "nan_in_list_fresh",
        plus_first,
        lambda: (arr3(1.0), [float("nan")]),
        pattern="AAAAA",
        after=max_recompiles(1),
    ),
    C(
        "numpy_nan_scalar_fresh",
        where_fill,
        lambda: (arr3(1.0), np.float64("nan")),
        pattern="AAAAA",
        after=max_recompiles(1),
    ),
    C(
        "nan_nested_fresh",
        nested_nan,
        lambda: (np.arange(2.0), {"v": [float("nan")]}),
        pattern="AAAA",
        after=max_recompiles(1),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_recompiles_stay_bounded_and_results_match(case):
    case.run()


@pytest.mark.parametrize(
    "fn, make",
    [
        (float_arg, lambda i: (np.arange(3.0), 0.5 + i * 1.25)),
        (int_arg, lambda i: (np.arange(3.0), i + 2)),
    ],
    ids=["float_values", "int_values"],
)
def test_python_scalar_arguments_correct_recompiles_reported(fn, make):
    """Correctness is asserted; the recompile count is only printed (-s shows it)."""
    C(fn.__name__, fn, *values(6, make), pattern=SIX).run()
    print(f"{fn.__name__}: {tc.counters()['recompiles']} recompiles over 6 values")


# --- the printed graph binds no builtin or NumPy name -----------------------------------------


def _abs_helper(v):
    return abs(v) + 1


def _len_helper(v):
    return len(v) * v


def _range_helper(v):
    acc = v * 0
    for i in range(2):
        acc = acc + v * i
    return acc


def _np_helper(v):
    return np.sin(v) + np.max(v)


def locals_like_builtins(x):
    max = x.max(axis=0)
    sum = x.sum()
    min = x.min()
    abs = np.abs(x)
    len = x.shape[0]
    range = x.ptp() if hasattr(x, "ptp") else x.max() - x.min()
    return max * sum - min + abs + len + range


def local_abs_then_helper(x):
    abs = x.min()
    return _abs_helper(x) + abs


def local_len_then_helper(x):
    len = x.sum()
    return _len_helper(x) - len


def local_range_then_helper(x):
    range = x * 3
    return _range_helper(x) + range


def local_np_then_helper(x):
    np = x * 2
    return _np_helper(x) + np


def local_max_sum_then_np(x):
    max = x.max()
    sum = x.sum()
    return numpy_alias.max(x) + numpy_alias.sum(x) + max + sum


NAMING = [
    locals_like_builtins,
    local_abs_then_helper,
    local_len_then_helper,
    local_range_then_helper,
    local_np_then_helper,
    local_max_sum_then_np,
]

FORBIDDEN = set(dir(builtins)) | {"np", "numpy"}


def _names(src: str) -> tuple[set[str], set[str]]:
    """(names the graph source binds, free names it reads) of a printed graph."""
    tree = ast.parse(src)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, read - bound


def _graph_sources(fn) -> list[str]:
    f = tc.compile(fn, backend="eager")
    f(np.arange(6.0).reshape(2, 3) - 2)
    graphs = [
        str(e.graph) for e in f.__tc_compiled__.entries if getattr(e, "graph", None) is not None
    ]
    explained = tc.explain(fn)(np.arange(6.0).reshape(2, 3) - 2)
    graphs += [str(g) for g in explained.graphs]
    assert graphs, "no graph was captured"
    return graphs


@pytest.mark.parametrize("fn", NAMING, ids=lambda f: f.__name__)
def test_locals_named_like_builtins_match_eager(fn):
    C(
        fn.__name__, fn, lambda: (np.arange(6.0).reshape(2, 3) - 2,), lambda: (np.ones((2, 3)),)
    ).run()


@pytest.mark.parametrize("fn", NAMING, ids=lambda f: f.__name__)
def test_printed_graph_binds_no_builtin_or_numpy_name(fn):
    """The printed graph is what runs and what users read: `max = x.max(...)` in it shadows
    the builtin for every later line (the user's local names get a suffix instead)."""
    for src in _graph_sources(fn):
        clash = _names(src)[0] & FORBIDDEN
        assert not clash, f"graph binds {sorted(clash)}:\n{src}"


def _in_order(statements):
    """The parts of ``statements`` in the order they run: a loop's (or with-block's) header
    before its body (a ``for`` target is bound before the body reads it)."""
    for stmt in statements:
        if isinstance(stmt, ast.For):
            yield from (stmt.iter, stmt.target)
            yield from _in_order(stmt.body)
        elif isinstance(stmt, ast.While | ast.If):
            yield stmt.test
            yield from _in_order(stmt.body + stmt.orelse)
        elif isinstance(stmt, ast.With):
            yield from stmt.items
            yield from _in_order(stmt.body)
        else:
            yield stmt


@pytest.mark.parametrize("fn", NAMING, ids=lambda f: f.__name__)
def test_printed_graph_reads_no_name_it_rebinds(fn):
    """No global the graph reads (np, builtins, helpers) is also bound inside it."""
    for src in _graph_sources(fn):
        bound, _ = _names(src)
        tree = ast.parse(src)
        loads_before_store = set()
        for func in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            stored: set[str] = {a.arg for a in func.args.args}
            for stmt in _in_order(func.body):
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                        if node.id not in stored and node.id in bound:
                            loads_before_store.add(node.id)
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        stored.add(node.id)
        assert not loads_before_store, (
            f"graph reads {sorted(loads_before_store)} as globals and also binds them:\n{src}"
        )


# --- every frame that runs eagerly has a reason -----------------------------------------------


def _gen(x):
    yield x
    yield x * 2


def calls_generator(x):
    return sum(_gen(x))


def generator_function(x):
    yield x.sum()
    yield x.max()


class Counter3:
    def __init__(self):
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.i += 1
        if self.i > 3:
            raise StopIteration
        return self.i


def iter_user_iterator(x):
    return [v for v in Counter3()], x.sum()


def next_on_count(x):
    c = itertools.count(5)
    return next(c), next(c), x.sum()


def next_on_nditer(x):
    it = iter(np.nditer(x))
    return float(next(it)), x.sum()


def next_on_map(x):
    m = map(float, x)
    return next(m), next(m), x.sum()


def next_on_zip(x):
    z = zip(x, x[::-1])
    a, b = next(z)
    return a + b, x.sum()


def iter_dict_items(x, d):
    it = iter(d.items())
    k, v = next(it)
    return k, v * x


def loop_with_print(x):
    for i in range(2):
        print("i", i)
    return x * 2


def break_in_try(x):
    try:
        print("in try")
        return x + 1
    except ValueError:
        return x


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def break_in_user_with(x):
    with Ctx():
        print("in with")
        r = x * 3
    return r


def explicit_skip(x):
    tc.skip_frame()
    return x - 1


async def coroutine_function(x):
    return x.sum()


def generator_expression_consumer(x):
    g = (v * 2 for v in x)
    return sum(g), x


EAGER_FRAMES = [
    (calls_generator, lambda: (np.arange(3.0),)),
    (iter_user_iterator, lambda: (np.arange(3.0),)),
    (next_on_count, lambda: (np.arange(3.0),)),
    (next_on_nditer, lambda: (np.arange(3.0),)),
    (next_on_map, lambda: (np.arange(3.0),)),
    (next_on_zip, lambda: (np.arange(3.0),)),
    (iter_dict_items, lambda: (np.arange(3.0), {"k": 2.0})),
    (loop_with_print, lambda: (np.arange(3.0),)),
    (break_in_try, lambda: (np.arange(3.0),)),
    (break_in_user_with, lambda: (np.arange(3.0),)),
    (explicit_skip, lambda: (np.arange(3.0),)),
    (generator_expression_consumer, lambda: (np.arange(3.0),)),
]


def _base(name: str) -> str:
    return name.split(" (")[0].split(".")[-1]


@pytest.mark.parametrize("fn, build", EAGER_FRAMES, ids=lambda v: getattr(v, "__name__", ""))
def test_eager_frames_match_eager(fn, build):
    C(fn.__name__, fn, build).run()


@pytest.mark.parametrize(
    "fn, build",
    EAGER_FRAMES
    + [
        (generator_function, lambda: (np.arange(3.0),)),
        (coroutine_function, lambda: (np.arange(3.0),)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_every_eager_frame_has_a_reason(fn, build):
    explained = tc.explain(fn)(*build())
    if fn is generator_function:
        list(explained.result)  # run the generator's body
    if fn is coroutine_function:
        with pytest.raises(StopIteration):
            explained.result.send(None)  # run the coroutine's body
    reasons = {_base(loc.funcname) for r in explained.break_reasons for loc in r.stack}
    report = str(explained)
    seen = {_base(n) for n in explained.compiled_frames + explained.skipped_frames}
    assert fn.__name__ in seen, (
        f"{fn.__name__} is neither a compiled nor a skipped frame in tc.explain:\n{report}"
    )
    for frame in explained.skipped_frames:
        assert _base(frame) in reasons, f"frame {frame!r} ran eagerly without a reason:\n{report}"
