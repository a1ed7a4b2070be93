"""Numbers and folds that used to go wrong or recompile without end (issue 19, items 8, 10, 11).

- In a split loop's body, a comparison of the body's dynamic ints and floats is a bool of the
  graph: NumPy bools combine with it (``(x > 0).all() & (k < 70)``), and so do ``&``, ``|``,
  ``^``, ``~``, ``not``, ``and``/``or`` and chained comparisons, exactly as eagerly.
- A constant fold that warns (``~flag`` on a bool on Python 3.12+, a NumPy scalar overflow,
  ``divmod(np.float64(1.0), 0.0)``, ``bool(NotImplemented)``) warns on every call, not only on
  the traced one.
- ``round``, ``int()`` and ``float()`` of a dynamic float or int need no value guard: a new value
  reuses the entry. A builtin or global function replaced by a new function object on every
  call recompiles once, then the entry serves every new object of the same code.
"""

from __future__ import annotations

import builtins
import functools
import operator
import types
import warnings

import numpy as np
import pytest
from diffharness import C, case_id, max_recompiles, run_script

import tcompile as tc


def _split(counters):
    """The loop ran split (its frame was not skipped) and no body reached the cache limit."""
    assert counters["frames_skipped"] == 0, counters
    assert counters["cache_limit_hits"] == 0, counters


def _stable(limit):
    def check(counters):
        _split(counters)
        max_recompiles(limit)(counters)

    return check


def values(*items):
    """One builder per item: ``(np.ones(3), item)``, fresh each call."""
    return [lambda item=item: (np.ones(3), item) for item in items]


# -- 8: NumPy bools with comparisons of a split loop's dynamic numbers -------------------------


def while_all_and_counter(x):
    k = 0
    while (x > 0).all() & (k < 70):
        print(k)
        x = x - 1
        k += 1
    return x, k


def for_any_and_index(x):
    acc = []
    for k in range(5):
        print("it", k)
        acc.append((x > k).any() & (k < 2))
    return acc


def index_or_all(x):
    acc = []
    for k in range(5):
        print(k)
        acc.append((k < 2) | (x > k).all())
    return acc


def numpy_bool_xor_index(x):
    acc = []
    for k in range(5):
        print(k)
        acc.append(np.bool_(x[0] > 0) ^ (k >= 3))
    return acc


def numpy_bool_with_every_operator(x):
    acc = []
    for k in range(4):
        print(k)
        m = (x > 1).all()
        acc.append((m & (k != 2), m | (k == 2), m ^ (k > 1), (k <= 1) & m))
    return acc


def two_comparisons_and(x):
    out = []
    for k in range(5):
        print(k)
        inside = (k > 0) & (k < 3)
        out.append(x * inside)
    return out


def two_comparisons_or_xor(x):
    out = []
    for k in range(5):
        print(k)
        out.append(((k == 0) | (k == 4), (k > 1) ^ (k > 3)))
    return out


def invert_comparison(x):
    out = []
    for k in range(4):
        print(k)
        out.append(x + ~(k < 2))  # -2 or -1 (and a DeprecationWarning on 3.12+)
    return out


def not_comparison(x):
    out = []
    for k in range(4):
        print(k)
        flag = not (k < 2)
        out.append(np.where(flag, x, -x))
    return out


def not_of_combined(x):
    out = []
    for k in range(4):
        print(k)
        out.append(not ((k > 0) & (x > 2).any()))
    return out


def chained_comparison(x):
    for k in range(5):
        print(k)
        if 0 < k < 3:
            x = x + k
    return x


def and_or_with_flag(x, flag):
    out = []
    for k in range(4):
        print(k)
        out.append(((k < 2) and flag, flag or (k > 2), (k < 1) or x.sum()))
    return out


def comparison_types(x):
    out = []
    for k in range(3):
        print(k)
        b = k < 2
        out.append((type(b).__name__, isinstance(b, bool), isinstance(b, int), b.real))
    return out


def comparison_arithmetic(x):
    out = []
    for k in range(4):
        print(k)
        b = k < 2
        out.append((b + 1, b * 3, int(b), str(b), float(b), -b, abs(b), x * b))
    return out


def comparison_as_index(x):
    out = []
    for k in range(4):
        print(k)
        out.append(("lo", "hi")[k >= 2])
    return out


def comparison_compared(x):
    out = []
    for k in range(4):
        print(k)
        out.append(((k < 2) == True, (k < 2) != (k < 3), (k < 2) < (k < 3)))  # noqa: E712
    return out


def float_comparison_with_numpy_bool(x):
    out = []
    t = 0.0
    for k in range(5):
        print(k)
        t = t + 0.3
        out.append((t > 0.5) | (x > 1).any())
    return out


