"""Python scalars, strings and containers around arrays: arithmetic, builtins, f-strings, asserts,
boolean logic, conditional expressions, `is None` checks. All values here are known at trace time."""

# Corpus code is deliberately unidiomatic: each construct is there for the bytecode it emits.
# ruff: noqa: C408, PLR0124, PLR0133, B009

import numpy as np

from . import case, raises
from .inputs import A8, I64_8, M45, R45, T234


@case(7, 2.5)
@case(-3, 0.1)
def int_and_float_arithmetic(n, f):
    return (
        n * 3 + 1,
        n // 2,
        n % 3,
        -n,
        f / 2,
        f**2,
        n / 4,
        n**2,
        abs(-f),
        round(f, 1),
        int(f),
        float(n),
    )


@case(M45, 3)
def python_ints_from_shapes_scale_arrays(x, k):
    rows, cols = x.shape
    n = rows * cols + k
    return x * n, x.size // k, x / (rows - 1), float(cols) * x


@case(M45)
def tuple_build_and_index(x):
    t = (x, x.shape, 3, "s")
    return t[1][0], t[-1], t[0] * t[2], t[1:3], len(t), t + (None,), (0,) * 3


@case(A8)
def list_build_and_methods(x):
    items = [x, x + 1]
    items.append(x * 2)
    items.extend([x * 3, x * 4])
    items.insert(0, -x)
    last = items.pop()
    items[1] = items[1] * 10
    return items, last, items[1:], items[::-1][0], len(items)


@case(A8)
def dict_build_set_get_update(x):
    d = {"a": x, "b": 2}
    d["c"] = x + d["b"]
    d.update(e=1.5)
    d.setdefault("f", [1, 2])
    return d, d.get("z", 0), d.get("a") is x, list(d.keys()), "c" in d, "z" not in d, len(d)


@case(M45)
def dict_methods_items_values_pop(x):
    d = dict(w=x, n=x.ndim)
    d2 = dict(d)
    d2["extra"] = 3
    popped = d2.pop("extra")
    return (
        sorted(d2.keys()),
        [type(v).__name__ for v in d.values()],
        list(d.items())[1],
        popped,
        {**d, "n": 0},
    )


@case(T234)
def len_of_arrays_lists_ranges(x):
    return (
        len(x),
        len(x[0]),
        len([1, 2, 3]),
        len(range(2, 10, 3)),
        len(x.shape),
        len("abc"),
        len({"a": 1}),
    )


@case()
def range_forms():
    return (
        list(range(4)),
        list(range(2, 6)),
        list(range(10, 0, -3)),
        range(3)[1],
        range(0, 20, 5)[-1],
        tuple(range(-2, 2)),
    )


@case(A8)
def zip_and_enumerate_to_lists(x):
    names = ("a", "b", "c")
    return (
        list(zip(names, (1, 2, 3))),
        list(enumerate(names)),
        list(enumerate(names, start=5)),
        dict(zip(names, range(3))),
    )


@case(A8, 3, 2.0)
@case(A8, 3.0, None)
def isinstance_checks(x, n, maybe):
    return (
        isinstance(x, np.ndarray),
        isinstance(n, int),
        isinstance(n, (int, float)),
        isinstance(maybe, float),
        isinstance(x.dtype, np.dtype),
        isinstance(x.shape, tuple),
        type(x) is np.ndarray,
        type(n).__name__,
    )


@case(M45, 4)
def builtin_min_max_abs_sum(x, n):
    return (
        min(3, n),
        max([1, 5, n]),
        max(x.shape),
        min(x.shape[0], n - 1),
        abs(-n),
        sum([1, 2, n]),
        sum(x.shape),
        sum((0.5, 0.25), 1),
    )


@case(T234)
def sorted_and_reversed(x):
    return (
        sorted([3, 1, 2]),
        sorted(("b", "a", "c"), reverse=True),
        list(reversed([1, 2, 3])),
        tuple(reversed(x.shape)),
        sorted(x.shape, key=lambda d: -d),
    )


@case(A8, 12, "name")
def str_and_fstrings(x, n, name):
    return (
        str(n),
        f"{n}",
        f"{name!r}",
        f"{n:>4}",
        f"{2.5:.3f}|{n:04d}",
        f"shape={x.shape} dtype={x.dtype}",
        f"{name!s:<6}|",
        str(x.dtype),
        repr(x.shape),
        f"{n!r:>5}",
    )


