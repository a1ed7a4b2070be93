"""Warnings: a compiled call emits the warnings eager emits (category and message, in order, as
many times), on every call, not only while tracing; `np.errstate` and `np.seterr` are respected;
tracing in one thread does not swallow warnings another thread emits meanwhile.
"""

from __future__ import annotations

import sys
import threading
import warnings

import numpy as np
import pytest
from diffharness import C, case_id

import tcompile as tc


def sqrt_neg_twice():
    a = np.sqrt(-1.0)
    b = np.sqrt(-1.0)
    return a, b


def sqrt_neg_twice_arg(x):
    a = np.sqrt(-1.0) + x
    b = np.sqrt(-1.0) * x
    return a, b


def float32_const_overflow():
    return np.float32(3e38) * np.float32(10)


def float32_arg_overflow(x):
    return x * np.float32(10), np.float32(3e38) * np.float32(10)


def log_zero_const():
    return np.log(0.0)


def log_array(x):
    return np.log(x)


def nanmean_all_nan(x):
    return np.nanmean(x)


def complex_astype(z):
    return z.astype(np.float64)


def int_div_zero(a, b):
    return a // b, a % b


def errstate_ignore_all(x):
    with np.errstate(all="ignore"):
        return np.log(x), np.sqrt(-x), 1.0 / x


def errstate_partial(x):
    with np.errstate(divide="ignore"):
        a = np.log(x)
    b = np.log(x)
    return a, b


def errstate_warn_explicit(x):
    with np.errstate(divide="warn", invalid="ignore"):
        return np.log(x), np.sqrt(-x - 1)


def user_warning(x):
    warnings.warn("user message", stacklevel=1)
    return x * 2


def user_deprecation(x, k):
    if k > 1:
        warnings.warn(f"k={k} is deprecated", DeprecationWarning, stacklevel=2)
    return x * k


def _helper_warns(x):
    warnings.warn("from helper", RuntimeWarning, stacklevel=2)
    return x + 1


def nested_warning(x):
    return _helper_warns(x) * 2


def float64_overflow(x):
    return np.float64(1e308) * 10 + x.sum()


def exp_overflow(x):
    return np.exp(x)


def arccos_invalid():
    return np.arccos(2.0)


def zero_over_zero(x):
    return 0.0 / x[0]


def divide_array_zero(x):
    return np.divide(x, 0)


def mean_empty(x):
    return np.mean(x[:0])


def std_ddof(x):
    return np.std(x, ddof=x.shape[0])


def cast_invalid(x):
    return x.astype(np.int8)


def int_scalar_overflow(k):
    return np.int64(2**62) * k


def warning_order(x):
    a = np.sqrt(-1.0)
    b = np.log(x)
    c = np.sqrt(-2.0)
    return a, b, c


def warning_in_loop(x):
    out = []
    for i in range(3):
        out.append(np.log(x * i))
    return out


def after_break(x):
    print("break")
    return np.log(x * 0)


def errstate_decorated_inner(x):
    @np.errstate(divide="ignore")
    def inner(v):
        return np.log(v)

    return inner(x), np.log(x)


def set_seterr(letter):
    np.seterr(divide="ignore" if letter == "B" else "warn")


def seterr_between_calls(x):
    return np.log(x)


def warn_then_raise(x):
    a = np.log(x)
    return np.linalg.inv(a.reshape(2, 2))


def catch_inside(x):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = np.log(x)
    return r, [str(w.message) for w in rec]