def comparison_into_array(x):
    for k in range(4):
        print(k)
        x = x + np.asarray(k < 2) + np.logical_and(x > 1, k != 1)
    return x


def while_float_or_counter(x, tol):
    err = 1.0
    k = 0
    while (err > tol) | (k < 2):
        print(k, err)
        err = err / 2
        k += 1
    return x * err, k


def comparison_in_min_max(x):
    out = []
    for k in range(4):
        print(k)
        out.append((max(k < 2, k > 2), min(k < 3, True)))
    return out


BOOL_CASES = [
    C(
        "while_all_and_counter",
        while_all_and_counter,
        lambda: (np.arange(3.0) + 5,),
        lambda: (np.arange(3.0) + 80,),
        after=_split,
    ),
    C("for_any_and_index", for_any_and_index, lambda: (np.arange(4.0),), after=_split),
    C("index_or_all", index_or_all, lambda: (np.arange(4.0),), after=_split),
    C(
        "numpy_bool_xor_index",
        numpy_bool_xor_index,
        lambda: (np.arange(4.0),),
        lambda: (-np.arange(4.0) - 1,),
        after=_split,
    ),
    C(
        "numpy_bool_with_every_operator",
        numpy_bool_with_every_operator,
        lambda: (np.arange(4.0) + 2,),
        lambda: (np.arange(4.0),),
        after=_split,
    ),
    C("two_comparisons_and", two_comparisons_and, lambda: (np.arange(3.0),), after=_split),
    C("two_comparisons_or_xor", two_comparisons_or_xor, lambda: (np.arange(3.0),), after=_split),
    C("invert_comparison", invert_comparison, lambda: (np.arange(3.0),), after=_split),
    C("not_comparison", not_comparison, lambda: (np.arange(3.0),), after=_split),
    C("not_of_combined", not_of_combined, lambda: (np.arange(4.0),), after=_split),
    C("chained_comparison", chained_comparison, lambda: (np.arange(3.0),), after=_split),
    C(
        "and_or_with_flag",
        and_or_with_flag,
        lambda: (np.arange(3.0), True),
        lambda: (np.arange(3.0), False),
        after=_split,
    ),
    C("comparison_types", comparison_types, lambda: (np.arange(3.0),), after=_split),
    C("comparison_arithmetic", comparison_arithmetic, lambda: (np.arange(3.0),), after=_split),
    C("comparison_as_index", comparison_as_index, lambda: (np.arange(3.0),), after=_split),
    C("comparison_compared", comparison_compared, lambda: (np.arange(3.0),), after=_split),
    C(
        "float_comparison_with_numpy_bool",
        float_comparison_with_numpy_bool,
        lambda: (np.arange(3.0),),
        lambda: (np.zeros(3),),
        after=_split,
    ),
    C("comparison_into_array", comparison_into_array, lambda: (np.arange(3.0),), after=_split),
    C(
        "while_float_or_counter",
        while_float_or_counter,
        lambda: (np.ones(2), 0.01),
        lambda: (np.ones(2), 0.3),
        after=_split,
    ),
    C("comparison_in_min_max", comparison_in_min_max, lambda: (np.arange(3.0),), after=_split),
]


# -- 10: constant folds that warn, on every call ---------------------------------------------


def invert_flag(x, flag):
    return x + ~flag


def invert_true(x):
    t = True  # a local: CPython folds ``~True`` when compiling, the tracer when tracing
    return x + ~t


def invert_twice(x, flag):
    return x + ~flag - ~flag


def invert_through_operator(x, flag):
    return x + operator.invert(flag)


def invert_in_unrolled_loop(x, flag):
    t = 0
    for _ in range(3):
        t += ~flag
    return x + t


def invert_in_loop_node(x, flag):
    for _ in range(4):
        x = x + ~flag
    return x


def invert_in_split_loop(x, flag):
    for i in range(3):
        print(i)
        x = x + ~flag
    return x


def invert_then_branch(x, flag):
    if ~flag == -2:
        return x + 1
    return x - 1


def _inverted(f):
    return ~f


def invert_in_callee(x, flag):
    return x * _inverted(flag)


def divmod_by_zero(x):
    q, r = divmod(np.float64(1.0), 0.0)
    return x + r, q


def pow_overflow(x):
    return x + pow(np.float64(10.0), 400)


def abs_overflow(x):
    return x + abs(np.int8(-128))


def complex_to_float(x):
    return x + float(np.complex64(1 + 2j))


def notimplemented_truth(x):
    a = NotImplemented
    if a:
        x = x + 1
    return x, bool(a)


