"""Wrappers and signatures: `functools.wraps` wrappers that print (each in its own interpreter,
so that a crash of the interpreter is a failure, not the end of the test run), and resuming after
a graph break (`print`) in functions with every kind of signature, closures, nonlocal writes,
lambdas, nested functions, methods and `super()`.
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import pytest
from diffharness import C, case_id, kw, run_script

import tcompile as tc


def v3():
    return np.array([1.0, -2.0, 0.5])


# --- resume after a break, every kind of signature ------------------------------------------


def positional_only(x, y, /):
    a = x + y
    print("mid", a.sum())
    return a * 2


def keyword_only(x, *, k=2.0):
    a = x * k
    print("k", k)
    return a + k


def with_defaults(x, k=3.0, j=1.0):
    a = x * k
    print("defaults", k, j)
    return a - j


def star_args(x, *rest):
    a = x + len(rest)
    print(len(rest))
    return a + sum(rest)


def star_kwargs(x, **kwargs):
    a = x * kwargs.get("k", 1.0)
    print(sorted(kwargs))
    return a, kwargs


def star_both(x, *args, **kwargs):
    a = x + len(args)
    print(args, sorted(kwargs))
    return a * kwargs.get("k", 1.0), args


def every_kind(a, /, b, *args, c, d=1.0, **kwargs):
    s = a + b
    print("every", len(args), c, d, sorted(kwargs))
    return s * c + d + len(args) + len(kwargs)


def closure_over_args(x, k):
    g = lambda: x * k  # noqa: E731 (x and k become cells)
    print("closure")
    return g() + x


def closure_rebind_after_break(x, k):
    def g():
        return x * k

    print("before rebind")
    k = k + 1
    return g()


def nonlocal_writes(x):
    total = 0

    def add(v):
        nonlocal total
        total += v

    add(1)
    print("between")
    add(2)
    return total, x * total


def nested_defined_before_break(x):
    def inner(y, s=2.0):
        return y * s

    print("nested")
    return inner(x), inner(x, s=-1.0)


def lambda_arg(x, fn):
    a = fn(x)
    print("lambda")
    return fn(a)


LAMBDA_WITH_PRINT = lambda x, k=2.0: (print("in lambda", k), x * k)[1]  # noqa: E731


class Base:
    k = 2.0

    def __init__(self, k=2.0):
        self.k = k
        self.log = []

    def m(self, x):
        y = x * self.k
        print("m", self.k)
        self.log.append(y.sum())
        return y + self.k


class Derived(Base):
    def m(self, x):
        a = super().m(x)
        print("derived")
        return a + 1

    def m_after(self, x):
        print("before super")
        return super().m(x) * 2


def break_in_callee(x):
    return x + _helper_prints(x)


def _helper_prints(x, scale=2.0):
    print("helper", scale)
    return x * scale


def several_breaks(x, lst):
    lst.append(1)
    print("one")
    lst.append(2)
    print("two")
    lst.append(3)
    return x * len(lst)


def break_in_errstate(x):
    with np.errstate(divide="ignore"):
        a = 1.0 / x
        print("inside errstate")
        b = np.log(x * 0)
    return a, b


def deleted_local(x):
    a = x * 2
    del a
    print("deleted")
    return a  # noqa: F821 (UnboundLocalError, as eager)


def mutable_default(x, acc=[]):  # noqa: B006 (the shared default is what is tested)
    acc.append(x.sum())
    print("acc", len(acc))
    return len(acc)


def reset_mutable_default(letter):
    mutable_default.__defaults__[0].clear()


def observe_mutable_default():
    return list(mutable_default.__defaults__[0])


def kwargs_positional_by_name(x, k, j=0.0):
    print(k, j)
    return x * k + j


def break_then_genexpr(x, lst):
    print("gen")
    return sum(v * 2 for v in lst) + x


def class_body_and_staticmethod(x):
    print("s")
    return Holder.scale(x), Holder.cls_scale(x)


class Holder:
    factor = 3.0

    @staticmethod
    def scale(x):
        return x * 2

    @classmethod
    def cls_scale(cls, x):
        return x * cls.factor


def break_with_live_stack(x, lst):
    return [x.sum(), print("live"), len(lst), x.max()]


CASES = [
    C("positional_only", positional_only, lambda: (v3(), 1.0), lambda: (-v3(), v3())),
    C("keyword_only", keyword_only, lambda: (v3(),), lambda: kw(v3(), k=-1.0)),
    C(
        "with_defaults",
        with_defaults,
        lambda: (v3(),),
        lambda: (v3(), 2.0),
        lambda: kw(v3(), j=5.0),
    ),
    C("star_args", star_args, lambda: (v3(),), lambda: (v3(), 1.0, 2.0), lambda: (v3(), 5)),
    C(
        "star_kwargs",
        star_kwargs,
        lambda: (v3(),),
        lambda: kw(v3(), k=3.0, z=1),
        lambda: kw(v3(), a=1),
    ),
    C("star_both", star_both, lambda: (v3(), 1), lambda: kw(v3(), 1, 2, k=2.0)),
    C(
        "every_kind",
        every_kind,
        lambda: kw(v3(), 1.0, c=2.0),
        lambda: kw(v3(), 1.0, 2, 3, c=-1.0, d=0.5, e=1),
        lambda: kw(v3(), b=2.0, c=1.0),
    ),
    C("closure_over_args", closure_over_args, lambda: (v3(), 2.0), lambda: (-v3(), 3.0)),
    C(
        "closure_rebind_after_break",
        closure_rebind_after_break,
        lambda: (v3(), 2.0),
        lambda: (v3(), -1.0),
    ),
    C("nonlocal_writes", nonlocal_writes, lambda: (v3(),), lambda: (-v3(),)),
    C(
        "nested_defined_before_break",
        nested_defined_before_break,
        lambda: (v3(),),
        lambda: (-v3(),),
    ),
    C("lambda_arg", lambda_arg, lambda: (v3(), np.abs), lambda: (v3(), np.negative)),
    C("lambda_compiled", LAMBDA_WITH_PRINT, lambda: (v3(),), lambda: (v3(), 3.0)),
    C("method_self", Base.m, lambda: (Base(), v3()), lambda: (Base(-1.0), v3())),
    C("method_super", Derived.m, lambda: (Derived(), v3()), lambda: (Derived(3.0), -v3())),
    C(
        "method_super_after_break",
        Derived.m_after,
        lambda: (Derived(), v3()),
        lambda: (Derived(0.5), v3()),
    ),
    C("break_in_callee", break_in_callee, lambda: (v3(),), lambda: (-v3(),)),
    C("several_breaks", several_breaks, lambda: (v3(), []), lambda: (v3(), [0])),
    C(
        "break_in_errstate",
        break_in_errstate,
        lambda: (v3(),),
        lambda: (np.array([0.0, 1.0, 2.0]),),
    ),
    C("deleted_local", deleted_local, lambda: (v3(),)),
    C(
        "mutable_default",
        mutable_default,
        lambda: (v3(),),
        lambda: (-v3(),),
        setup=reset_mutable_default,
        observe=observe_mutable_default,
    ),
    C(
        "kwargs_positional_by_name",
        kwargs_positional_by_name,
        lambda: kw(v3(), k=2.0),
        lambda: kw(x=v3(), j=1.0, k=3.0),
    ),
    C("break_then_genexpr", break_then_genexpr, lambda: (v3(), [1, 2]), lambda: (v3(), [])),
    C("class_body_and_staticmethod", class_body_and_staticmethod, lambda: (v3(),)),
    C("break_with_live_stack", break_with_live_stack, lambda: (v3(), [1]), lambda: (-v3(), [])),
]


# --- callables that are not plain functions, wrappers that change the call ------------------

CACHE_LOG = []


@functools.lru_cache(maxsize=16)
def cached_double(n):
    CACHE_LOG.append(n)
    return n * 2


def calls_cached(x, n):
    return x * cached_double(n) + cached_double(n)


def reset_cache(letter):
    cached_double.cache_clear()
    CACHE_LOG.clear()


def observe_cache_log():
    return list(CACHE_LOG)


@functools.cache
def cached_array(n):
    CACHE_LOG.append(n)
    return np.arange(float(n))


def cached_array_identity(x, n):
    a = cached_array(n)
    return a is cached_array(n), a.sum() + x


def reset_cached_array(letter):
    cached_array.cache_clear()
    CACHE_LOG.clear()


def scale(x, k=2.0):
    return x * k


class CallableScale:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return x * self.s


@functools.wraps(scale)
def forwards_everything(*args, **kwargs):
    return scale(*args, **kwargs)


def doubles_first_arg(fn):
    @functools.wraps(fn)
    def w(*args, **kwargs):
        args = (args[0] * 2,) + args[1:]
        return fn(*args, **kwargs)

    return w


DOUBLED = doubles_first_arg(scale)


class Scaler:
    def __init__(self, s):
        self.s = s

    def m(self, x):
        return x * self.s


SCALER = Scaler(2.0)


def set_scaler(letter):
    SCALER.s = 2.0 if letter == "A" else -5.0


DISPATCH = functools.singledispatch(lambda v: v + 1)
DISPATCH.register(float, lambda v: v * 100)


def uses_singledispatch(x, v):
    return DISPATCH(v), x


def compiled_as_is(fn):
    return tc.compile(fn, backend="eager")


# --- more places for a break -------------------------------------------------------------------


def break_deep_in_expression(x, lst):
    return [x.sum(), {"a": (x.max(), print("deep"), [x.min(), len(lst)])}, x * 2]


def break_in_list_comprehension(x):
    return [print(i) or v * 2 for i, v in enumerate(x)]


def break_in_dict_comprehension(x):
    return {i: (print(i), v)[1] for i, v in enumerate(x)}


def break_in_errstate_in_loop(x):
    out = []
    for i in range(3):
        with np.errstate(divide="ignore"):
            print("i", i)
            out.append(np.log(x * i))
    return out


def break_in_try_in_loop(x):
    out = []
    for i in range(3):
        try:
            print("try", i)
            if i == 1:
                raise ValueError(i)
            out.append(x * i)
        except ValueError as e:
            out.append(str(e))
        finally:
            out.append("f")
    return out


def closures_made_in_loop(x):
    fns = []
    for i in range(3):
        fns.append(lambda v, i=i: v * i)
        print("made", i)
    return [f(x) for f in fns]


def late_binding_closures(x):
    fns = []
    for i in range(3):
        fns.append(lambda v: v * i)
    print("late")
    return [f(x) for f in fns]


def break_in_nullcontext(x):
    with contextlib.nullcontext(x) as y:
        print("in null")
        z = y * 2
    return z


def walrus_then_break(x):
    if (n := x.sum()) > 0:
        print("pos", n)
    return n * 2


def while_else_with_break(x):
    i = 0
    while i < 3:
        print(i)
        i += 1
    else:
        print("else")
    return x * i


def return_through_finally(x, lst):
    try:
        print("body")
        return x
    finally:
        lst.append("fin")


def break_after_unpack(x):
    a, b, c = x
    print(a)
    return a + b + c


def kwargs_order_after_break(x, **kwargs):
    print(list(kwargs))
    return x, list(kwargs.items())


def star_call_print(x, args):
    print(*args)
    return x * len(args)


def class_defined_then_break(x):
    class Local:
        k = 2.0

        def m(self, v):
            return v * self.k

    print("class")
    return Local().m(x)


GB = None


def global_write_around_break(x):
    global GB
    GB = x.sum()
    print("g")
    GB = GB * 2
    return GB


def reset_gb(letter):
    global GB
    GB = None


def observe_gb():
    return GB


CASES += [
    C(
        "lru_cache_called_twice",
        calls_cached,
        lambda: (v3(), 2),
        lambda: (v3(), 5),
        setup=reset_cache,
        observe=observe_cache_log,
    ),
    C(
        "lru_cache_object_compiled",
        cached_double,
        lambda: (2,),
        lambda: (5,),
        make_compiled=compiled_as_is,
        setup=reset_cache,
        observe=observe_cache_log,
    ),
    C(
        "functools_cache_identity",
        cached_array_identity,
        lambda: (v3()[:2], 2),
        lambda: (v3()[:2], 3),
        setup=reset_cached_array,
        observe=observe_cache_log,
    ),
    C(
        "partial_compiled",
        functools.partial(scale, k=3.0),
        lambda: (v3(),),
        lambda: kw(v3(), k=-1.0),
        make_compiled=compiled_as_is,
    ),
    C("callable_instance", CallableScale(2.0), lambda: (v3(),), make_compiled=compiled_as_is),
    C(
        "wraps_too_many_args",
        forwards_everything,
        lambda: (v3(),),
        lambda: (v3(), 5.0, 6.0),
    ),
    C("wrapper_changes_args", DOUBLED, lambda: (v3(),), lambda: kw(v3(), k=1.0)),
    C(
        "bound_method_state_changes",
        SCALER.m,
        lambda: (v3(),),
        lambda: (v3(),),
        setup=set_scaler,
        make_compiled=compiled_as_is,
    ),
    C("singledispatch", uses_singledispatch, lambda: (v3(), 1), lambda: (v3(), 1.5)),
    C(
        "break_deep_in_expression",
        break_deep_in_expression,
        lambda: (v3(), [1]),
        lambda: (-v3(), []),
    ),
    C(
        "break_in_list_comprehension",
        break_in_list_comprehension,
        lambda: (v3(),),
        lambda: (-v3(),),
    ),
    C("break_in_dict_comprehension", break_in_dict_comprehension, lambda: (v3(),)),
    C("break_in_errstate_in_loop", break_in_errstate_in_loop, lambda: (v3() ** 2,)),
    C("break_in_try_in_loop", break_in_try_in_loop, lambda: (v3(),)),
    C("closures_made_in_loop", closures_made_in_loop, lambda: (v3(),)),
    C("late_binding_closures", late_binding_closures, lambda: (v3(),)),
    C("break_in_nullcontext", break_in_nullcontext, lambda: (v3(),)),
    C("walrus_then_break", walrus_then_break, lambda: (v3(),), lambda: (-v3(),)),
    C("while_else_with_break", while_else_with_break, lambda: (v3(),)),
    C("return_through_finally", return_through_finally, lambda: (v3(), [])),
    C("break_after_unpack", break_after_unpack, lambda: (v3(),)),
    C(
        "kwargs_order_after_break",
        kwargs_order_after_break,
        lambda: kw(v3(), b=1, a=2),
        lambda: kw(v3(), a=2, b=1),
    ),
    C("star_call_print", star_call_print, lambda: (v3(), (1, 2)), lambda: (v3(), ())),
    C("class_defined_then_break", class_defined_then_break, lambda: (v3(),)),
    C(
        "global_write_around_break",
        global_write_around_break,
        lambda: (v3(),),
        lambda: (-v3(),),
        setup=reset_gb,
        observe=observe_gb,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_resume_after_break_matches_eager(case):
    case.run()


# --- functools.wraps wrappers that print, each in a fresh interpreter ------------------------

WRAPPER_PRELUDE = """
import functools
import numpy as np
import tcompile as tc
from diffharness import check, kw

