"""Membership tests (`in` on arrays, lists, tuples, dicts, ranges, sets, user containers) and
ndarray subclasses (methods calling `super().sum(...)`, instances made inside the function with
`x.view(MyArr)`, `__array_finalize__`, `__array_ufunc__`, overridden operators).
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


def v3():
    return np.array([1.0, 3.0, -0.5])


def w3():
    return np.array([0.0, 2.0, 4.0])


# --- membership -------------------------------------------------------------------------------


def float_in_array(x):
    return 3.0 in x, 7.0 in x


def elem_in_list(x):
    return x[0] in [0.0], x[0] in [1.0, 2.0]


def elem_in_tuple(x):
    return x[0] in (1.0, 2.0), x[1] not in (1.0, 2.0)


def array_in_list_identity(x):
    return x in [x], x in (x,)


def array_in_list_of_copy(x):
    return x in [x.copy()]


def array_in_list_of_other(x, y):
    return x in [y]


def key_in_dict(d, k):
    return "a" in d, k in d, len(d)


def int_in_range(k):
    return k in range(5), k in range(1, 10, 3), k not in range(0)


def value_in_range(x):
    return x[0] in range(5), x[1] in range(5)


def nan_in_array(x):
    return np.nan in x, float("nan") in x


def nan_identity(x):
    v = x[1]
    return v in [v], x[1] in [x[1]]


def nan_arg_identity(s, lst):
    return s in lst, s in [s]


def int_in_int_array(xi):
    return 3 in xi, 3.5 in xi, True in xi


def float_in_set(x):
    return x[0] in {0.0, 1.0}, -0.0 in {0.0}, x[2] in {-0.5}


def list_in_list(lst):
    return [1, 2] in lst, (1, 2) in lst


def shape_in_list(x):
    return x.shape in [(3,), (4,)], x.ndim in (1, 2)


def dtype_in_tuple(x):
    return x.dtype in (np.float32, np.float64), x.dtype in [np.int64]


def zero_d_in_array(x, k):
    return k in x


def subarray_in_array(x):
    return x[0:2] in x, x[::-1] in x


class Container:
    def __init__(self, items):
        self.items = items
        self.asked = []

    def __contains__(self, v):
        self.asked.append(v)
        return v in self.items


class IterOnly:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


def user_contains(x, c):
    return x[0] in c, 99.0 in c


def iter_only_contains(x, c):
    return x[0] in c, -1.0 in c


def bool_key(d):
    return 1 in d, True in d, 1.0 in d


def float_key_from_array(x, d):
    return x[0] in d, d.get(x[0], "missing")


def substring(s):
    return "ab" in s, "" in s


def none_in_list(lst):
    return None in lst


def sum_in_list(x):
    return x.sum() in [3.5, 6.0]


def in_tolist(x, k):
    return k in x.tolist()


def membership_branch(x, lst):
    if x[0] in lst:
        print("found")
        return x * 2
    return x


# --- ndarray subclasses -----------------------------------------------------------------------


class MyArr(np.ndarray):
    def total(self, axis=None):
        return super().sum(axis=axis) * 2

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return super().sum(axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs) + 1


class Info(np.ndarray):
    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", "default")


class Logged(np.ndarray):
    log: list = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        Logged.log.append((ufunc.__name__, method))
        inputs = tuple(np.asarray(i) if isinstance(i, Logged) else i for i in inputs)
        return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)


def reset_logged(letter):
    Logged.log.clear()


def observe_logged():
    return list(Logged.log)


class Priority(np.ndarray):
    __array_priority__ = 15.0


class AddOverride(np.ndarray):
    def __add__(self, other):
        return np.asarray(self) - other


def view_total(x):
    v = x.view(MyArr)
    return v.total(), type(v).__name__


def view_total_axis(x):
    v = x.view(MyArr)
    return v.total(axis=0), v.sum(axis=1)


def overridden_sum_arg(v):
    return v.sum(), np.sum(v), v.mean()


def np_mean_subclass(v):
    return np.mean(v), v.mean(axis=0)


def finalize_info(x, tag):
    v = x.view(Info)
    v.info = tag
    w = v * 2
    s = v[1:]
    return w.info, s.info, type(w).__name__


def ufunc_logged(x):
    v = x.view(Logged)
    return np.add(v, 1), np.sqrt(np.abs(v)).sum()


def result_types(v):
    return (
        type(v[1:]).__name__,
        type(v + 1).__name__,
        type(np.add(v, 1)).__name__,
        type(v.sum()).__name__,
        type(np.asarray(v)).__name__,
        type(np.asanyarray(v)).__name__,
    )


def isinstance_subclass(v):
    return isinstance(v, np.ndarray), isinstance(v, MyArr), type(v) is np.ndarray


def priority_binop(x):
    p = x.view(Priority)
    return type(x + p).__name__, type(p + x).__name__, x + p


def add_override(x):
    a = x.view(AddOverride)
    return a + 1, type(a + 1).__name__


def view_back_to_ndarray(v):
    return v.view(np.ndarray) * 2, type(v.view(np.ndarray)).__name__


def subclass_meta(v):
    return v * v.meta["scale"]


def with_meta(arr, scale):
    v = arr.view(Info)
    v.meta = {"scale": scale}
    return v


def asmatrix_inside(x):
    m = np.asmatrix(x.reshape(2, 2))
    return m * m.T, type(m.sum(axis=0)).__name__


def masked_inside(x):
    m = np.ma.masked_less(x, 0)
    return m.sum(), m.count(), m.filled(-9.0)


def recarray_inside(x):
    r = np.rec.fromarrays([x, x * 2], names="a,b")
    return r.a + r.b, r[0].b


def subclass_print(x):
    v = x.view(MyArr)
    print(v, type(v).__name__)
    return v.total()


def subclass_inplace(x):
    v = x.view(MyArr)
    v += 1
    return x, v.sum()


def subclass_in_list(x):
    v = x.view(MyArr)
    return v in [v], 3.0 in v


class Dispatch(np.ndarray):
    def __array_function__(self, func, types, args, kwargs):
        if func is np.sum:
            return "dispatched sum"
        return super().__array_function__(func, types, args, kwargs)


class GetItem(np.ndarray):
    def __getitem__(self, key):
        return super().__getitem__(key) * 10


class WithProperty(np.ndarray):
    @property
    def double(self):
        return np.asarray(self) * 2


class MyArr2(MyArr):
    def total(self, axis=None):
        return super().total(axis=axis) + 100


class Wrapped(np.ndarray):
    def __array_wrap__(self, obj, context=None, return_scalar=False):
        out = super().__array_wrap__(obj, context, return_scalar)
        if isinstance(out, np.ndarray):
            out = out.view(Wrapped)
            out.tag = "wrapped"
        return out


class Bump(np.ndarray):
    def bump(self):
        self += 1
        return super().sum()


def dispatch_np_sum(x):
    d = x.view(Dispatch)
    return np.sum(d), np.mean(d)


def getitem_override(x):
    g = x.view(GetItem)
    return g[0], g[1:], np.asarray(g)[0]


def property_on_view(x):
    p = x.view(WithProperty)
    return p.double, type(p.double).__name__


def mro_super_chain(x):
    v = x.view(MyArr2)
    return v.total(), v.sum()


def array_wrap_tag(x):
    w = x.view(Wrapped)
    r = np.sin(w)
    return type(r).__name__, getattr(r, "tag", None), r


def concatenate_subclass(x):
    v = x.view(MyArr)
    c = np.concatenate([v, v])
    return type(c).__name__, c


def copy_astype_types(x):
    v = x.view(MyArr)
    return type(v.copy()).__name__, type(v.astype(np.float32)).__name__, v.astype(np.int64)


def method_inplace_on_arg(x):
    b = x.view(Bump)
    s = b.bump()
    return s, x


CASES = [
    C("float_in_array", float_in_array, lambda: (v3(),), lambda: (w3(),)),
    C("elem_in_list", elem_in_list, lambda: (v3(),), lambda: (w3(),)),
    C("elem_in_tuple", elem_in_tuple, lambda: (v3(),), lambda: (w3(),)),
    C("array_in_list_identity", array_in_list_identity, lambda: (v3(),), lambda: (w3(),)),
    C("array_in_list_of_copy", array_in_list_of_copy, lambda: (np.array([1.0]),), lambda: (v3(),)),
    C(
        "array_in_list_of_other",
        array_in_list_of_other,
        lambda: (np.array([2.0]), np.array([2.0])),
        lambda: (np.array([2.0]), np.array([3.0])),
        lambda: (v3(), w3()),
    ),
    C("key_in_dict", key_in_dict, lambda: ({"a": 1}, "b"), lambda: ({"b": 2}, "b")),
    C("int_in_range", int_in_range, lambda: (3,), lambda: (7,), lambda: (np.int64(4),)),
    C("float_in_range", int_in_range, lambda: (2.0,), lambda: (2.5,)),
    C("value_in_range", value_in_range, lambda: (v3(),), lambda: (w3(),)),
    C("nan_in_array", nan_in_array, lambda: (np.array([1.0, np.nan]),), lambda: (v3(),)),
    C("nan_identity", nan_identity, lambda: (np.array([1.0, np.nan]),), lambda: (v3(),)),
    C(
        "nan_arg_identity",
        nan_arg_identity,
        lambda: (lambda s: (s, [s]))(float("nan")),
        lambda: (float("nan"), [float("nan")]),
    ),
    C("int_in_int_array", int_in_int_array, lambda: (np.arange(5),), lambda: (np.arange(3),)),
    C("float_in_set", float_in_set, lambda: (v3(),), lambda: (np.array([-0.0, 1.0, 2.0]),)),
    C("list_in_list", list_in_list, lambda: ([[1, 2], 3],), lambda: ([(1, 2)],)),
    C("shape_in_list", shape_in_list, lambda: (v3(),), lambda: (np.ones((2, 2)),)),
    C(
        "dtype_in_tuple",
        dtype_in_tuple,
        lambda: (v3(),),
        lambda: (np.arange(3),),
        lambda: (v3().astype(np.float32),),
    ),
    C(
        "zero_d_in_array",
        zero_d_in_array,
        lambda: (v3(), np.array(3.0)),
        lambda: (v3(), np.array(4.0)),
    ),
    C(
        "subarray_in_array",
        subarray_in_array,
        lambda: (v3(),),
        lambda: (np.array([1.0, 1.0, 1.0]),),
    ),
    C(
        "user_contains",
        user_contains,
        lambda: (v3(), Container([1.0])),
        lambda: (w3(), Container([99.0])),
    ),
    C(
        "iter_only_contains",
        iter_only_contains,
        lambda: (v3(), IterOnly([1.0])),
        lambda: (w3(), IterOnly([-1.0])),
    ),
    C("bool_key", bool_key, lambda: ({True: "t"},), lambda: ({1.0: "f"},), lambda: ({0: "z"},)),
    C(
        "float_key_from_array",
        float_key_from_array,
        lambda: (v3(), {1.0: "one"}),
        lambda: (w3(), {1.0: "one", 0: "zero"}),
    ),
    C("substring", substring, lambda: ("xaby",), lambda: ("ba",)),
    C("none_in_list", none_in_list, lambda: ([1, None],), lambda: ([np.zeros(1)],)),
    C("sum_in_list", sum_in_list, lambda: (v3(),), lambda: (w3(),)),
    C("in_tolist", in_tolist, lambda: (v3(), 3.0), lambda: (w3(), 3.0)),
    C("membership_branch", membership_branch, lambda: (v3(), [1.0]), lambda: (w3(), [1.0])),
    # subclasses
    C("view_total", view_total, lambda: (v3(),), lambda: (w3(),), lambda: (np.ones((2, 2)),)),
    C(
        "view_total_axis",
        view_total_axis,
        lambda: (np.ones((2, 3)),),
        lambda: (np.arange(6.0).reshape(2, 3),),
    ),
    C(
        "overridden_sum_arg",
        overridden_sum_arg,
        lambda: (v3().view(MyArr),),
        lambda: (w3().view(MyArr),),
    ),
    C(
        "np_mean_subclass",
        np_mean_subclass,
        lambda: (v3().view(MyArr),),
        lambda: (np.ones((2, 2)).view(MyArr),),
    ),
    C("finalize_info", finalize_info, lambda: (v3(), "a"), lambda: (w3(), "b")),
    C(
        "ufunc_logged",
        ufunc_logged,
        lambda: (v3(),),
        lambda: (w3(),),
        setup=reset_logged,
        observe=observe_logged,
    ),
    C(
        "result_types",
        result_types,
        lambda: (v3().view(MyArr),),
        lambda: (v3().view(Info),),
        lambda: (v3(),),
    ),
    C(
        "isinstance_subclass",
        isinstance_subclass,
        lambda: (v3().view(MyArr),),
        lambda: (v3(),),
        lambda: (v3().view(Info),),
    ),
    C("priority_binop", priority_binop, lambda: (v3(),), lambda: (w3(),)),
    C("add_override", add_override, lambda: (v3(),), lambda: (w3(),)),
    C(
        "view_back_to_ndarray",
        view_back_to_ndarray,
        lambda: (v3().view(MyArr),),
        lambda: (w3().view(Info),),
    ),
    C(
        "subclass_meta",
        subclass_meta,
        lambda: (with_meta(v3(), 2.0),),
        lambda: (with_meta(v3(), -1.0),),
    ),
    C("asmatrix_inside", asmatrix_inside, lambda: (np.arange(4.0),), lambda: (-np.arange(4.0),)),
    C("masked_inside", masked_inside, lambda: (v3(),), lambda: (-w3(),)),
    C("recarray_inside", recarray_inside, lambda: (v3(),), lambda: (w3(),)),
    C("subclass_print", subclass_print, lambda: (v3(),), lambda: (w3(),)),
    C("subclass_inplace", subclass_inplace, lambda: (v3(),), lambda: (w3(),)),
    C("subclass_in_list", subclass_in_list, lambda: (v3(),), lambda: (w3(),)),
    C("dispatch_np_sum", dispatch_np_sum, lambda: (v3(),), lambda: (w3(),)),
    C("getitem_override", getitem_override, lambda: (v3(),), lambda: (w3(),)),
    C("property_on_view", property_on_view, lambda: (v3(),), lambda: (w3(),)),
    C("mro_super_chain", mro_super_chain, lambda: (v3(),), lambda: (np.ones((2, 2)),)),
    C("array_wrap_tag", array_wrap_tag, lambda: (v3(),), lambda: (w3(),)),
    C("concatenate_subclass", concatenate_subclass, lambda: (v3(),), lambda: (w3(),)),
    C("copy_astype_types", copy_astype_types, lambda: (v3(),), lambda: (w3(),)),
    C("method_inplace_on_arg", method_inplace_on_arg, lambda: (v3(),), lambda: (w3(),)),
]


# --- more membership: comparisons that raise, consumed iterators, user __contains__ ------------


def in_list_other_first(x, y):
    return x in [y, x]


def in_list_self_first(x, y):
    return x in [x, y]


def scalar_in_own_array(x):
    return x[0] in x


def in_dict_views(d, k, v):
    return k in d.keys(), v in d.values(), (k, v) in d.items()


def array_in_set(x, s):
    return x in s


def str_in_str_array(a):
    return "a" in a, "z" in a


def in_2d_array(m):
    return 1 in m, [1.0, 2.0] in m


def none_in_array(x):
    return None in x


def in_generator(x):
    g = (i for i in range(5))
    r = 3 in g
    return r, list(g), x


def in_iterator(x, lst):
    it = iter(lst)
    r = 3 in it
    return r, list(it), x


class NonBool:
    def __contains__(self, v):
        return v  # coerced to bool by `in`


def contains_non_bool(c, v):
    return v in c


class RaisingContainer:
    def __contains__(self, v):
        raise KeyError("nope")


def contains_raises_after_append(c, lst):
    lst.append(1)
    return 3 in c


class EqArray:
    def __init__(self, a):
        self.a = a

    def __eq__(self, other):
        return self.a == other


def in_with_array_eq(x, e):
    return x[0] in [e]


# --- subclasses and duck arrays whose hooks have side effects --------------------------------


class FinalizeCounter(np.ndarray):
    n = 0

    def __array_finalize__(self, obj):
        FinalizeCounter.n += 1


def finalize_counter(x):
    c = x.view(FinalizeCounter)
    return np.asarray(c * 2 + 1)


def reset_finalize(letter):
    FinalizeCounter.n = 0


def observe_finalize():
    return FinalizeCounter.n


class SumLog(np.ndarray):
    log: list = []

    def sum(self, *args, **kwargs):
        SumLog.log.append("sum")
        return super().sum(*args, **kwargs)


def sum_with_log(x):
    return x.view(SumLog).sum(), np.sum(x.view(SumLog))


def reset_sumlog(letter):
    SumLog.log.clear()


def observe_sumlog():
    return list(SumLog.log)


class Duck:
    calls = 0

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        Duck.calls += 1
        return self.a


def duck_array(d):
    return np.sin(d) + np.asarray(d)


def reset_duck(letter):
    Duck.calls = 0


def observe_duck():
    return Duck.calls


class RAdd:
    __array_ufunc__ = None

    def __radd__(self, other):
        return ("radd", other.sum())


def reflected_add(x, o):
    return x + o


CASES += [
    C(
        "in_list_other_first",
        in_list_other_first,
        lambda: (np.array([1.0]), np.array([2.0])),
        lambda: (v3(), v3()),
    ),
    C(
        "in_list_self_first",
        in_list_self_first,
        lambda: (v3(), v3() + 1),
        lambda: (np.array([1.0]), np.array([1.0])),
    ),
    C(
        "scalar_in_own_array",
        scalar_in_own_array,
        lambda: (v3(),),
        lambda: (np.array([np.nan, 1.0]),),
    ),
    C("in_dict_views", in_dict_views, lambda: ({"a": 1}, "a", 1), lambda: ({"a": 1}, "b", 2)),
    C("array_in_set", array_in_set, lambda: (v3(), {1, 2})),
    C(
        "str_in_str_array",
        str_in_str_array,
        lambda: (np.array(["a", "b"]),),
        lambda: (np.array(["zz"]),),
    ),
    C(
        "in_2d_array",
        in_2d_array,
        lambda: (np.array([[1.0, 2.0]]),),
        lambda: (np.array([[3.0, 2.0], [1.0, 5.0]]),),
    ),
    C("none_in_array", none_in_array, lambda: (v3(),)),
    C("in_generator", in_generator, lambda: (v3(),)),
    C("in_iterator", in_iterator, lambda: (v3(), [1, 3, 4]), lambda: (v3(), [5, 6])),
    C("contains_non_bool", contains_non_bool, lambda: (NonBool(), 0), lambda: (NonBool(), 2)),
    C(
        "contains_raises_after_append",
        contains_raises_after_append,
        lambda: (RaisingContainer(), []),
    ),
    C(
        "in_with_array_eq",
        in_with_array_eq,
        lambda: (v3(), EqArray(np.array([1.0]))),
        lambda: (v3(), EqArray(v3())),
    ),
    C(
        "finalize_counter",
        finalize_counter,
        lambda: (v3(),),
        lambda: (w3(),),
        setup=reset_finalize,
        observe=observe_finalize,
    ),
    C(
        "sum_with_log",
        sum_with_log,
        lambda: (v3(),),
        lambda: (w3(),),
        setup=reset_sumlog,
        observe=observe_sumlog,
    ),
    C(
        "duck_array",
        duck_array,
        lambda: (Duck(v3()),),
        lambda: (Duck(w3()),),
        setup=reset_duck,
        observe=observe_duck,
    ),
    C("reflected_add", reflected_add, lambda: (v3(), RAdd()), lambda: (w3(), RAdd())),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_membership_and_subclasses_match_eager(case):
    case.run()
