"""Objects whose type or attribute protocol is the user's code (issue 19, item 6).

A metaclass's ``__instancecheck__``/``__subclasscheck__``, a ``__class__`` property, a class's
``__getattribute__``, ``__getattr__`` and ``__setattr__``, properties and other descriptors run
exactly when eager code runs them: once per use, on every call, never for tcompile's own
introspection (guards, wrapping). Each case logs what the user's protocol code sees into `LOG`
(reset before every call, compared after it), besides results, stdout, exceptions and the state
of the arguments.
"""

from __future__ import annotations

import abc
import collections.abc
import types

import numpy as np
import pytest
from diffharness import C, case_id

LOG: list = []


def reset_log(letter):
    LOG.clear()


def logged():
    return list(LOG)


def L(id, fn, *builders, **options):  # noqa: N802 (a case-table shorthand, like C)
    """A case whose `LOG` is reset before each call and compared after it."""
    return C(id, fn, *builders, setup=options.pop("setup", reset_log), observe=logged, **options)


def x3():
    return np.arange(3.0)


# -- isinstance and issubclass through a metaclass ----------------------------------------------


class Checked(type):
    def __instancecheck__(cls, obj):
        LOG.append(("instancecheck", cls.__name__, type(obj).__name__))
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub):
        LOG.append(("subclasscheck", cls.__name__, sub.__name__))
        return type.__subclasscheck__(cls, sub)


class Base(metaclass=Checked):
    pass


class Derived(Base):
    pass


class Unrelated:
    pass


class SuperChecked(type):
    def __instancecheck__(cls, obj):
        LOG.append("super instancecheck")
        return super().__instancecheck__(obj)


class ViaSuper(metaclass=SuperChecked):
    pass


class Truthy(type):
    def __instancecheck__(cls, obj):
        LOG.append("truthy")
        return "yes" if isinstance(obj, float) else 0


class Anything(metaclass=Truthy):
    pass


def isinstance_swapped(x, o):
    return x + isinstance(o, Swapped)


def isinstance_base(x, o):
    if isinstance(o, Base):
        return x + 1
    return x - 1


def isinstance_tuple(x, o):
    return x * (1 if isinstance(o, (int, Base)) else 2)


def isinstance_tuple_first_matches(x, o):
    return x * (1 if isinstance(o, (Unrelated, Base)) else 2)


def isinstance_truthy_result(x, o):
    return x + isinstance(o, Anything)


def isinstance_via_super(x, o):
    return x + isinstance(o, ViaSuper)


def isinstance_in_unrolled_loop(x, items):
    n = 0
    for item in items:
        n += isinstance(item, Base)
    return x * n


def isinstance_of_array(x):
    return x + isinstance(x, Base)


def isinstance_in_split_loop(x, o):
    for i in range(3):
        print(i)
        if isinstance(o, Base):
            x = x + i
    return x


def issubclass_checked(x, k):
    return x + issubclass(k, Base)


def issubclass_plain(x, k):
    return x * issubclass(k, (Unrelated, int)) + issubclass(bool, int)


def isinstance_union(x, v):
    return x + isinstance(v, int | float)


def isinstance_not_a_class(x, v):
    return x + isinstance(v, 5)


def issubclass_not_a_class(x):
    return x + issubclass(3, int)


class Swappable(type):
    def __instancecheck__(cls, obj):
        LOG.append("first hook")
        return True


class Swapped(metaclass=Swappable):
    pass


def _second_hook(cls, obj):
    LOG.append("second hook")
    return False


_FIRST_HOOK = Swappable.__instancecheck__


def swap_hook(letter):
    LOG.clear()
    Swappable.__instancecheck__ = _FIRST_HOOK if letter == "A" else _second_hook