def scalar_overflow_ignored(x):
    with np.errstate(over="ignore"):
        return x + (np.int8(100) + np.int8(100))


def scalar_overflow_raises(x):
    with np.errstate(over="raise"):
        return x + (np.int8(100) + np.int8(100))


def scalar_overflow_then_invalid(x):
    big = np.float64(1e308) * 10
    return x + (big - big)


def _under_error_filter(fn):
    """Run ``fn`` with DeprecationWarnings turned into errors (eagerly and compiled)."""

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            return fn(*args)

    return run


FOLD_CASES = [
    C("invert_flag", invert_flag, lambda: (np.ones(3), True), lambda: (np.ones(3), False)),
    C("invert_true", invert_true, lambda: (np.ones(3),)),
    C("invert_twice", invert_twice, lambda: (np.ones(3), True), lambda: (np.ones(3), False)),
    C("invert_through_operator", invert_through_operator, lambda: (np.ones(3), False)),
    C("invert_in_unrolled_loop", invert_in_unrolled_loop, lambda: (np.ones(3), True)),
    C("invert_in_loop_node", invert_in_loop_node, lambda: (np.ones(3), True)),
    C("invert_in_split_loop", invert_in_split_loop, lambda: (np.ones(3), True), after=_split),
    C(
        "invert_then_branch",
        invert_then_branch,
        lambda: (np.ones(3), True),
        lambda: (np.ones(3), False),
    ),
    C("invert_in_callee", invert_in_callee, lambda: (np.ones(3), True)),
    C(
        "invert_under_error_filter",
        invert_flag,
        lambda: (np.ones(3), True),
        make_compiled=lambda fn: _under_error_filter(tc.compile(fn, backend="eager")),
        eager_fn=_under_error_filter(invert_flag),
    ),
    C("divmod_by_zero", divmod_by_zero, lambda: (np.ones(3),)),
    C("pow_overflow", pow_overflow, lambda: (np.ones(3),)),
    C("abs_overflow", abs_overflow, lambda: (np.ones(3),)),
    C("complex_to_float", complex_to_float, lambda: (np.ones(3),)),
    C("notimplemented_truth", notimplemented_truth, lambda: (np.ones(3),)),
    C("scalar_overflow_ignored", scalar_overflow_ignored, lambda: (np.ones(3),)),
    C("scalar_overflow_raises", scalar_overflow_raises, lambda: (np.ones(3),)),
    C("scalar_overflow_then_invalid", scalar_overflow_then_invalid, lambda: (np.ones(3),)),
]


# -- 11: dynamic numbers through round/int/float; builtins replaced by new functions ---------


def split_loop_prints_round(x):
    for i in range(12):
        v = float(x[i % 3])
        print(round(v, 6))
        x = x * 1.1
    return x


def split_loop_conversions(x):
    t = 0.0
    for i in range(8):
        t = t + 0.37
        print(int(t), round(t, 2), round(t), float(i), round(i, -1))
    return x * t


def round_ndigits(x, v):
    return x + round(v, 3)


def round_to_int(x, v):
    return x * round(v)


def int_of_float(x, v):
    return x * int(v)


def float_of_int(x, n):
    return x / float(n)


def round_int_ndigits(x, n):
    return x + round(n, -1)


def round_keeps_the_sign_of_zero(x, v):
    return x * round(v, 2), round(v, 2)


def round_then_compare(x, v):
    r = round(v, 1)
    if r > 0.5:  # a branch: pinned, and correct for every value
        return x + r
    return x - r


def int_of_float_as_size(x, v):
    return np.zeros(int(v)) + x[0]


def split_loop_prints_text(x):
    err = 1.0
    k = 0
    while err > 1e-3:
        err = err / 3
        print(f"iter {k}: err={err:.3e} {err!r} {k:>4} {k < 2}", str(k), format(err, ".2f"))
        x = x + err
        k += 1
    return x, k


def returns_text(x, v):
    return x + v, f"{v:.3f}", str(v), repr(v), format(v, "e"), f"{v!r:>12}|{v=}", ascii(v)


def text_used_as_str(x, v):
    s = f"{v:.2f}"
    return x + len(s), s + "!", s == "2.50"


def text_methods_and_items(x, v):
    s = f"{v:.2f}"
    return x, s.rjust(8), [c for c in s], s[0], bool(s), "." in s


def char_of_int(x, k):
    return x, f"{k:c}"


FLOATS = (0.1234567, 2.5, 3.5, -0.001, 7.25)

_REAL_LEN = builtins.len


class Tagged(list):
    """The replacement `len` answers differently only for these, so nothing else is disturbed."""