def filter_inside(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = np.log(x)
    return r, np.log(x)


def zpos():
    return np.array([1.0, 2.0, 0.5, 4.0])


def zzero():
    return np.array([1.0, 0.0, 0.5, 0.0])


CASES = [
    C("sqrt_neg_twice", sqrt_neg_twice, lambda: ()),
    C("sqrt_neg_twice_arg", sqrt_neg_twice_arg, lambda: (1.0,), lambda: (np.arange(2.0),)),
    C("float32_const_overflow", float32_const_overflow, lambda: ()),
    C(
        "float32_arg_overflow",
        float32_arg_overflow,
        lambda: (np.float32(1.0),),
        lambda: (np.float32(3e38),),
    ),
    C("log_zero_const", log_zero_const, lambda: ()),
    C("log_array_zeros", log_array, lambda: (zpos(),), lambda: (zzero(),)),
    C("log_array_zeros_first", log_array, lambda: (zzero(),), lambda: (zpos(),)),
    C(
        "nanmean_all_nan",
        nanmean_all_nan,
        lambda: (np.array([1.0, np.nan]),),
        lambda: (np.array([np.nan, np.nan]),),
    ),
    C(
        "complex_astype",
        complex_astype,
        lambda: (np.array([1 + 2j, 3 - 1j]),),
        lambda: (np.array([0j, -1j]),),
    ),
    C(
        "int_div_zero",
        int_div_zero,
        lambda: (np.arange(4), np.array([1, 2, 3, 4])),
        lambda: (np.arange(4), np.array([1, 0, 3, 0])),
    ),
    C("errstate_ignore_all", errstate_ignore_all, lambda: (zpos(),), lambda: (zzero(),)),
    C("errstate_partial", errstate_partial, lambda: (zpos(),), lambda: (zzero(),)),
    C("errstate_warn_explicit", errstate_warn_explicit, lambda: (zpos(),), lambda: (zzero(),)),
    C("user_warning", user_warning, lambda: (zpos(),)),
    C("user_deprecation", user_deprecation, lambda: (zpos(), 1), lambda: (zpos(), 2)),
    C("nested_warning", nested_warning, lambda: (zpos(),), lambda: (zzero(),)),
    C("float64_overflow", float64_overflow, lambda: (zpos(),)),
    C("exp_overflow", exp_overflow, lambda: (zpos(),), lambda: (zpos() * 1000,)),
    C("arccos_invalid", arccos_invalid, lambda: ()),
    C("zero_over_zero", zero_over_zero, lambda: (zpos(),), lambda: (zzero()[::-1].copy(),)),
    C("divide_array_zero", divide_array_zero, lambda: (zpos(),), lambda: (zzero(),)),
    C("mean_empty", mean_empty, lambda: (zpos(),)),
    C("std_ddof", std_ddof, lambda: (zpos(),), lambda: (zpos()[:1].copy(),)),
    C(
        "cast_invalid",
        cast_invalid,
        lambda: (np.array([1.0, 2.0]),),
        lambda: (np.array([np.nan, np.inf]),),
    ),
    C("int_scalar_overflow", int_scalar_overflow, lambda: (1,), lambda: (4,)),
    C("warning_order", warning_order, lambda: (zpos(),), lambda: (zzero(),)),
    C("warning_in_loop", warning_in_loop, lambda: (zpos(),), lambda: (zzero(),)),
    C("after_break", after_break, lambda: (zpos(),)),
    C("errstate_decorated_inner", errstate_decorated_inner, lambda: (zpos(),), lambda: (zzero(),)),
    C(
        "seterr_between_calls",
        seterr_between_calls,
        lambda: (zzero(),),
        lambda: (zzero(),),
        setup=set_seterr,
    ),
    C("warn_then_raise", warn_then_raise, lambda: (zpos(),), lambda: (zzero(),)),
    C("catch_inside", catch_inside, lambda: (zpos(),), lambda: (zzero(),)),
    C("filter_inside", filter_inside, lambda: (zpos(),), lambda: (zzero(),)),
]


ERRCALL_LOG = []


def log_under_errcall(x):
    return np.log(x)


def set_errcall(letter):
    np.seterrcall(ERRCALL_LOG.append)
    np.seterr(divide="call" if letter == "A" else "warn")
    ERRCALL_LOG.clear()


def observe_errcall():
    logged = list(ERRCALL_LOG)
    np.seterrcall(None)
    np.seterr(divide="warn")
    return logged


def warnings_as_errors(call):
    def run(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            return call(*args, **kwargs)

    return run


def append_then_warn(x, lst):
    lst.append(x.sum())
    return np.log(x)


def float16_overflow(x):
    return x.astype(np.float16)


def scalar_floor_divide_zero(k):
    return np.int64(7) // k, np.float64(1.0) / k


def power_zero_negative(x):
    return np.power(x, -1)


def corrcoef_constant(x):
    return np.corrcoef(x, x * 0 + 1)


def var_single_ddof(x):
    return np.var(x, ddof=1)


CASES += [
    C(
        "errcall_instead_of_warning",
        log_under_errcall,
        lambda: (zzero(),),
        lambda: (zzero(),),
        setup=set_errcall,
        observe=observe_errcall,
    ),
    C(
        "warnings_as_errors",
        append_then_warn,
        lambda: (zpos(), []),
        lambda: (zzero(), []),
        eager_fn=warnings_as_errors(append_then_warn),
        make_compiled=lambda fn: warnings_as_errors(tc.compile(fn, backend="eager")),
    ),
    C("float16_overflow", float16_overflow, lambda: (zpos(),), lambda: (zpos() * 1e5,)),
    C(
        "scalar_floor_divide_zero",
        scalar_floor_divide_zero,
        lambda: (np.int64(2),),
        lambda: (np.int64(0),),
    ),
    C("power_zero_negative", power_zero_negative, lambda: (zpos(),), lambda: (zzero(),)),
    C("corrcoef_constant", corrcoef_constant, lambda: (zpos(),)),
    C("var_single_ddof", var_single_ddof, lambda: (zpos(),), lambda: (zpos()[:1].copy(),)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_warnings_match_eager(case):
    saved = np.geterr()  # seterr_between_calls changes it
    try:
        case.run()
    finally:
        np.seterr(**saved)


def test_tracing_does_not_swallow_warnings_of_another_thread():
    """A thread emits warnings in a loop while the main thread compiles fresh functions (whose
    tracing runs warning operations). Every warning the thread emitted must arrive."""
    stop = threading.Event()
    emitted = [0]

    def emitter():
        while not stop.is_set():
            warnings.warn(f"background {emitted[0]}", UserWarning, stacklevel=1)
            emitted[0] += 1

    def make(k):
        def f(x):
            a = np.log(x * 0)  # warns while traced (run on example values) and when run
            b = np.sqrt(-x)
            return a + b + k

        return f

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            t = threading.Thread(target=emitter)
            t.start()
            try:
                for k in range(40):
                    tc.compile(make(k), backend="eager")(np.arange(1.0, 4.0))
                    tc.reset()
            finally:
                stop.set()
                t.join()
            got = sum(1 for w in rec if str(w.message).startswith("background"))
    finally:
        sys.setswitchinterval(old_interval)
    assert emitted[0] > 0
    assert got == emitted[0], f"{emitted[0]} background warnings emitted, {got} arrived"
