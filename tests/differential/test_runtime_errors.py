"""A graph that raises at run time behaves exactly like eager.

Side effects made before the raising operation (list append, dict set, attribute set, global and
nonlocal writes, in-place updates of arguments) are visible after the exception, exactly once;
`try/except/finally` around operations that raise only for some values take the same path; the
exception has the same type and message. Sequences alternate good and bad values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from diffharness import C, case_id
from plain_user_code import assert_fstring_message, assert_on_value, assert_without_message

import tcompile as tc


class Obj:
    def __init__(self):
        self.v = None
        self.n = 0


def good_m():
    return np.array([[2.0, 1.0], [1.0, 3.0]])


def sing_m():
    return np.array([[1.0, 2.0], [2.0, 4.0]])


def notpd_m():
    return np.array([[1.0, 2.0], [2.0, 1.0]])


def vec():
    return np.array([0.5, -1.0, 2.0])


def ro(a):
    a.flags.writeable = False
    return a


# --- module state written before the raise ---------------------------------------------------

G_LAST = None
COUNT = 0


def reset_globals(letter):
    global G_LAST, COUNT
    G_LAST = None
    COUNT = 0


def observe_globals():
    return (G_LAST, COUNT)


def make_nonlocal_case():
    count = 0
    seen = []

    def nonlocal_write_then_inv(x, m):
        nonlocal count
        count += 1
        seen.append(x.sum())
        return np.linalg.inv(m) @ x[:2]

    def reset(letter):
        nonlocal count
        count = 0
        seen.clear()

    def observe():
        return count, list(seen)

    return nonlocal_write_then_inv, reset, observe


NONLOCAL_FN, NONLOCAL_RESET, NONLOCAL_OBSERVE = make_nonlocal_case()


# --- functions --------------------------------------------------------------------------------


def append_then_inv(x, m, log):
    log.append(x.sum())
    return np.linalg.inv(m)


def dict_set_then_cholesky(x, m, d):
    d["s"] = x * 2
    d["n"] = len(d)
    return np.linalg.cholesky(m)


def attr_set_then_inv(x, m, obj):
    obj.v = x + 1
    obj.n += 1
    return np.linalg.inv(m).sum()


def global_write_then_inv(x, m):
    global G_LAST, COUNT
    G_LAST = x.max()
    COUNT += 1
    return np.linalg.inv(m)


def try_inv_fallback(x, m):
    try:
        return np.linalg.inv(m) @ x[:2]
    except np.linalg.LinAlgError as e:
        return str(e), m.sum()


def try_cholesky_fallback(m, log):
    try:
        r = np.linalg.cholesky(m)
        log.append("ok")
        return r
    except np.linalg.LinAlgError:
        log.append("not pd")
        return np.eye(2)


def write_readonly(x):
    x[0] = 1.0
    return x.sum()


def try_write_readonly(x, log):
    try:
        x[1] = -5.0
        log.append("written")
    except ValueError as e:
        log.append(str(e))
    return x * 2


def divide_raise(x, y):
    with np.errstate(divide="raise"):
        return x / y


def try_divide_raise(x, y, log):
    log.append(1)
    try:
        with np.errstate(divide="raise"):
            r = x / y
    except FloatingPointError as e:
        log.append(str(e))
        r = np.zeros_like(x)
    return r


def overflow_raise(x):
    with np.errstate(over="raise"):
        return np.exp(x)


def try_overflow_raise(x):
    try:
        with np.errstate(over="raise"):
            return np.exp(x).sum()
    except FloatingPointError as e:
        return type(e).__name__, str(e)


def invalid_raise(x, log):
    log.append(x.min())
    with np.errstate(invalid="raise"):
        return np.sqrt(x)


def fancy_index_oob(x, idx, log):
    log.append(len(log))
    return x[idx]


def try_fancy_index_oob(x, idx):
    try:
        return x[idx] * 2
    except IndexError as e:
        return str(e)


def take_oob(x, idx):
    return np.take(x, idx)


def try_take_oob(x, idx, log):
    try:
        r = np.take(x, idx)
    except IndexError:
        log.append("oob")
        r = x[:1]
    return r + 1


def int_negative_power(a, p):
    return a**p


def try_int_negative_power(a, p):
    try:
        return a**p
    except ValueError as e:
        return str(e)


def finally_block(x, m, log):
    try:
        log.append("start")
        return np.linalg.inv(m) @ x[:2]
    finally:
        log.append("finally")


def except_log_reraise(m, log):
    try:
        return np.linalg.inv(m)
    except np.linalg.LinAlgError:
        log.append("bad")
        raise


def inplace_then_inv(x, m):
    x += 1
    x[0] *= 2
    return np.linalg.inv(m)


def setitem_then_oob(x, idx):
    x[0] = 99.0
    return x[idx]


def out_inplace_then_raise(x, m):
    np.add(x, 1, out=x)
    return np.linalg.solve(m, x[:2])


def extend_then_raise(x, lst, k):
    lst.extend([x.sum(), k])
    lst[0:1] = ["replaced"]
    return 1 / k


def raise_on_value(x, lst):
    lst.append(x.sum())
    if x.sum() > 0:
        raise ValueError(f"positive sum {x.sum()}")
    return x


def dict_pop_keyerror(x, d, key):
    d["a"] = x.sum()
    return d.pop(key)


def reshape_invalid(x, n):
    x[0] = -1.0
    return x.reshape(n, -1)


def helper_raises(x, log):
    log.append(x.shape)
    return np.linalg.inv(x)


def call_helper_that_raises(x, log):
    log.append("before")
    r = helper_raises(x, log)
    log.append("after")
    return r


def loop_until_raise(ms, acc, log):
    for i in range(len(ms)):
        log.append(i)
        acc += np.linalg.inv(ms[i])
    return acc


def try_except_else(m, log):
    try:
        r = np.linalg.inv(m)
    except np.linalg.LinAlgError:
        log.append("except")
        r = None
    else:
        log.append("else")
        r = r * 2
    finally:
        log.append("finally")
    return r


def recover_partial_writes(x, idx):
    try:
        x[:2] = 7.0
        x[idx] = 0.0
    except IndexError:
        pass
    return x


def nested_try(m, log):
    try:
        try:
            return np.linalg.inv(m)
        finally:
            log.append("inner finally")
    except np.linalg.LinAlgError as e:
        log.append(type(e).__name__)
        return None


def exception_details(m):
    try:
        np.linalg.inv(m)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e), e.args
    return "none"


def keyerror_from_value(x, d):
    d["seen"] = True
    return d[int(x[0])]


def solve_singular(m, b, log):
    log.append(b.sum())
    b *= 2
    return np.linalg.solve(m, b)


CASES = [
    C(
        "append_then_inv",
        append_then_inv,
        lambda: (vec(), good_m(), []),
        lambda: (vec() * 2, sing_m(), [0]),
    ),
    C(
        "append_then_inv_alternating",
        append_then_inv,
        lambda: (vec(), good_m(), []),
        lambda: (vec() * 2, sing_m(), [0]),
        pattern="ABABA",
    ),
    C(
        "dict_set_then_cholesky",
        dict_set_then_cholesky,
        lambda: (vec(), good_m(), {}),
        lambda: (-vec(), notpd_m(), {"z": 1}),
    ),
    C(
        "attr_set_then_inv",
        attr_set_then_inv,
        lambda: (vec(), good_m(), Obj()),
        lambda: (vec() - 3, sing_m(), Obj()),
    ),
    C(
        "global_write_then_inv",
        global_write_then_inv,
        lambda: (vec(), good_m()),
        lambda: (vec() + 5, sing_m()),
        setup=reset_globals,
        observe=observe_globals,
    ),
    C(
        "nonlocal_write_then_inv",
        NONLOCAL_FN,
        lambda: (vec(), good_m()),
        lambda: (-vec(), sing_m()),
        setup=NONLOCAL_RESET,
        observe=NONLOCAL_OBSERVE,
    ),
    C("try_inv_fallback", try_inv_fallback, lambda: (vec(), good_m()), lambda: (vec(), sing_m())),
    C(
        "try_cholesky_fallback",
        try_cholesky_fallback,
        lambda: (good_m(), []),
        lambda: (notpd_m(), []),
        pattern="ABABA",
    ),
    C("write_readonly", write_readonly, lambda: (vec(),), lambda: (ro(vec()),)),
    C("try_write_readonly", try_write_readonly, lambda: (vec(), []), lambda: (ro(vec()), [])),
    C(
        "divide_raise",
        divide_raise,
        lambda: (vec(), np.array([1.0, 2.0, 4.0])),
        lambda: (vec(), np.array([1.0, 0.0, 4.0])),
    ),
    C(
        "try_divide_raise",
        try_divide_raise,
        lambda: (vec(), np.array([1.0, 2.0, 4.0]), []),
        lambda: (vec(), np.array([1.0, 0.0, 4.0]), []),
    ),
    C("overflow_raise", overflow_raise, lambda: (vec(),), lambda: (vec() * 1000,)),
    C("try_overflow_raise", try_overflow_raise, lambda: (vec(),), lambda: (vec() * 1000,)),
    C("invalid_raise", invalid_raise, lambda: (np.abs(vec()), []), lambda: (vec(), [])),
    C(
        "fancy_index_oob",
        fancy_index_oob,
        lambda: (vec(), np.array([0, 2]), []),
        lambda: (vec(), np.array([0, 3]), []),
    ),
    C(
        "try_fancy_index_oob",
        try_fancy_index_oob,
        lambda: (vec(), np.array([2, -3])),
        lambda: (vec(), np.array([-4, 1])),
    ),
    C("take_oob", take_oob, lambda: (vec(), np.array([1, 2])), lambda: (vec(), np.array([5, 0]))),
    C(
        "try_take_oob",
        try_take_oob,
        lambda: (vec(), np.array([1, 2]), []),
        lambda: (vec(), np.array([5, 0]), []),
    ),
    C(
        "int_negative_power",
        int_negative_power,
        lambda: (np.arange(1, 5), 2),
        lambda: (np.arange(1, 5), -1),
    ),
    C(
        "try_int_negative_power",
        try_int_negative_power,
        lambda: (np.arange(1, 5), 3),
        lambda: (np.arange(1, 5), -2),
    ),
    C(
        "int_array_negative_array_power",
        int_negative_power,
        lambda: (np.arange(1, 5), np.array(2)),
        lambda: (np.arange(1, 5), np.array(-1)),
    ),
    C(
        "finally_block",
        finally_block,
        lambda: (vec(), good_m(), []),
        lambda: (vec(), sing_m(), []),
    ),
    C("except_log_reraise", except_log_reraise, lambda: (good_m(), []), lambda: (sing_m(), [])),
    C("inplace_then_inv", inplace_then_inv, lambda: (vec(), good_m()), lambda: (vec(), sing_m())),
    C(
        "setitem_then_oob",
        setitem_then_oob,
        lambda: (vec(), np.array([1])),
        lambda: (vec(), np.array([7])),
    ),
    C(
        "out_inplace_then_raise",
        out_inplace_then_raise,
        lambda: (vec(), good_m()),
        lambda: (vec(), sing_m()),
    ),
    C(
        "extend_then_raise",
        extend_then_raise,
        lambda: (vec(), [1, 2], 2.0),
        lambda: (vec(), [1, 2], 0.0),
    ),
    C("raise_on_value", raise_on_value, lambda: (-vec() - 1, []), lambda: (vec() + 1, [])),
    C("assert_on_value", assert_on_value, lambda: (np.abs(vec()), []), lambda: (vec(), [])),
    C("assert_without_message", assert_without_message, lambda: (vec(), []), lambda: (-vec(), [])),
    C("assert_fstring_message", assert_fstring_message, lambda: (vec(),), lambda: (vec() * 10,)),
    C(
        "dict_pop_keyerror",
        dict_pop_keyerror,
        lambda: (vec(), {"b": 2}, "b"),
        lambda: (vec(), {"b": 2}, "c"),
    ),
    C(
        "reshape_invalid",
        reshape_invalid,
        lambda: (np.arange(6.0), 2),
        lambda: (np.arange(6.0), 4),
    ),
    C(
        "call_helper_that_raises",
        call_helper_that_raises,
        lambda: (good_m(), []),
        lambda: (sing_m(), []),
    ),
    C(
        "loop_until_raise",
        loop_until_raise,
        lambda: ([good_m(), good_m() * 2, good_m()], np.zeros((2, 2)), []),
        lambda: ([good_m(), sing_m(), good_m()], np.zeros((2, 2)), []),
    ),
    C("try_except_else", try_except_else, lambda: (good_m(), []), lambda: (sing_m(), [])),
    C(
        "recover_partial_writes",
        recover_partial_writes,
        lambda: (vec(), np.array([2])),
        lambda: (vec(), np.array([3])),
    ),
    C("nested_try", nested_try, lambda: (good_m(), []), lambda: (sing_m(), []), pattern="BAABA"),
    C("exception_details", exception_details, lambda: (good_m(),), lambda: (sing_m(),)),
    C(
        "keyerror_from_value",
        keyerror_from_value,
        lambda: (np.array([1.0, 2.0]), {1: "one"}),
        lambda: (np.array([2.0, 2.0]), {1: "one"}),
    ),
    C(
        "solve_singular",
        solve_singular,
        lambda: (good_m(), np.array([1.0, 2.0]), []),
        lambda: (sing_m(), np.array([1.0, 2.0]), []),
    ),
    # Captured in one graph (or tc.Unsupported): the raising graph must still act like eager.
    C(
        "fullgraph_append_then_inv",
        append_then_inv,
        lambda: (vec(), good_m(), []),
        lambda: (vec() * 2, sing_m(), [0]),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "fullgraph_inplace_then_inv",
        inplace_then_inv,
        lambda: (vec(), good_m()),
        lambda: (vec(), sing_m()),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "fullgraph_setitem_then_oob",
        setitem_then_oob,
        lambda: (vec(), np.array([1])),
        lambda: (vec(), np.array([7])),
        fullgraph=True,
        break_ok=True,
    ),
]


# --- a graph that raises after emitting warnings or calling back into Python --------------------


def warn_then_inv(x, m):
    a = np.log(x)
    return a, np.linalg.inv(m)


def errstate_ignored_then_warn_then_inv(x, m):
    with np.errstate(divide="ignore"):
        a = np.log(x)
    b = np.sqrt(x - 5)
    return a, b, np.linalg.inv(m)


def break_then_warn_then_inv(x, m, log):
    log.append(1)
    print("break")
    log.append(2)
    y = np.log(x)
    return y, np.linalg.inv(m)


def inlined_warns_then_raises(x, m, log):
    def helper(a):
        log.append(np.log(a).sum())
        return np.linalg.inv(m)

    return helper(x) * 2


ERRCALL_LOG = []


def errcall_then_inv(x, m):
    a = np.log(x)
    return a, np.linalg.inv(m)


def set_errcall(letter):
    np.seterrcall(ERRCALL_LOG.append)
    np.seterr(divide="call")
    ERRCALL_LOG.clear()


def observe_errcall():
    logged = list(ERRCALL_LOG)
    np.seterr(divide="warn")
    np.seterrcall(None)
    return logged


class Counted(np.ndarray):
    n = 0

    def __array_finalize__(self, obj):
        Counted.n += 1


def finalize_counter_then_inv(x, m):
    c = x.view(Counted) * 2
    return np.asarray(c), np.linalg.inv(m)


def reset_counted(letter):
    Counted.n = 0


def observe_counted():
    return Counted.n


class UfuncLog(np.ndarray):
    log: list = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        UfuncLog.log.append(ufunc.__name__)
        inputs = tuple(np.asarray(i) if isinstance(i, UfuncLog) else i for i in inputs)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)


def ufunc_log_then_inv(x, m):
    a = np.add(x.view(UfuncLog), 1)
    return np.asarray(a), np.linalg.inv(m)


def reset_ufunc_log(letter):
    UfuncLog.log.clear()


def observe_ufunc_log():
    return list(UfuncLog.log)


def inplace_view_then_inv(x, v, m):
    x += 1
    return v.sum(), np.linalg.inv(m)


def with_view(m):
    x = np.arange(4.0)
    return (x, x[1:3], m)


def containers_then_inv(x, lst, d, m):
    lst.append(x.sum())
    d["k"] = x * 2
    lst[0] = -1
    return np.linalg.inv(m)


def rng_then_inv(x, m):
    r = np.random.random()
    return r + x, np.linalg.inv(m)


def seed_rng(letter):
    np.random.seed(1234)


def observe_rng():
    return np.random.random()


class Prop:
    reads = 0

    def __init__(self, v):
        self._v = v

    @property
    def v(self):
        Prop.reads += 1
        return self._v


def property_then_inv(x, p, m):
    return x * p.v, np.linalg.inv(m)


def reset_prop(letter):
    Prop.reads = 0


def observe_prop():
    return Prop.reads


def log_then_raise_on_value(x, log):
    log.append(np.log(x))
    if x.sum() > 2.5:
        raise RuntimeError("big")
    return x


def warning_as_error_after_append(x, log):
    log.append(x.sum())
    return np.log(x)


def warnings_as_errors(call):
    def run(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            return call(*args, **kwargs)

    return run


def zpos():
    return np.array([1.0, 2.0])


def zzero():
    return np.array([0.0, 2.0])


CASES += [
    C("warn_then_inv", warn_then_inv, lambda: (zpos(), good_m()), lambda: (zzero(), sing_m())),
    C(
        "errstate_ignored_then_warn_then_inv",
        errstate_ignored_then_warn_then_inv,
        lambda: (np.array([0.0, 9.0]), good_m()),
        lambda: (np.array([0.0, 9.0]), sing_m()),
    ),
    C(
        "break_then_warn_then_inv",
        break_then_warn_then_inv,
        lambda: (zzero(), good_m(), []),
        lambda: (zzero(), sing_m(), []),
    ),
    C(
        "inlined_warns_then_raises",
        inlined_warns_then_raises,
        lambda: (zzero(), good_m(), []),
        lambda: (zzero(), sing_m(), []),
    ),
    C(
        "errcall_then_inv",
        errcall_then_inv,
        lambda: (zpos(), good_m()),
        lambda: (zzero(), sing_m()),
        setup=set_errcall,
        observe=observe_errcall,
    ),
    C(
        "finalize_counter_then_inv",
        finalize_counter_then_inv,
        lambda: (zpos(), good_m()),
        lambda: (zpos(), sing_m()),
        setup=reset_counted,
        observe=observe_counted,
    ),
    C(
        "ufunc_log_then_inv",
        ufunc_log_then_inv,
        lambda: (zpos(), good_m()),
        lambda: (zpos(), sing_m()),
        setup=reset_ufunc_log,
        observe=observe_ufunc_log,
    ),
    C(
        "inplace_view_then_inv",
        inplace_view_then_inv,
        lambda: with_view(good_m()),
        lambda: with_view(sing_m()),
    ),
    C(
        "containers_then_inv",
        containers_then_inv,
        lambda: (zpos(), [0], {}, good_m()),
        lambda: (zpos(), [0], {"k": 0}, sing_m()),
    ),
    C(
        "rng_then_inv",
        rng_then_inv,
        lambda: (1.0, good_m()),
        lambda: (1.0, sing_m()),
        setup=seed_rng,
        observe=observe_rng,
    ),
    C(
        "property_then_inv",
        property_then_inv,
        lambda: (zpos(), Prop(2.0), good_m()),
        lambda: (zpos(), Prop(-1.0), sing_m()),
        setup=reset_prop,
        observe=observe_prop,
    ),
    C(
        "log_then_raise_on_value",
        log_then_raise_on_value,
        lambda: (np.array([0.0, 1.0]), []),
        lambda: (np.array([0.0, 3.0]), []),
    ),
    C(
        "warning_as_error_after_append",
        warning_as_error_after_append,
        lambda: (zpos(), []),
        lambda: (zzero(), []),
        eager_fn=warnings_as_errors(warning_as_error_after_append),
        make_compiled=lambda fn: warnings_as_errors(tc.compile(fn, backend="eager")),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_raising_graph_matches_eager(case):
    case.run()