@case("alpha,beta")
def string_methods(s):
    parts = s.split(",")
    return (
        parts,
        "-".join(parts),
        s.upper(),
        s.startswith("al"),
        "ab" * 3,
        s[1:4],
        s.replace("a", "A"),
        len(s),
    )


@case(M45)
@case(R45)
def assert_on_known_values(x):
    assert x.ndim == 2
    assert x.shape[0] > 0, "empty input"
    assert x.dtype == np.float64, f"bad dtype {x.dtype}"
    assert isinstance(x, np.ndarray)
    return x * 2


@case(M45, 4)
def chained_comparisons(x, n):
    return 0 < n < 10, 1 <= x.ndim <= 3, 0 < n < 3, x.shape[0] < x.shape[1] <= 5, n == 4 != 5


@case(A8, 0)
@case(A8, 3)
def and_or_not_on_known_values(x, n):
    a = n > 0 and n < 5
    b = n or 7
    c = not n
    d = None or x
    e = n and x.shape
    return a, b, c, d is x, e, (n > 1 or x.ndim == 1) and not c


@case(A8, 2)
@case(A8, 5)
def conditional_expressions(x, n):
    y = x * 2 if n > 3 else x - 1
    label = "big" if x.size > 10 else "small"
    k = 1 if n % 2 else 0
    return y, label, k, (x if n else None)


@case(A8)
@case(A8, A8 + 1.0)
@case(A8, None, 2.0)
@case(A8, scale=3.0)
def is_none_and_is_not_none_checks(x, w=None, scale=None):
    if w is None:
        w = np.ones_like(x)
    out = x * w
    if scale is not None:
        out = out * scale
    return out, w is None, scale is not None


@case(3, 2.5)
def bool_int_float_complex_conversions(n, f):
    return (
        bool(n),
        bool(0),
        int("3"),
        float("1.5"),
        complex(1, 2),
        int(True),
        float(n) / 2,
        int(f * 4),
        bool([]),
    )


@case(A8)
def containment_and_identity_on_constants(x):
    t = (1, 2, 3)
    return (
        3 in t,
        4 not in [1, 2],
        "a" in "abc",
        x.dtype in (np.float32, np.float64),
        x is x,
        x.shape is not None,
    )


@case(M45)
def tuple_and_list_slicing(x):
    t = (1, 2, 3, 4, 5)
    lst = [10, 20, 30]
    return t[1:], t[::2], lst[::-1], x.shape[:-1], x.shape[::-1], t[-2:], lst[:0]


@case(M45)
def builtin_any_all_on_python_bools(x):
    return any([x.ndim > 3, False]), all([x.size > 0, x.ndim == 2]), any(()), all(())


@case(M45)
def getattr_hasattr_type(x):
    return (
        getattr(x, "shape"),
        hasattr(x, "ndim"),
        hasattr(x, "nope"),
        getattr(x, "missing", 7),
        type(x.shape).__name__,
    )


@case(A8)
def del_statements_on_locals(x):
    tmp = x + 1
    d = {"a": 1, "b": 2}
    lst = [1, 2, 3]
    del d["a"]
    del lst[0]
    y = tmp * 2
    del tmp
    return y, d, lst


@case(M45, 5)
def int_methods_and_builtins(x, n):
    return (
        n.bit_length(),
        divmod(n, 2),
        pow(n, 2, 7),
        hash(n) == hash(n),
        max(x.shape, default=0),
        (2.5).is_integer(),
    )


@raises(A8)
def assert_failure_with_message(x):
    assert x.ndim == 3, f"expected 3-d input, got {x.ndim}-d"
    return x


@raises(A8)
def dict_missing_key(x):
    d = {"a": x}
    return d["b"]


@raises(A8)
def tuple_index_out_of_range(x):
    t = (x, 1)
    return t[5]


@raises(M45)
def python_zero_division_from_shapes(x):
    return x.shape[0] // (x.ndim - 2)


@raises(I64_8)
def explicit_raise_on_known_shape(x):
    if x.shape[0] != 4:
        raise ValueError(f"bad shape {x.shape}")
    return x
