"""Guards (tracer/state/guards.py): each kind's generated condition, description and failure
message, and how an entry's guards become one check function and one recompile reason."""

from __future__ import annotations

import numpy as np
import pytest

from tcompile.tracer.state.guards import (
    CHECK_NAMES,
    KINDS,
    Guard,
    build_check_function,
    first_failure,
    mismatched_dims,
    order_guards,
    same_constant,
)
from tcompile.tracer.values.source import GLOBALS, AttrSource, GlobalsDictSource, LocalSource

X = LocalSource("x")
Y = LocalSource("y")


def check_of(guards, params="x", **names):
    """The compiled ``__tc_check`` for ``guards``, as compile_frame.make_check builds it."""
    source, ns = build_check_function(guards, params)
    ns.update(names)
    exec(compile(source, "<test guards>", "exec"), ns)  # noqa: S102
    return ns["__tc_check"]


def helper():
    pass


def other_helper():
    pass


class FakeCudaArray:
    """Looks like a device array (``__cuda_array_interface__``) without any GPU library."""

    def __init__(self, typestr, device=None):
        self.typestr, self.shape, self.device = typestr, (3,), device

    @property
    def __cuda_array_interface__(self):  # looked up on the class: a property, not an attribute
        return {"typestr": self.typestr, "shape": self.shape}

    def __dlpack_device__(self):
        return (2, self.device)


class WithMethod:
    def m(self):
        return 1


def shadowed():
    obj = WithMethod()
    obj.m = lambda: 2
    return obj


F64 = np.dtype("float64")
CUDA_F32 = (("cuda", None), "<f4")