METACLASS_CASES = [
    L(
        "metaclass_hook_replaced",
        isinstance_swapped,
        lambda: (x3(), 1.0),
        lambda: (x3(), 1.0),
        pattern="AABBA",
        setup=swap_hook,
    ),
    L("derived_instance", isinstance_base, lambda: (x3(), Derived())),
    L("unrelated_instance", isinstance_base, lambda: (x3(), Unrelated()), lambda: (x3(), 3.0)),
    L("exact_instance_no_hook", isinstance_base, lambda: (x3(), Base())),
    L("tuple_in_order", isinstance_tuple, lambda: (x3(), Derived()), lambda: (x3(), 7)),
    L("tuple_stops_at_first_match", isinstance_tuple_first_matches, lambda: (x3(), Unrelated())),
    L("hook_result_truthiness", isinstance_truthy_result, lambda: (x3(), 2.0), lambda: (x3(), 1)),
    L("hook_calls_super", isinstance_via_super, lambda: (x3(), 1.0)),
    L(
        "hook_per_iteration",
        isinstance_in_unrolled_loop,
        lambda: (x3(), [Derived(), Unrelated(), Base(), 4]),
    ),
    L("hook_sees_an_array", isinstance_of_array, lambda: (x3(),)),
    L("hook_in_split_loop", isinstance_in_split_loop, lambda: (x3(), Derived())),
    L("subclasscheck_hook", issubclass_checked, lambda: (x3(), Derived), lambda: (x3(), int)),
    L(
        "issubclass_plain_classes",
        issubclass_plain,
        lambda: (x3(), Unrelated),
        lambda: (x3(), float),
    ),
    L("isinstance_union", isinstance_union, lambda: (x3(), 2), lambda: (x3(), "s")),
    L("isinstance_not_a_class", isinstance_not_a_class, lambda: (x3(), 2)),
    L("issubclass_not_a_class", issubclass_not_a_class, lambda: (x3(),)),
]


# -- the __class__ an object reports --------------------------------------------------------------


class Plain:
    pass


class Masquerade:
    """Reports another class: isinstance asks it when the type check fails."""

    @property
    def __class__(self):
        LOG.append("__class__")
        return Plain


class ReportsNonClass:
    @property
    def __class__(self):
        LOG.append("__class__")
        return "not a class"


class ReportsNothing:
    @property
    def __class__(self):
        LOG.append("__class__")
        raise AttributeError("no class")


class MasqueradeChild(Plain):
    @property
    def __class__(self):
        LOG.append("__class__")
        return Unrelated


def isinstance_plain(x, o):
    return x + (10 if isinstance(o, Plain) else 20)


def isinstance_plain_or_checked(x, o):
    return x + isinstance(o, (Plain, Base)) * 5


def type_ignores_class(x, o):
    return x + (type(o) is Plain), type(o).__name__


def reads_class(x, o):
    return x, o.__class__.__name__


def passes_object_through(x, o):
    return x * 2, o


REPORTED_CLASS_CASES = [
    L("class_property_masquerades", isinstance_plain, lambda: (x3(), Masquerade())),
    L("class_property_not_a_class", isinstance_plain, lambda: (x3(), ReportsNonClass())),
    L("class_property_raises", isinstance_plain, lambda: (x3(), ReportsNothing())),
    L("type_check_first", isinstance_plain, lambda: (x3(), MasqueradeChild())),
    L(
        "class_property_then_metaclass",
        isinstance_plain_or_checked,
        lambda: (x3(), Masquerade()),
        lambda: (x3(), ReportsNonClass()),
    ),
    L("type_ignores_class_property", type_ignores_class, lambda: (x3(), Masquerade())),
    L("reads_class_property", reads_class, lambda: (x3(), Masquerade())),
    L("class_property_never_probed", passes_object_through, lambda: (x3(), Masquerade())),
]


# -- ABCs: registration changes the answer ------------------------------------------------------


class Shape(abc.ABC):  # noqa: B024 (classes are registered as Shapes, none inherits)
    pass


class Square:
    pass


REGISTERED: list = []


def register_square(letter):
    """Square becomes a Shape from the first B call on (registration cannot be undone)."""
    LOG.clear()
    if letter == "B" and Square not in REGISTERED:
        Shape.register(Square)
        REGISTERED.append(Square)