def _len_plus_100(o):
    n = _REAL_LEN(o)
    return n + 100 if type(o) is Tagged else n


def _new_len():
    """A new function object on every call, of the same code."""

    def len(o):  # noqa: A001 (it stands in for the builtin)
        n = _REAL_LEN(o)
        return n + 100 if type(o) is Tagged else n

    return len


def uses_len(x, lst):
    return x * len(lst), len(x)


def _replacing_len_with_a_new_function(call):
    def run(*args, **kwargs):
        replace = type(args[1]) is Tagged
        if replace:
            builtins.len = _new_len()
        try:
            return call(*args, **kwargs)
        finally:
            builtins.len = _REAL_LEN

    return run


def _shadowing_len_with_a_new_function(call):
    def run(*args, **kwargs):
        if type(args[1]) is Tagged:
            globals()["len"] = _new_len()
        try:
            return call(*args, **kwargs)
        finally:
            globals().pop("len", None)

    return run


def _compiled_under(wrap):
    return lambda fn: wrap(tc.compile(fn, backend="eager"))


def make_scaler(k):
    return lambda v: v * k


SCALE = make_scaler(2.0)


def calls_global_scaler(x):
    return SCALE(x)


def set_scaler(letter):
    global SCALE
    SCALE = make_scaler(2.0 if letter == "A" else 3.0)  # a new closure every call


def make_with_default(d):
    def scaled(v, k=d):
        return v * k

    return scaled


WITH_DEFAULT = make_with_default(2.0)


def calls_global_with_default(x):
    return WITH_DEFAULT(x)


def set_with_default(letter):
    global WITH_DEFAULT
    WITH_DEFAULT = make_with_default(2.0 if letter == "A" else -1.0)


def _named(fn):
    @functools.wraps(fn)
    def wrapper(v):
        return fn(v)

    return wrapper


def _double(v):
    return v * 2


def _negate(v):
    return -v


NAMED = _named(_double)


def reads_the_function_name(x):
    return NAMED(x), NAMED.__name__, NAMED.__qualname__


def set_named(letter):
    global NAMED
    NAMED = _named(_double if letter == "A" else _negate)  # one wrapper code, other names


K = 2.0
_OTHER_GLOBALS = {"K": -5.0, "__builtins__": builtins}


def times_k(v):
    return v * K


TIMES = times_k


def calls_same_code_other_globals(x):
    return TIMES(x)


def set_times(letter):
    global TIMES
    TIMES = times_k if letter == "A" else types.FunctionType(times_k.__code__, _OTHER_GLOBALS)


def allows_a_new_closure_in_graph(x):
    return tc.allow_in_graph(SCALE)(x)


def made_function_names(x):
    def inner(v):
        return v + 1

    return inner(x), inner.__name__, inner.__qualname__, inner.__module__


def prints_array_values(x):
    y = x * 2
    print(f"sum {y.sum():.3f} and {y.max()}")  # text made before the print's break
    return y + 1


def text_used_as_a_key(x, label):
    table = {"a": 1.0, "b": 2.0}
    return x * table[label], label.upper()  # the text's value is needed: pinned


def text_passed_through(x, label):
    print("label:", label)
    return x + 1, label


TEXT_CASES = [
    C("prints_array_values", prints_array_values,
      *(lambda k=k: (np.arange(3.0) * k,) for k in range(6)), pattern="ABCDEFA",
      after=max_recompiles(2)),
    C("text_used_as_a_key", text_used_as_a_key, lambda: (np.ones(2), "a"), lambda: (np.ones(2), "b"),
      pattern="AABBA"),
    C("text_passed_through", text_passed_through, lambda: (np.ones(2), "alpha"),
      lambda: (np.ones(2), "gamma"), lambda: (np.ones(2), "delta"), pattern="ABCABC",
      after=max_recompiles(2)),
]  # fmt: skip