# kind, guard, the expected condition over local x and constant K, a value it holds for, one
# it fails for, describe(), and the failure message for the failing value (None: the kind
# leaves failures to first_failure, which evaluates the condition).
CASES = {
    "type": (Guard(X, "type", int), "__tc_type(x) is K", 3, 3.0,
             "type(x) is int", "type of x changed: expected int, actual float"),
    "id": (Guard(X, "id", helper), "x is K", helper, other_helper,
           "x is the helper it was when traced",
           "x is a different object than the one traced (helper)"),
    "const_int": (Guard(X, "const", 3), "__tc_type(x) is __tc_type(K) and x == K", 3, 3.0,
                  "x == 3", "x == 3 failed: actual 3.0"),
    "const_bool": (Guard(X, "const", True), "x is K", True, 1,
                   "x == True", "x == True failed: actual 1"),
    "const_none": (Guard(X, "const", None), "x is K", None, 0,
                   "x == None", "x == None failed: actual 0"),
    "const_str": (Guard(X, "const", "a"), "__tc_type(x) is __tc_type(K) and x == K", "a", "b",
                  "x == 'a'", "x == 'a' failed: actual 'b'"),
    "const_float": (Guard(X, "const", 2.5), "__tc_type(x) is __tc_type(K) and x == K", 2.5, 2,
                    "x == 2.5", "x == 2.5 failed: actual 2"),
    "const_zero": (Guard(X, "const", 0.0), "__tc_same(x, K)", 0.0, -0.0,
                   "x == 0.0", "x == 0.0 failed: actual -0.0"),
    "const_nan": (Guard(X, "const", float("nan")), "__tc_same(x, K)", float("nan"), 1.0,
                  "x == nan", "x == nan failed: actual 1.0"),
    "const_tuple": (Guard(X, "const", (1, 2.0)), "__tc_same(x, K)", (1, 2.0), (1, 2),
                    "x == (1, 2.0)", "x == (1, 2.0) failed: actual (1, 2)"),
    "int64": (Guard(X, "int64", int),
              "__tc_type(x) is int and -9223372036854775808 <= x <= 9223372036854775807", 2**63 - 1,
              2**63, "x is an int in int64's range",
              "x is no longer an int in int64's range: actual 9223372036854775808"),
    "int64_type": (Guard(X, "int64", int),
                   "__tc_type(x) is int and -9223372036854775808 <= x <= 9223372036854775807",
                   -(2**63), True, "x is an int in int64's range",
                   "x is no longer an int in int64's range: actual True"),
    "at_least": (Guard(X, "at_least", 2), "__tc_type(x) is int and x >= 2", 2, 1,
                 "x >= 2", "x >= 2 failed: actual 1"),
    "len": (Guard(X, "len", 3), "__tc_len(x) == 3", [1, 2, 3], [1],
            "len(x) == 3", "len(x) changed: expected 3, actual 1"),
    "keys": (Guard(X, "keys", ("a", "b")), "__tc_tuple(x) == K", {"a": 1, "b": 2},
             {"b": 2, "a": 1}, "keys of x == ('a', 'b')",
             "keys of x changed: expected ('a', 'b'), actual ('b', 'a')"),
    "dtype": (Guard(X, "dtype", F64), "(x.dtype is K or x.dtype == K)", np.zeros(3),
              np.zeros(3, np.float32), "x.dtype == float64",
              "array x dtype mismatch: expected float64, actual float32"),
    "device_array": (Guard(X, "device_array", CUDA_F32), "__tc_device_key(x) == K",
                     FakeCudaArray("<f4"), FakeCudaArray("<f8"),
                     "x is a cuda array of float32 on the CPU",
                     "x changed: expected x is a cuda array of float32 on the CPU, "
                     "actual (('cuda', None), '<f8')"),
    "shape": (Guard(X, "shape", (2, 3)), "x.shape == (2, 3)", np.zeros((2, 3)),
              np.zeros((3, 2)), "x.shape == (2, 3)",
              "array x size mismatch at dim 0: expected 2, actual 3"),
    "shape_rank": (Guard(X, "shape", (2, 3)), "x.shape == (2, 3)", np.zeros((2, 3)),
                   np.zeros(6), "x.shape == (2, 3)", "array x rank mismatch: expected 2, actual 1"),
    "shape_dynamic": (Guard(X, "shape", (None, 3)),
                      "len(x.shape) == 2 and x.shape[0] >= 2 and x.shape[1] == 3",
                      np.zeros((7, 3)), np.zeros((1, 3)), "x.shape == (s>=2, 3)",
                      "array x size at dim 0 is 1; the dynamic dim assumed a size >= 2"),
    "shape_1d": (Guard(X, "shape", (4,)), "x.shape == (4,)", np.zeros(4), np.zeros(5),
                 "x.shape == (4,)", "array x size mismatch at dim 0: expected 4, actual 5"),
    "shape_1d_dynamic": (Guard(X, "shape", (None,)), "len(x.shape) == 1 and x.shape[0] >= 2",
                         np.zeros(9), np.zeros(1), "x.shape == (s>=2,)",
                         "array x size at dim 0 is 1; the dynamic dim assumed a size >= 2"),
    "strides": (Guard(X, "strides", (24, 8)), "x.strides == (24, 8)", np.zeros((2, 3)),
                np.zeros((3, 2)).T, "x.strides == (24, 8)",
                "array x strides changed: expected (24, 8), actual (8, 16)"),
    "no_shadow": (Guard(X, "no_shadow", "m"), "'m' not in __tc_getattr(x, '__dict__', ())",
                  WithMethod(), shadowed(), "x has no instance attribute 'm'",
                  "x now has an instance attribute 'm' (the trace found none there)"),
    "no_shadow_static": (Guard(X, "no_shadow_static", "m"), "'m' not in __tc_instance_dict(x)",
                         WithMethod(), shadowed(), "x has no instance attribute 'm'",
                         "x now has an instance attribute 'm' (the trace found none there)"),
    "not_global": (Guard(X, "not_global", "len"), "'len' not in x", {}, {"len": 1},
                   "'len' not shadowed in globals (builtin)", None),
    "alias_same": (Guard(X, "alias", (Y, True)), "(x is y) is True", None, None,
                   "x is y", None),
    "alias_different": (Guard(X, "alias", (Y, False)), "(x is y) is False", None, None,
                        "x is not y", None),
}  # fmt: skip

SIMPLE = [name for name in CASES if not name.startswith("alias")]


def test_every_kind_has_a_case():
    assert {guard.kind for guard, *_ in CASES.values()} == set(KINDS)


@pytest.mark.parametrize("name", CASES)
def test_condition_text(name):
    guard, condition, *_ = CASES[name]
    assert guard.condition("x", "K") == condition


@pytest.mark.parametrize("name", CASES)
def test_describe(name):
    guard, _, _, _, described, _ = CASES[name]
    assert guard.describe() == described


@pytest.mark.parametrize("name", SIMPLE)
def test_check_holds_for_the_traced_value_and_fails_for_another(name):
    guard, _, good, bad, _, _ = CASES[name]
    check = check_of([guard])
    assert check(good) is True
    assert check(bad) is False