def isinstance_abc(x, o):
    return x + (1 if isinstance(o, Shape) else -1)


def issubclass_abc(x, k):
    return x + issubclass(k, Shape)


class Sized3:
    def __len__(self):
        return 3


def isinstance_collections_abc(x, a, b):
    return x + isinstance(a, collections.abc.Sized) + isinstance(b, collections.abc.Sequence)


def isinstance_abc_masquerade(x, o):
    return x + isinstance(o, collections.abc.Sized)


ABC_CASES = [
    L(
        "abc_registered_later",
        isinstance_abc,
        lambda: (x3(), Square()),
        lambda: (x3(), Square()),
        pattern="AABB",
        setup=register_square,
    ),
    L(
        "issubclass_abc_registered_later",
        issubclass_abc,
        lambda: (x3(), Square),
        lambda: (x3(), Square),
        pattern="AABB",
        setup=register_square,
    ),
    L(
        "collections_abc",
        isinstance_collections_abc,
        lambda: (x3(), Sized3(), [1]),
        lambda: (x3(), Unrelated(), (1,)),
    ),
    L("abc_reads_class_property", isinstance_abc_masquerade, lambda: (x3(), Masquerade())),
]


# -- __getattribute__ -----------------------------------------------------------------------------


class Spy:
    scale_by = 3.0

    def __init__(self, w):
        self.w = w

    def __getattribute__(self, name):
        LOG.append(name)
        return object.__getattribute__(self, name)

    def scale(self, x):
        return x * self.scale_by

    @property
    def doubled(self):
        return self.w * 2


class SuperSpy:
    def __init__(self, w):
        self.w = w

    def __getattribute__(self, name):
        LOG.append(("super", name))
        return super().__getattribute__(name)


class Rewriting:
    def __init__(self):
        self.w = 1.0

    def __getattribute__(self, name):
        if name == "w":
            return 3.0  # never what the instance holds
        return object.__getattribute__(self, name)