def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        return fn(*args, **kwargs)
    return wrapper

def v3():
    return np.array([1.0, -2.0, 0.5])
"""

WRAPPER_BODIES = {
    "plain": """
@deco
def f(x, y):
    return x * y + 1
check(f, lambda: (v3(), 2.0), lambda: (-v3(), 3.0))
""",
    "defaults_and_kwargs": """
@deco
def f(x, k=2.0, *, j=1.0):
    return x * k - j
check(f, lambda: (v3(),), lambda: kw(v3(), 3.0, j=0.5), lambda: kw(v3(), k=-1.0))
""",
    "star_args_kwargs": """
@deco
def f(x, *args, **kwargs):
    return x + len(args) + len(kwargs)
check(f, lambda: (v3(),), lambda: kw(v3(), 1, 2, a=3))
""",
    "closure": """
def make(k):
    @deco
    def f(x):
        return x * k
    return f
check(make(2.0), lambda: (v3(),), lambda: (-v3(),))
""",
    "stacked_wrappers": """
@deco
@deco
def f(x, k=1.0):
    return x - k
check(f, lambda: (v3(),), lambda: kw(v3(), k=4.0))
""",
    "method": """
class K:
    def __init__(self, s):
        self.s = s
    @deco
    def m(self, x):
        return x * self.s
check(K.m, lambda: (K(2.0), v3()), lambda: (K(-1.0), v3()))
""",
    "wrapped_function_breaks": """
@deco
def f(x, lst):
    lst.append(x.sum())
    print("inside", len(lst))
    return x * len(lst)
check(f, lambda: (v3(), []), lambda: (-v3(), [1]))
""",
    "decorated_after_compile_of_inner": """
def g(x, k=2.0):
    return x * k
tc.compile(g, backend="eager")(v3())
w = deco(g)
check(w, lambda: (v3(),), lambda: kw(v3(), k=5.0))
""",
    "fullgraph_wrapper": """
@deco
def f(x, k=2.0):
    return x * k
try:
    tc.compile(f, backend="eager", fullgraph=True)(v3())
except tc.Unsupported:
    pass
check(f, lambda: (v3(),), lambda: kw(v3(), k=3.0))
""",
}


@pytest.mark.parametrize("name", sorted(WRAPPER_BODIES))
def test_printing_wraps_wrapper_in_subprocess(name):
    out = run_script(WRAPPER_PRELUDE + WRAPPER_BODIES[name] + "\nprint('done')\n")
    assert out.rstrip().endswith("done"), out