@pytest.mark.parametrize("name", SIMPLE)
def test_failure_message(name):
    guard, _, good, bad, described, message = CASES[name]
    assert guard.failure(good) is None
    assert guard.failure(bad) == message
    reported = first_failure([guard], {"x": bad})
    assert reported == (message or f"guard failed: {described}")
    assert first_failure([guard], {"x": good}) is None


@pytest.mark.parametrize("same", [True, False])
def test_alias_guard_checks_object_identity_between_two_sources(same):
    guard = Guard(X, "alias", (Y, same))
    check = check_of([guard], "x, y")
    a, b = [1], [1]
    assert check(a, a) is same
    assert check(a, b) is not same
    assert guard.failure(a) is None  # aliasing needs both values: first_failure evaluates it
    failing = {"x": a, "y": b} if same else {"x": a, "y": a}
    assert first_failure([guard], failing) == f"guard failed: {guard.describe()}"


def test_not_global_guard_reads_the_globals_dict_source():
    guard = Guard(GlobalsDictSource(), "not_global", "len")
    source, _ = build_check_function([guard], "x")
    assert f"if not ('len' not in {GLOBALS}): return False" in source
    assert check_of([guard], **{GLOBALS: {}})(1) is True
    assert check_of([guard], **{GLOBALS: {"len": min}})(1) is False
    assert (
        first_failure([guard], {GLOBALS: {"len": min}})
        == "guard failed: 'len' not shadowed in globals (builtin)"
    )


def test_device_array_on_a_gpu_is_described_with_its_device():
    guard = Guard(X, "device_array", (("cuda", 0), "<f4"))
    assert guard.describe() == "x is a cuda array of float32 on device 0"
    assert check_of([guard])(FakeCudaArray("<f4", device=0)) is True
    assert check_of([guard])(FakeCudaArray("<f4", device=1)) is False
    assert check_of([guard])(np.zeros(3, np.float32)) is False


def test_const_guard_tells_ints_from_bools_and_zero_from_minus_zero():
    assert check_of([Guard(X, "const", 1)])(True) is False
    assert check_of([Guard(X, "const", -0.0)])(0.0) is False
    assert check_of([Guard(X, "const", -0.0)])(-0.0) is True
    assert check_of([Guard(X, "const", 1 + 0j)])(1 - 0j) is True
    assert check_of([Guard(X, "const", complex(1, -0.0))])(1 + 0j) is False


def test_a_check_that_raises_is_a_miss_and_its_reason_names_the_exception():
    guard = Guard(X, "len", 3)
    assert check_of([guard])(5) is False
    assert guard.failure(5) == "x: len check raised TypeError: object of type 'int' has no len()"
    assert first_failure([guard], {"x": 5}) == guard.failure(5)


def test_an_unreadable_source_is_a_miss_and_says_it_can_no_longer_be_read():
    guard = Guard(AttrSource(X, "w"), "type", int)
    assert check_of([guard])(WithMethod()) is False
    reason = first_failure([guard], {"x": WithMethod()})
    assert reason.startswith("x.w can no longer be read (AttributeError: ")


def test_describe_of_a_nested_source_uses_its_human_name():
    guard = Guard(AttrSource(X, "w"), "dtype", F64)
    assert guard.describe() == "x.w.dtype == float64"
    assert guard.failure(np.zeros(1, np.int8)) == (
        "array x.w dtype mismatch: expected float64, actual int8"
    )


# -- the guard set: one check function, ordered, deduplicated, reading each source once -------
def test_check_function_source_orders_by_depth_then_cost_and_reads_sources_once():
    w = AttrSource(X, "w")
    guards = [
        Guard(w, "shape", (2,)),
        Guard(X, "len", 2),
        Guard(w, "type", np.ndarray),
        Guard(X, "type", list),
        Guard(w, "dtype", F64),
        Guard(X, "type", list),  # a duplicate: checked once
    ]
    source, ns = build_check_function(guards, "x, y=1")
    assert source == (
        "def __tc_check(x, y=1):\n"
        "    try:\n"
        "        if not (__tc_type(x) is __tc_k0): return False\n"
        "        if not (__tc_len(x) == 2): return False\n"
        "        __tc_v1 = x.w\n"
        "        if not (__tc_type(__tc_v1) is __tc_k2): return False\n"
        "        if not ((__tc_v1.dtype is __tc_k3 or __tc_v1.dtype == __tc_k3)): return False\n"
        "        if not (__tc_v1.shape == (2,)): return False\n"
        "    except Exception:\n"
        "        return False\n"
        "    return True\n"
    )
    # every guard binds its expected value, used in its condition or not
    assert {k: v for k, v in ns.items() if k not in CHECK_NAMES} == {
        "__tc_k0": list, "__tc_k1": 2, "__tc_k2": np.ndarray, "__tc_k3": F64, "__tc_k4": (2,),
    }  # fmt: skip
    assert all(ns[name] is value for name, value in CHECK_NAMES.items())