class Fallback:
    def __init__(self):
        self.w = 2.0

    def __getattribute__(self, name):
        LOG.append(("get", name))
        if name.startswith("virtual_"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        LOG.append(("fallback", name))
        return len(name)


class SlotSpy:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w

    def __getattribute__(self, name):
        LOG.append(name)
        return object.__getattribute__(self, name)


def read_w(x, s):
    return x * s.w


def read_twice_and_method(x, s):
    return s.scale(x) + s.w + s.w


def read_property(x, s):
    return x + s.doubled


def write_then_read(x, s):
    s.w = s.w + 1.0
    return x * s.w


def _helper(s):
    return s.w + s.scale_by


def read_in_callee(x, s):
    return x + _helper(s)


def read_per_iteration(x, s):
    for _ in range(3):
        x = x + s.w
    return x


def read_in_split_loop(x, s):
    for i in range(3):
        print(i)
        x = x + s.w
    return x


def read_nested(x, s):
    return x * s.w.w


def never_read(x, s):
    return x + 1, [s]


def getattr_builtin(x, s):
    return x + getattr(s, "w") + getattr(s, "missing", 10.0) + hasattr(s, "w")  # noqa: B009


def virtual_attributes(x, f):
    return x + f.w + f.virtual_abc + f.virtual_z


def reads_dict(x, s):
    return x, sorted(vars(s)), s.__dict__["w"]


def callable_and_type(x, s):
    return x, callable(s), type(s).__name__


class Switchable:
    def __init__(self):
        self.w = 1.0

    def __getattribute__(self, name):
        LOG.append(("first", name))
        return object.__getattribute__(self, name)


def _second_getattribute(self, name):
    LOG.append(("second", name))
    value = object.__getattribute__(self, name)
    return -value if name == "w" else value


_FIRST_GETATTRIBUTE = Switchable.__getattribute__


def swap_getattribute(letter):
    LOG.clear()
    Switchable.__getattribute__ = _FIRST_GETATTRIBUTE if letter == "A" else _second_getattribute


GETATTRIBUTE_CASES = [
    L(
        "getattribute_replaced",
        read_w,
        lambda: (x3(), Switchable()),
        lambda: (x3(), Switchable()),
        pattern="AABBA",
        setup=swap_getattribute,
    ),
    L("spy_reads_w", read_w, lambda: (x3(), Spy(2.0)), lambda: (x3(), Spy(-1.0))),
    L("spy_method_and_reads", read_twice_and_method, lambda: (x3(), Spy(2.0))),
    L("spy_property", read_property, lambda: (x3(), Spy(2.0))),
    L("spy_write_then_read", write_then_read, lambda: (x3(), Spy(2.0))),
    L("spy_in_callee", read_in_callee, lambda: (x3(), Spy(2.0))),
    L("spy_per_iteration", read_per_iteration, lambda: (x3(), Spy(0.5))),
    L("spy_in_split_loop", read_in_split_loop, lambda: (x3(), Spy(0.5))),
    L("spy_nested", read_nested, lambda: (x3(), Spy(Spy(2.0)))),
    L("spy_never_read", never_read, lambda: (x3(), Spy(2.0))),
    L("spy_getattr_hasattr", getattr_builtin, lambda: (x3(), Spy(2.0))),
    L("super_getattribute", read_w, lambda: (x3(), SuperSpy(2.0))),
    L("rewriting_getattribute", read_w, lambda: (x3(), Rewriting())),
    L("getattribute_then_getattr", virtual_attributes, lambda: (x3(), Fallback())),
    L("slots_spy", read_w, lambda: (x3(), SlotSpy(4.0))),
    L("spy_vars_and_dict", reads_dict, lambda: (x3(), Spy(2.0))),
    L("spy_callable_and_type", callable_and_type, lambda: (x3(), Spy(2.0))),
]


# -- __getattr__ fallbacks ------------------------------------------------------------------------


class Lazy:
    """Attributes it lacks come from __getattr__; the ones it has do not call it."""

    kind = "lazy"

    def __init__(self, **attrs):
        self.__dict__.update(attrs)

    def __getattr__(self, name):
        LOG.append(name)
        if name.startswith("bad"):
            raise AttributeError(name)
        return float(len(name))


def lazy_reads(x, o):
    return x + o.present + o.absent + o.longer_name, o.kind


def lazy_raises(x, o):
    return x + o.bad_name


def lazy_getattr_default(x, o):
    return x + getattr(o, "bad_one", -1.0) + hasattr(o, "bad_two") + hasattr(o, "fine")


def set_lazy_class_attr(letter):
    LOG.clear()
    if letter == "B":
        Lazy.absent = 100.0
    else:
        Lazy.__dict__.get("absent") is not None and delattr(Lazy, "absent")


class Options:
    default = 0.5

    def __init__(self, **attrs):
        self.__dict__.update(attrs)


def optional_attribute(x, o):
    return x + getattr(o, "opt", -1.0) + hasattr(o, "opt") * 10 + o.default


GETATTR_CASES = [
    L(
        "optional_attribute_appears",
        optional_attribute,
        lambda: (x3(), Options()),
        lambda: (x3(), Options(opt=2.0)),
        pattern="AABBA",
    ),
    L(
        "fallback_only_when_missing",
        lazy_reads,
        lambda: (x3(), Lazy(present=1.0)),
        lambda: (x3(), Lazy(present=2.0, absent=0.5)),
    ),
    L("fallback_raises", lazy_raises, lambda: (x3(), Lazy())),
    L("fallback_with_getattr_default", lazy_getattr_default, lambda: (x3(), Lazy())),
    L(
        "class_attribute_appears",
        lazy_reads,
        lambda: (x3(), Lazy(present=1.0)),
        lambda: (x3(), Lazy(present=1.0)),
        pattern="AABBA",
        setup=set_lazy_class_attr,
    ),
]


# -- descriptors and properties --------------------------------------------------------------------


class Reading:
    """A non-data descriptor that logs each read."""

    def __get__(self, obj, owner=None):
        LOG.append(("get", type(obj).__name__, owner.__name__))
        return 5.0 if obj is not None else self


class Stored:
    """A data descriptor that logs reads and writes and keeps values in the instance."""

    def __set_name__(self, owner, name):
        self.key = "_" + name

    def __get__(self, obj, owner=None):
        LOG.append(("get", self.key))
        return obj.__dict__.get(self.key, 0.0)

    def __set__(self, obj, value):
        LOG.append(("set", self.key, value))
        obj.__dict__[self.key] = value * 10


class WithDescriptors:
    reading = Reading()
    stored = Stored()

    def __init__(self):
        self.plain = 1.0


class ChildOfDescriptors(WithDescriptors):
    pass


class Temperature:
    def __init__(self, c):
        self._c = c

    @property
    def celsius(self):
        LOG.append("get celsius")
        return self._c

    @celsius.setter
    def celsius(self, value):
        LOG.append(("set celsius", value))
        self._c = round(value, 1)

    @property
    def kelvin(self):
        LOG.append("get kelvin")
        return self._c + 273.15


class logged_property(property):  # noqa: N801 (a decorator, named like property)
    """A property whose own __get__ logs before the getter runs."""

    def __get__(self, obj, owner=None):
        LOG.append(("logged_property", self.fget.__name__))
        return super().__get__(obj, owner)


class WithLoggedProperty:
    def __init__(self):
        self._v = 4.0

    @logged_property
    def v(self):
        return self._v * 2


def read_logged_property(x, o):
    return x + o.v


def read_descriptor(x, o):
    return x + o.reading


def data_descriptor_roundtrip(x, o):
    o.stored = 2.0
    return x + o.stored


def inherited_descriptors(x, o):
    o.stored = 3.0
    return x + o.reading + o.stored


def shadowed_nondata_descriptor(x, o):
    o.reading = -1.0  # an instance attribute: it shadows the non-data descriptor
    return x + o.reading


def data_descriptor_beats_instance_dict(x, o):
    o.__dict__["stored"] = 99.0
    return x + o.stored


def property_setter_then_getter(x, t):
    t.celsius = 21.04
    return x + t.celsius + t.kelvin


def property_without_setter(x, t):
    t.kelvin = 1.0
    return x


def property_in_loop(x, t):
    for _ in range(3):
        t.celsius = t.celsius + 1.0
        x = x + t.kelvin
    return x


def property_of_new_object(x):
    t = Temperature(1.0)
    t.celsius = 2.25
    return x + t.celsius


DESCRIPTOR_CASES = [
    L("nondata_descriptor_logs", read_descriptor, lambda: (x3(), WithDescriptors())),
    L("property_subclass_get", read_logged_property, lambda: (x3(), WithLoggedProperty())),
    L("data_descriptor_roundtrip", data_descriptor_roundtrip, lambda: (x3(), WithDescriptors())),
    L("inherited_descriptors", inherited_descriptors, lambda: (x3(), ChildOfDescriptors())),
    L(
        "shadowed_nondata_descriptor",
        shadowed_nondata_descriptor,
        lambda: (x3(), WithDescriptors()),
    ),
    L(
        "data_descriptor_beats_dict",
        data_descriptor_beats_instance_dict,
        lambda: (x3(), WithDescriptors()),
    ),
    L("property_setter_then_getter", property_setter_then_getter, lambda: (x3(), Temperature(5.0))),
    L("property_without_setter", property_without_setter, lambda: (x3(), Temperature(5.0))),
    L("property_in_loop", property_in_loop, lambda: (x3(), Temperature(0.0))),
    L("property_of_new_object", property_of_new_object, lambda: (x3(),)),
]


# -- __setattr__ ----------------------------------------------------------------------------------


class Audited:
    def __init__(self, w):
        self.w = w

    def __setattr__(self, name, value):
        LOG.append(("set", name, value))
        object.__setattr__(self, name, value * 2 if isinstance(value, float) else value)


class AuditedSuper:
    def __setattr__(self, name, value):
        LOG.append(("super set", name))
        super().__setattr__(name, value)


class Frozen:
    def __init__(self):
        object.__setattr__(self, "w", 1.0)

    def __setattr__(self, name, value):
        LOG.append(("refused", name))
        raise AttributeError(f"{name} is frozen")


def set_and_read(x, a):
    a.w = 1.5
    a.extra = a.w + 1.0
    return x * a.extra


def set_via_super(x, a):
    a.w = 2.0
    return x + a.w


def set_frozen(x, f):
    f.w = 2.0
    return x


def construct_audited(x):
    a = Audited(0.25)
    a.w = a.w + 1.0
    return x + a.w, a


SETATTR_CASES = [
    L("setattr_logs_and_transforms", set_and_read, lambda: (x3(), Audited(1.0))),
    L("setattr_via_super", set_via_super, lambda: (x3(), AuditedSuper())),
    L("setattr_refuses", set_frozen, lambda: (x3(), Frozen())),
    L("setattr_of_new_object", construct_audited, lambda: (x3(),)),
]


# -- implicit calls look up the class, not the instance -------------------------------------------


class Box:
    def __init__(self, items):
        self.items = items

    def __getattribute__(self, name):
        LOG.append(name)
        return object.__getattribute__(self, name)

    def __len__(self):
        return len(object.__getattribute__(self, "items"))

    def __getitem__(self, i):
        return object.__getattribute__(self, "items")[i]

    def __call__(self, v):
        return v * 2


class NoLen:
    pass


def box_len_item_call(x, b):
    return x * len(b) + b[1] + b(1.5)


def instance_len_is_ignored(x, b):
    b.__len__ = 100  # an instance attribute: len() asks the class
    return x * len(b)


def len_of_object_without_len(x, o):
    return x * len(o)


SPECIAL_CASES = [
    L("special_methods_skip_getattribute", box_len_item_call, lambda: (x3(), Box([1.0, 2.0]))),
    L("instance_dunder_ignored", instance_len_is_ignored, lambda: (x3(), Box([1.0, 2.0, 3.0]))),
    L("missing_special_method", len_of_object_without_len, lambda: (x3(), NoLen())),
]


# -- a metaclass's attribute protocol -------------------------------------------------------------


class Recording(type):
    def __getattr__(cls, name):
        LOG.append(("class getattr", name))
        return 7.0


class Configured(metaclass=Recording):
    factor = 2.0


def class_attributes(x):
    return x * Configured.factor + Configured.missing


def _lazy_module_getattr(name):
    LOG.append(("module getattr", name))
    return 2.5


LAZY = types.ModuleType("lazy_values")
LAZY.present = 1.0
LAZY.__getattr__ = _lazy_module_getattr


def module_getattr(x):
    return x * LAZY.present + LAZY.computed


def descriptor_through_the_class(x):
    return x, WithDescriptors.reading is not None


def makes_an_instance(x):
    return x + 1, type(Configured()).__name__


METACLASS_ATTR_CASES = [
    L("metaclass_getattr", class_attributes, lambda: (x3(),)),
    L("class_with_recording_metaclass_called", makes_an_instance, lambda: (x3(),)),
    L("module_getattr", module_getattr, lambda: (x3(),)),
    L("descriptor_through_the_class", descriptor_through_the_class, lambda: (x3(),)),
]


CASES = (
    METACLASS_CASES
    + REPORTED_CLASS_CASES
    + ABC_CASES
    + GETATTRIBUTE_CASES
    + GETATTR_CASES
    + DESCRIPTOR_CASES
    + SETATTR_CASES
    + SPECIAL_CASES
    + METACLASS_ATTR_CASES
)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_eager(case):
    case.run()
