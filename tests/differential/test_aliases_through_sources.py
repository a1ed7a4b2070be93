"""One array reached through several sources stays one array after a write.

An array can be reached through two attributes (``o.a`` and ``o.b``), list or dict items, globals,
closure cells, nested objects or an argument and an attribute. Tracing writes into a private
copy of the caller's memory (tracer/state/examples.py), re-pointing every example that views it; an
array first read through a second source after that write must be given the same re-pointed
example, or ``o.a is o.b`` turns False (``o.a[0] = 1; return o.a is o.b``). Each case builds
the sources sharing one array (A) and holding distinct arrays (B), writes through one source in
one of NumPy's ways, and then compares identities and values through the others.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


class Box:
    pass


def vec(n=4):
    return np.arange(float(n))


def obj_pair(shared: bool = True, n: int = 4) -> Box:
    o = Box()
    o.a = vec(n)
    o.b = o.a if shared else vec(n)
    return o


def pair(n=4):
    return lambda: (obj_pair(True, n),)


def distinct(n=4):
    return lambda: (obj_pair(False, n),)


# -- two attributes, one array: every kind of write ---------------------------------------------


def item_write_then_is(o):
    o.a[0] = 1.0
    return o.a is o.b


def iadd_then_is(o):
    o.a += 1
    return o.a is o.b


def out_then_is(o):
    np.add(o.a, 1, out=o.a)
    return o.a is o.b


def copyto_then_is(o):
    np.copyto(o.a, 5.0)
    return o.a is o.b


def sort_then_is(o):
    o.a *= -1
    o.a.sort()
    return o.a is o.b


def fill_then_is(o):
    o.a.fill(3.0)
    return o.a is o.b


def slice_write_then_is(o):
    o.a[1:] = o.a[:-1] * 2
    return o.a is o.b


def add_at_then_is(o):
    np.add.at(o.a, [0, 0, 1], 1.0)
    return o.a is o.b


def ufunc_out_positional_then_is(o):
    np.negative(o.a, o.a)
    return o.a is o.b


def write_then_values(o):
    o.a += 1
    return o.b * 2


def write_then_is_and_values(o):
    o.a[1] = 5.0
    return o.a is o.b, o.b.sum(), o.b


def write_then_is_not(o):
    o.a -= 2
    return o.b is not o.a


def write_then_branch_on_identity(o):
    o.a[2] = -1.0
    if o.a is o.b:
        return o.b + 1
    return o.b - 1


def write_through_second_then_is(o):
    o.b[0] = 7.0
    return o.b is o.a, o.a[0]


def writes_through_both(o):
    o.a += 1
    o.b *= 3
    return o.a is o.b, o.a.sum()


def write_then_return_both(o):
    o.a += 1
    return o.a, o.b


def write_in_loop_then_is(o):
    for i in range(3):
        o.a[i] += i
    return o.a is o.b


def write_break_then_is(o):
    o.a += 1
    print("between")
    return o.a is o.b


class Holder:
    def __init__(self, shared: bool):
        self.a = vec()
        self.b = self.a if shared else vec()

    def bump(self):
        self.a += 1
        return self.a is self.b


def method_write_then_is(h):
    return h.bump()


# -- other sources ------------------------------------------------------------------------------


def list_items(lst):
    lst[0][0] = 1.0
    return lst[0] is lst[1]


def attr_then_list_item(o, lst):
    o.a += 1
    return o.a is lst[0], lst[0].sum()


def dict_items(d):
    d["a"] += 1
    return d["a"] is d["b"]


def attr_then_dict_item(o, d):
    o.a[3] = 9.0
    return d["k"] is o.a, d["k"][3]


def tuple_items(t):
    t[0][0] = 4.0
    return t[0] is t[1]


def argument_then_attribute(a, o):
    a += 1
    return o.a is a


def attribute_then_argument(o, a):
    o.a += 1
    return a is o.a, a.sum()


def nested_objects(o):
    o.inner.a[0] = 2.0
    return o.inner.a is o.a, o.inner.b is o.a


def three_sources(o, lst, d):
    d["k"] *= 2
    return o.a is lst[0], lst[0] is d["k"], o.a.sum()


G_A = G_B = None


def set_globals(letter):
    global G_A, G_B
    G_A = vec()
    G_B = G_A if letter == "A" else vec()


def observe_globals():
    return G_A, G_B, G_A is G_B


def globals_write_then_is():
    G_A[0] = 3.0
    return G_A is G_B


def globals_iadd_then_values():
    G_A[1:] += 1
    return G_B.sum(), G_B is G_A


def make_closure_case():
    a = b = None

    def closure_write_then_is():
        a[0] += 6.0
        return a is b, b[0]

    def reset(letter):
        nonlocal a, b
        a = vec()
        b = a if letter == "A" else vec()

    def observe():
        return a, b, a is b

    return closure_write_then_is, reset, observe


CLOSURE_FN, CLOSURE_RESET, CLOSURE_OBSERVE = make_closure_case()


# -- a view of one array in another source ------------------------------------------------------


def view_attr(shared: bool = True) -> Box:
    o = Box()
    o.a = vec(5)
    o.v = o.a[1:] if shared else vec(4)
    return o


def write_base_read_view(o):
    o.a[1] = 7.0
    return o.v[0], o.v is o.a


def write_view_read_base(o):
    o.v += 10
    return o.a.sum(), o.a[0]


def write_base_then_view_identity(o):
    o.a *= 2
    w = o.v
    return w is o.v, o.v.sum()


def one_view_two_sources(o):
    o.a[2] += 1.0
    return o.v is o.w, o.w[1]


def shared_view(shared: bool):
    def build():
        o = view_attr(shared)
        o.w = o.v if shared else o.a[1:]
        return (o,)

    return build


def reversed_view_write(o):
    o.r[0] = -5.0
    return o.a[-1], o.r is o.a


def reversed_views(shared: bool):
    def build():
        o = Box()
        o.a = vec(4)
        o.r = o.a[::-1] if shared else vec(4)
        return (o,)

    return build


def with_list(shared: bool):
    def build():
        o = obj_pair(shared)
        return o, [o.a if shared else vec()]

    return build


def with_dict(shared: bool):
    def build():
        o = obj_pair(shared)
        return o, {"k": o.a if shared else vec()}

    return build


def with_argument(first_is_array: bool, shared: bool):
    def build():
        o = obj_pair(shared)
        a = o.a if shared else vec()
        return (a, o) if first_is_array else (o, a)

    return build


def nested(shared: bool):
    def build():
        o = obj_pair(shared)
        o.inner = obj_pair(shared)
        if shared:
            o.inner.a = o.inner.b = o.a
        return (o,)

    return build


def three(shared: bool):
    def build():
        o = obj_pair(shared)
        a = o.a if shared else vec()
        return o, [a], {"k": a if shared else vec()}

    return build


def listed(shared: bool):
    def build():
        a = vec()
        return ([a, a if shared else vec()],)

    return build


def dicted(shared: bool):
    def build():
        a = vec()
        return ({"a": a, "b": a if shared else vec()},)

    return build


def tupled(shared: bool):
    def build():
        a = vec()
        return ((a, a if shared else vec()),)

    return build


ATTRIBUTE_WRITES = [
    item_write_then_is, iadd_then_is, out_then_is, copyto_then_is, sort_then_is, fill_then_is,
    slice_write_then_is, add_at_then_is, ufunc_out_positional_then_is, write_then_values,
    write_then_is_and_values, write_then_is_not, write_then_branch_on_identity,
    write_through_second_then_is, writes_through_both, write_then_return_both,
    write_in_loop_then_is, write_break_then_is,
]  # fmt: skip

CASES = [
    *(C(fn.__name__, fn, pair(), distinct()) for fn in ATTRIBUTE_WRITES),
    *(C(f"{fn.__name__}_distinct_first", fn, distinct(), pair())
      for fn in (item_write_then_is, iadd_then_is, write_then_is_and_values)),
    C("size_change_then_alias", iadd_then_is, pair(4), pair(6), distinct(5)),
    C("method_write_then_is", method_write_then_is,
      lambda: (Holder(True),), lambda: (Holder(False),)),
    C("list_items", list_items, listed(True), listed(False)),
    C("attr_then_list_item", attr_then_list_item, with_list(True), with_list(False)),
    C("dict_items", dict_items, dicted(True), dicted(False)),
    C("attr_then_dict_item", attr_then_dict_item, with_dict(True), with_dict(False)),
    C("tuple_items", tuple_items, tupled(True), tupled(False)),
    C("argument_then_attribute", argument_then_attribute,
      with_argument(True, True), with_argument(True, False)),
    C("attribute_then_argument", attribute_then_argument,
      with_argument(False, True), with_argument(False, False)),
    C("nested_objects", nested_objects, nested(True), nested(False)),
    C("three_sources", three_sources, three(True), three(False)),
    C("globals_write_then_is", globals_write_then_is, lambda: (), lambda: (),
      setup=set_globals, observe=observe_globals),
    C("globals_iadd_then_values", globals_iadd_then_values, lambda: (), lambda: (),
      setup=set_globals, observe=observe_globals),
    C("closure_cells", CLOSURE_FN, lambda: (), lambda: (), setup=CLOSURE_RESET,
      observe=CLOSURE_OBSERVE),
    C("write_base_read_view", write_base_read_view,
      lambda: (view_attr(True),), lambda: (view_attr(False),)),
    C("write_view_read_base", write_view_read_base,
      lambda: (view_attr(True),), lambda: (view_attr(False),)),
    C("write_base_then_view_identity", write_base_then_view_identity,
      lambda: (view_attr(True),), lambda: (view_attr(False),)),
    C("reversed_view_write", reversed_view_write, reversed_views(True), reversed_views(False)),
    C("one_view_two_sources", one_view_two_sources, shared_view(True), shared_view(False)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_an_array_reached_through_several_sources_stays_one(case):
    case.run()