def test_no_guards_gives_a_check_that_always_passes():
    source, _ = build_check_function([], "")
    assert "        pass\n" in source
    assert check_of([], "")() is True


def test_check_works_when_parameters_shadow_the_builtins_it_uses():
    guards = [Guard(LocalSource("type"), "type", list), Guard(LocalSource("type"), "len", 1)]
    check = check_of(guards, "type, len")
    assert check([0], 5) is True
    assert check([0, 1], 5) is False


def test_order_guards_dedupes_and_puts_identity_before_attribute_reads():
    w = AttrSource(X, "w")
    guards = [Guard(w, "id", helper), Guard(X, "shape", (1,)), Guard(X, "strides", (8,)),
              Guard(X, "dtype", F64), Guard(X, "type", np.ndarray), Guard(X, "shape", (1,)),
              Guard(X, "alias", (Y, True)), Guard(X, "keys", ("a",)), Guard(X, "const", 1)]  # fmt: skip
    kinds = [(g.source.name(), g.kind) for g in order_guards(guards)]
    assert kinds == [("x", "type"), ("x", "const"), ("x", "keys"), ("x", "dtype"),
                     ("x", "shape"), ("x", "strides"), ("x", "alias"), ("x.w", "id")]  # fmt: skip


def test_order_guards_keeps_guards_on_unhashable_values():
    class Unhashable:
        __hash__ = None

        def __eq__(self, other):
            return True

    a, b = Unhashable(), Unhashable()
    assert len(order_guards([Guard(X, "id", a), Guard(X, "id", b), Guard(X, "id", a)])) == 2


def test_first_failure_reports_the_first_failing_guard_in_check_order():
    guards = [Guard(X, "shape", (3,)), Guard(X, "dtype", F64), Guard(X, "type", np.ndarray)]
    assert first_failure(guards, {"x": [1, 2, 3]}) == (
        "type of x changed: expected ndarray, actual list"
    )
    assert first_failure(guards, {"x": np.zeros(4, np.int32)}) == (
        "array x dtype mismatch: expected float64, actual int32"
    )
    assert first_failure(guards, {"x": np.zeros(4)}) == (
        "array x size mismatch at dim 0: expected 3, actual 4"
    )
    assert first_failure(guards, {"x": np.zeros(3)}) is None


def test_first_failure_and_the_check_function_agree():
    guards = [Guard(X, "type", list), Guard(X, "len", 2), Guard(Y, "const", 0.5),
              Guard(X, "alias", (Y, False))]  # fmt: skip
    check = check_of(guards, "x, y")
    for x, y in [([1, 2], 0.5), ([1], 0.5), ((1, 2), 0.5), ([1, 2], 1.5), ([1, 2], -0.5)]:
        assert check(x, y) is (first_failure(guards, {"x": x, "y": y}) is None)


def test_mismatched_dims_names_the_static_dims_that_changed():
    guard = Guard(X, "shape", (2, None, 4))
    assert mismatched_dims(guard, np.zeros((3, 5, 4))) == [0]
    assert mismatched_dims(guard, np.zeros((3, 5, 6))) == [0, 2]
    assert mismatched_dims(guard, np.zeros((2, 5, 4))) == []
    assert mismatched_dims(guard, np.zeros((3, 4))) == []  # a new rank: no dim to mark
    assert mismatched_dims(guard, [[0] * 5] * 3) == []
    assert mismatched_dims(Guard(X, "len", 2), np.zeros(3)) == []


@pytest.mark.parametrize(
    "a, b, same",
    [
        (1, 1, True),
        (1, True, False),
        (1, 1.0, False),
        (0.0, -0.0, False),
        (float("nan"), float("nan"), True),
        (complex(0, 0.0), complex(0, -0.0), False),
        ((1, 2.0), (1, 2.0), True),
        ((1, 2.0), (1, 2), False),
        (frozenset({0.0}), frozenset({-0.0}), False),
        (slice(0, 2.0), slice(0, 2), False),
        ("a", "a", True),
    ],
)
def test_same_constant(a, b, same):
    assert same_constant(a, b) is same