NUMBER_CASES = [
    C(
        "split_loop_prints_round",
        split_loop_prints_round,
        lambda: (np.arange(3.0) + 0.123456789,),
        lambda: (np.arange(3.0) - 0.5,),
        after=_stable(3),
    ),
    C("split_loop_conversions", split_loop_conversions, lambda: (np.ones(2),), after=_stable(3)),
    C("round_ndigits", round_ndigits, *values(*FLOATS), pattern="ABCDEA", after=max_recompiles(1)),
    C("round_to_int", round_to_int, *values(*FLOATS), pattern="ABCDEA", after=max_recompiles(1)),
    C("int_of_float", int_of_float, *values(*FLOATS), pattern="ABCDEA", after=max_recompiles(1)),
    C(
        "int_of_float_raises",
        int_of_float,
        *values(1.5, float("nan"), float("inf"), -2.5),
        pattern="ABCDA",
    ),
    C(
        "float_of_int",
        float_of_int,
        *values(3, 7, -2, 10),
        pattern="ABCDA",
        after=max_recompiles(1),
    ),
    C(
        "round_int_ndigits",
        round_int_ndigits,
        *values(13, 27, -45, 5),
        pattern="ABCDA",
        after=max_recompiles(1),
    ),
    C(
        "round_keeps_the_sign_of_zero",
        round_keeps_the_sign_of_zero,
        *values(0.5, -0.001, 0.001, -0.0),
        pattern="ABCDA",
    ),
    C("round_then_compare", round_then_compare, *values(*FLOATS), pattern="ABCDEA"),
    C("int_of_float_as_size", int_of_float_as_size, *values(2.5, 3.9, 2.1), pattern="ABCA"),
    C(
        "builtin_len_replaced_by_new_functions",
        uses_len,
        lambda: (np.ones(3), [1, 2]),
        lambda: (np.ones(3), Tagged([1, 2])),
        pattern="AABBBBA",
        make_compiled=_compiled_under(_replacing_len_with_a_new_function),
        eager_fn=_replacing_len_with_a_new_function(uses_len),
        after=max_recompiles(1),
    ),
    C(
        "global_len_shadowed_by_new_functions",
        uses_len,
        lambda: (np.ones(3), [1, 2]),
        lambda: (np.ones(3), Tagged([1, 2])),
        pattern="AABBBBA",
        make_compiled=_compiled_under(_shadowing_len_with_a_new_function),
        eager_fn=_shadowing_len_with_a_new_function(uses_len),
        after=max_recompiles(1),
    ),
    C(
        "global_closure_made_anew",
        calls_global_scaler,
        lambda: (np.ones(3),),
        lambda: (np.ones(3),),
        pattern="AABBBA",
        setup=set_scaler,
        after=max_recompiles(1),
    ),
    C(
        "global_defaults_made_anew",
        calls_global_with_default,
        lambda: (np.ones(3),),
        lambda: (np.ones(3),),
        pattern="AABBBA",
        setup=set_with_default,
        after=max_recompiles(1),
    ),
    C(
        "wrapper_names_differ",
        reads_the_function_name,
        lambda: (np.ones(3),),
        lambda: (np.ones(3),),
        pattern="AABBA",
        setup=set_named,
    ),
    C(
        "same_code_other_globals",
        calls_same_code_other_globals,
        lambda: (np.ones(3),),
        lambda: (np.ones(3),),
        pattern="AABBA",
        setup=set_times,
    ),
    C(
        "allow_in_graph_of_a_new_closure",
        allows_a_new_closure_in_graph,
        lambda: (np.ones(3),),
        lambda: (np.ones(3),),
        pattern="AABBA",
        setup=set_scaler,
    ),
    C("made_function_names", made_function_names, lambda: (np.ones(3),)),
    C("split_loop_prints_text", split_loop_prints_text, lambda: (np.ones(2),), after=_stable(3)),
    C("returns_text", returns_text, *values(*FLOATS), pattern="ABCDEA", after=max_recompiles(1)),
    C("text_used_as_str", text_used_as_str, *values(2.5, 2.499, 10.0), pattern="ABCA"),
    C("text_methods_and_items", text_methods_and_items, *values(2.5, 31.0), pattern="ABBA"),
    C("char_of_int_raises_for_some", char_of_int, *values(65, 66, -1, 67), pattern="ABCDA"),
]

CASES = BOOL_CASES + FOLD_CASES + NUMBER_CASES + TEXT_CASES


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_eager(case):
    case.run()


# Under Python's default filters DeprecationWarning shows in __main__ only: the graph's and the
# glue's warnings must show under the user's module, as eager code's do.
_DEFAULT_FILTERS_SCRIPT = """
import warnings
import numpy as np
import tcompile as tc

warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: print(
    category.__name__, str(message)[:40], lineno)

def f(x, flag):
    y = x + bool(NotImplemented)
    for i in range(3):
        y = y + ~flag
    print("break")
    return y + ~flag

fn = tc.compile(f, backend="eager") if {compiled} else f
for _ in range(3):
    fn(np.ones(2), True)
"""


def test_warnings_show_under_the_default_filters_as_eagerly():
    eager, compiled = (run_script(_DEFAULT_FILTERS_SCRIPT.format(compiled=c)) for c in (0, 1))
    assert "DeprecationWarning" in eager
    assert compiled == eager
