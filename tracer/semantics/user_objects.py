"""The user's objects and their protocols: attribute reads and writes (``__getattribute__``,
``__getattr__``, ``__setattr__``, properties and other descriptors), the special methods an
implicit call looks up on the class (``len(o)``, ``o[i]``, ``o()``), and ``isinstance`` /
``issubclass`` (a metaclass's ``__instancecheck__``, the ``__class__`` an object reports, ABCs).

Where Python runs the user's code, the trace inlines it like any user function, so its side
effects happen once per use, as eagerly (a ``__getattribute__`` that logs sees the user's reads,
nothing else); code it cannot see into is a graph break. What tcompile itself must know of an
object it asks of its class, statically (`user_code.static_lookup`), and guards read the
attributes of an object with such a protocol without running it (`source.ObjectAttrSource`).
"""

from __future__ import annotations

import abc
import types

from ..errors import UserErrorInTrace
from ..ir.static_lookup import mro, owner_index, protocol_hook, static_lookup
from ..user_code import instance_dict, user_method
from ..values.containers import TupleValue
from ..values.core import Const, NotConstant, Obj, Value
from ..values.objects import BoundMethod, UserObject
from ..values.source import (
    AbcCacheTokenSource,
    AttrSource,
    ItemSource,
    ObjectAttrSource,
    TypeSource,
)
from .folding import wrap_unguarded
from .objects import bound_method

_MISSING = object()
_OBJECT_CLASS = object.__dict__["__class__"]  # the descriptor behind ``o.__class__``
_TYPE_INSTANCECHECK = type.__dict__["__instancecheck__"]
_TYPE_SUBCLASSCHECK = type.__dict__["__subclasscheck__"]
_ABC_HOOKS = (abc.ABCMeta.__dict__["__instancecheck__"], abc.ABCMeta.__dict__["__subclasscheck__"])


def _custom_attribute_protocol(cls: type) -> bool:
    """Whether reading an attribute of a ``cls`` object can run the user's code besides
    descriptors: a ``__getattribute__`` or a ``__getattr__`` of the class's own."""
    return (
        protocol_hook(cls, "__getattribute__") is not None
        or protocol_hook(cls, "__getattr__") is not None
    )


def attr_source(v: UserObject, name: str) -> AttrSource | None:
    """Where guards and the glue read ``v.name``: through the attribute protocol when that is
    Python's own, else around it (``object.__getattribute__``), so no guard runs user code."""
    if v.source is None:
        return None
    if _custom_attribute_protocol(v.cls):
        return ObjectAttrSource(v.source, name)
    return AttrSource(v.source, name)


def _class_source(v: UserObject, name: str):
    """``type(v).name``, where the class's attribute is read from (None for an object made in
    the trace: its class was guarded when it was called)."""
    return AttrSource(TypeSource(v.source), name) if v.source is not None else None


def _class_value(tx, v: UserObject, obj, name: str) -> Value:
    source = _class_source(v, name)
    return tx.state.wrap(obj, source) if source is not None else wrap_unguarded(tx.state, obj)


def _hook(tx, v: UserObject, found, name: str) -> Value:
    """The class's protocol method ``name`` (found statically) bound to ``v``, to inline."""
    fn = user_method(found)
    if fn is None or isinstance(found, (staticmethod, classmethod)):
        raise tx.state.graph_break(
            "unsupported_object",
            f"{v.describe()} has a {name} tcompile cannot trace into (not a plain Python method)",
        )
    return BoundMethod(_class_value(tx, v, fn, name), v)


# -- reading attributes --------------------------------------------------------------------------


def get_attr(tx, v: UserObject, name: str) -> Value:
    """``v.name``: the class's ``__getattribute__`` (Python's own, or the user's: inlined), then
    its ``__getattr__`` where that raised AttributeError."""
    getattribute = protocol_hook(v.cls, "__getattribute__")
    fallback = protocol_hook(v.cls, "__getattr__")
    try:
        if getattribute is None:
            return generic_attr(tx, v, name)
        return tx.call(_hook(tx, v, getattribute, "__getattribute__"), [Const(name)], {})
    except UserErrorInTrace as error:
        if fallback is None or not isinstance(error.error, AttributeError):
            raise
    return tx.call(_hook(tx, v, fallback, "__getattr__"), [Const(name)], {})


def generic_attr(tx, v: UserObject, name: str) -> Value:
    """``object.__getattribute__(v, name)``: a data descriptor of the class, else the instance's
    own attribute, else the class's attribute (bound, or through its ``__get__``)."""
    state, cls = tx.state, v.cls
    found = static_lookup(cls, name, _MISSING)
    if found is not _MISSING and _is_data_descriptor(found):
        return _data_descriptor_get(tx, v, name, found)
    if name in v.overlay:
        return v.overlay[name]
    own = instance_dict(v.value) if v.new_cls is None else {}
    if name in own:
        return state.wrap(own[name], attr_source(v, name))
    if found is _MISSING:
        _guard_absent(state, v, name)
        raise UserErrorInTrace(AttributeError(f"{cls.__name__!r} object has no attribute {name!r}"))
    return _class_attr(tx, v, name, found, shadowable=True)


def _is_data_descriptor(found) -> bool:
    kind = type(found)
    return (
        static_lookup(kind, "__set__") is not None or static_lookup(kind, "__delete__") is not None
    )


def _user_get(found):
    """The user's ``__get__`` of a descriptor object, else None."""
    return user_method(static_lookup(type(found), "__get__"))


def _data_descriptor_get(tx, v: UserObject, name: str, found) -> Value:
    if found is _OBJECT_CLASS:  # ``o.__class__``: its type, which the guards fix
        return Obj(v.cls, TypeSource(v.source) if v.source is not None else None)
    if _user_get(found) is not None:  # (a subclass of property's own too)
        return _descriptor_call(tx, v, name, found, "__get__", [v, Obj(v.cls)])
    if isinstance(found, property):
        if found.fget is None:  # eager code raises, with its version's message
            raise tx.state.graph_break("unsupported_object", f"property {name!r} has no getter")
        source = _class_source(v, name)
        getter = (tx.state.wrap(found.fget, AttrSource(source, "fget")) if source is not None
                  else wrap_unguarded(tx.state, found.fget))  # fmt: skip
        return tx.call(getter, [v], {})
    raise tx.state.graph_break(
        "unsupported_object", f"{name!r} of {v.describe()} is a data descriptor tcompile does "
        "not trace (a __slots__ member or the instance __dict__)",
    )  # fmt: skip


def _descriptor_call(tx, v: UserObject, name: str, found, method: str, args: list) -> Value:
    """``type(found).method(found, *args)`` for a descriptor object of the user's class: inlined,
    the descriptor read from the class's dict (reading ``type(v).name`` would call it)."""
    if v.source is None:
        descriptor = wrap_unguarded(tx.state, found)
        fn = wrap_unguarded(tx.state, user_method(static_lookup(type(found), method)))
    else:
        klass = ItemSource(AttrSource(TypeSource(v.source), "__mro__"), owner_index(v.cls, name))
        source = ItemSource(AttrSource(klass, "__dict__"), name)
        descriptor = tx.state.wrap(found, source)
        fn = tx.state.wrap(user_method(static_lookup(type(found), method)),
                           AttrSource(TypeSource(source), method))  # fmt: skip
    return tx.call(fn, [descriptor, *args], {})


def _class_attr(tx, v: UserObject, name: str, found, shadowable: bool) -> Value:
    """A non-data class attribute read through an instance: a method bound to it, a static or
    class method, the user's descriptor (its ``__get__`` inlined), or the value itself.
    ``shadowable``: an attribute of the instance would be found instead (guarded against)."""
    state, cls = tx.state, v.cls
    source = _class_source(v, name)
    if (
        shadowable
        and source is not None
        and (
            isinstance(found, (types.FunctionType, staticmethod, classmethod))
            or _user_get(found) is not None
        )
    ):
        _guard_no_own_attribute(state, v.source, cls, name)
    if isinstance(found, types.FunctionType):
        return BoundMethod(_class_value(tx, v, found, name), v)
    if isinstance(found, staticmethod):
        return _class_value(tx, v, found.__func__, name)  # type(o).name is the plain function
    if isinstance(found, classmethod):
        if source is None:
            return BoundMethod(wrap_unguarded(state, found.__func__), Obj(cls))
        return BoundMethod(state.wrap(found.__func__, AttrSource(source, "__func__")),
                           state.wrap(cls, TypeSource(v.source)))  # fmt: skip
    if _user_get(found) is not None:
        return _descriptor_call(tx, v, name, found, "__get__", [v, Obj(cls)])
    if not shadowable:  # a special method that is no Python function: eager code calls it
        raise state.graph_break("unsupported_object", f"{name} of {v.describe()} is no method "
                                "tcompile can trace")  # fmt: skip
    if v.source is None:
        return wrap_unguarded(state, found)
    # Anything else (a constant, a C method of a builtin base class): read as Python reads it
    # (around a __getattribute__ of the user's: not the one running here), guarded through the
    # instance, which sees a shadowing attribute too
    attr = object.__getattribute__(v.value, name)
    return bound_method(state, v, name, attr) or state.wrap(attr, attr_source(v, name))


def _guard_absent(state, v: UserObject, name: str) -> None:
    """``name`` is neither the object's nor its class's: the trace goes on to ``__getattr__``
    (or eager code raises); an entry made so must not serve an object that has it."""
    if v.source is None:
        return
    _guard_no_own_attribute(state, v.source, v.cls, name)
    for i, klass in enumerate(mro(v.cls)[:-1]):  # not object's: a builtin type does not change
        klass_source = ItemSource(AttrSource(TypeSource(v.source), "__mro__"), i)
        _guard_no_own_attribute(state, klass_source, type(klass), name)


def _guard_no_own_attribute(state, source, cls: type, name: str) -> None:
    """The object read from ``source``, of class ``cls``, has no attribute ``name`` of its own
    (in its __dict__), read around the class's attribute protocol where that is the user's."""
    custom = _custom_attribute_protocol(cls)
    state.guards.add(source, "no_shadow_static" if custom else "no_shadow", name)


# -- writing attributes --------------------------------------------------------------------------


def store_attr(tx, v: UserObject, name: str, value: Value) -> None:
    """``v.name = value``: the class's ``__setattr__`` (Python's own, or the user's: inlined)."""
    hook = protocol_hook(v.cls, "__setattr__")
    if hook is None:
        generic_store(tx, v, name, value)
    else:
        tx.call(_hook(tx, v, hook, "__setattr__"), [Const(name), value], {})


def generic_store(tx, v: UserObject, name: str, value: Value) -> None:
    """``object.__setattr__(v, name, value)``: a data descriptor's setter (a property's, the
    user's ``__set__``: inlined), else the instance's attribute."""
    state = tx.state
    found = static_lookup(v.cls, name, _MISSING)
    if found is not _MISSING and _is_data_descriptor(found):
        if user_method(static_lookup(type(found), "__set__")) is not None:
            _descriptor_call(tx, v, name, found, "__set__", [v, value])
            return
        if isinstance(found, property) and found.fset is not None:
            source = _class_source(v, name)
            setter = (state.wrap(found.fset, AttrSource(source, "fset")) if source is not None
                      else wrap_unguarded(state, found.fset))  # fmt: skip
            tx.call(setter, [v, value], {})
            return
        raise state.graph_break("unsupported_mutation", f"setting {name!r} of {v.describe()} "
                                "(a data descriptor without a Python setter)")  # fmt: skip
    state.note_mutation(v)
    v.overlay[name] = value
    if v.new_cls is None:  # a pre-existing object: the write is replayed after the graph
        v.mutated = True
        state.effects.write_attr(v, name)


def replays_around_setattr(v: UserObject) -> bool:
    """Whether the glue replays ``v``'s attribute writes with ``object.__setattr__``: its class
    has a ``__setattr__`` of its own, which ran in the trace already."""
    return protocol_hook(v.cls, "__setattr__") is not None


# -- special methods -----------------------------------------------------------------------------


def special_method(tx, v: UserObject, name: str) -> Value:
    """``type(v).name`` bound to ``v``: the method an implicit call runs (``len(v)``, ``v[i]``,
    ``v()``, a with-block), looked up on the class alone, as Python does (an instance attribute
    or a ``__getattribute__`` plays no part)."""
    found = static_lookup(v.cls, name, _MISSING)
    if found is _MISSING:  # eager code raises (each statement its own error)
        raise tx.state.graph_break("unsupported_object", f"{v.describe()} has no {name}")
    return _class_attr(tx, v, name, found, shadowable=False)


# -- isinstance and issubclass -------------------------------------------------------------------


def isinstance_of(tx, value: Value, classes: Value) -> bool:
    """``isinstance(value, classes)`` as CPython answers it: the exact type first, a tuple or a
    union item by item, then the metaclass's ``__instancecheck__`` (the user's: inlined; an
    ABC's: asked now, guarded by abc's cache token), else the type's MRO and then the
    ``__class__`` the object reports."""
    cls = classes.constant()
    if value.python_type() is cls:
        return True
    if type(cls) is tuple or isinstance(cls, types.UnionType):
        return any(isinstance_of(tx, value, item) for item in _items(classes, cls))
    meta = type(cls)
    check = static_lookup(meta, "__instancecheck__")
    if check is None or check is _TYPE_INSTANCECHECK:
        return real_isinstance(tx, value, cls)
    if _is_abc(meta):
        subclass = _reported_class(tx, value, always=True)
        subtype = value.python_type()
        return _abc_subclasscheck(tx, cls, subclass) or (
            subtype is not subclass and _abc_subclasscheck(tx, cls, subtype)
        )
    return tx.truth(_metaclass_hook(tx, classes, check, "__instancecheck__", value))


def real_isinstance(tx, value: Value, cls) -> bool:
    """``type.__instancecheck__(cls, value)``: by the MRO of the value's type, else of the
    class its ``__class__`` reports."""
    if not isinstance(cls, type):
        return _not_a_class(tx, isinstance, cls)
    own = value.python_type()
    if cls in mro(own):
        return True
    reported = _reported_class(tx, value)
    return reported is not own and isinstance(reported, type) and cls in mro(reported)


def issubclass_of(tx, derived: Value, classes: Value) -> bool:
    """``issubclass(derived, classes)`` as CPython answers it (see `isinstance_of`)."""
    cls = classes.constant()
    if type(cls) is tuple or isinstance(cls, types.UnionType):
        return any(issubclass_of(tx, derived, item) for item in _items(classes, cls))
    meta = type(cls)
    check = static_lookup(meta, "__subclasscheck__")
    if check is None or check is _TYPE_SUBCLASSCHECK:
        return real_issubclass(tx, derived, cls)
    if _is_abc(meta):
        return _abc_subclasscheck(tx, cls, _known_class(tx, derived))
    return tx.truth(_metaclass_hook(tx, classes, check, "__subclasscheck__", derived))


def real_issubclass(tx, derived: Value, cls) -> bool:
    """``type.__subclasscheck__(cls, derived)`` for classes: by ``derived``'s MRO."""
    klass = _known_class(tx, derived)
    if not isinstance(cls, type):
        return _not_a_class(tx, issubclass, cls)
    return cls in mro(klass)


def _items(classes: Value, cls) -> list[Value]:
    """The classes of a tuple or a union, in order (a constant one's as fixed as it is)."""
    if isinstance(classes, TupleValue):
        return classes.items
    return [Obj(c) for c in (cls if type(cls) is tuple else cls.__args__)]


def _known_class(tx, v: Value) -> type:
    try:
        klass = v.constant()
    except NotConstant:
        klass = None
    if not isinstance(klass, type):  # eager raises, or asks an object's __bases__: not traced
        raise tx.state.graph_break("unsupported_object", f"issubclass() of {v.describe()}")
    return klass


def _not_a_class(tx, check, cls) -> bool:
    """``check(..., cls)`` where ``cls`` is no class: the TypeError eager code raises, or, for
    an object that acts as a class through a ``__bases__`` of its own, a break."""
    try:
        check(object, cls)
    except TypeError as error:
        raise UserErrorInTrace(error) from error
    raise tx.state.graph_break("unsupported_object", f"{check.__name__}() with {cls!r}, no class")


def _is_abc(meta: type) -> bool:
    """An ABC whose metaclass keeps abc's own hooks (`_abc_subclasscheck` answers)."""
    return (static_lookup(meta, "__instancecheck__"), static_lookup(meta, "__subclasscheck__")) \
        == _ABC_HOOKS  # fmt: skip


def _abc_subclasscheck(tx, cls, subclass) -> bool:
    """An ABC's answer, asked now: the registry and the cache of its answers (a user's
    ``__subclasshook__`` runs at most once per class, for eager code too) decide it; a class
    registered with any ABC later changes abc's cache token, which the entry guards."""
    tx.state.guards.add(AbcCacheTokenSource(), "const", abc.get_cache_token())
    try:
        return bool(type(cls).__subclasscheck__(cls, subclass))
    except Exception as error:
        raise UserErrorInTrace(error) from error


def _metaclass_hook(tx, classes: Value, found, name: str, arg: Value) -> Value:
    """The user's metaclass method ``name`` (found statically) called on the class: inlined."""
    meta = type(classes.constant())
    fn = user_method(found)
    if fn is None or isinstance(found, (staticmethod, classmethod)):
        raise tx.state.graph_break(
            "unsupported_object",
            f"{meta.__qualname__}.{name} is not Python code tcompile can trace",
        )
    source = AttrSource(TypeSource(classes.source), name) if classes.source is not None else None
    method = tx.state.wrap(fn, source) if source is not None else wrap_unguarded(tx.state, fn)
    return tx.call(BoundMethod(method, classes), [arg], {})


def _reported_class(tx, value: Value, always: bool = False):
    """``value.__class__`` as isinstance reads it: its type, unless the class defines
    ``__class__`` or a ``__getattribute__``: then the read is traced like the user's own (the
    user's code runs, as eagerly). An AttributeError means no class (``always``: it raises, as
    an ABC's check does)."""
    own = value.python_type()
    if protocol_hook(own, "__class__") is None and protocol_hook(own, "__getattribute__") is None:
        return own
    if not isinstance(value, UserObject):
        raise tx.state.graph_break("unsupported_object", f"__class__ of {value.describe()}")
    try:
        reported = tx.get_attr(value, "__class__")
    except UserErrorInTrace as error:
        if always or not isinstance(error.error, AttributeError):
            raise
        return None
    try:
        return reported.constant()
    except NotConstant:
        raise tx.state.graph_break(
            "unsupported_object", f"the __class__ {value.describe()} reports is not a known class"
        ) from None


# -- the C methods user code calls to reach Python's own protocol --------------------------------


def _object_getattribute(tx, args, kwargs):
    obj, name = args
    if isinstance(obj, UserObject):
        return generic_attr(tx, obj, name.constant())
    return tx.get_attr(obj, name.constant())


def _object_setattr(tx, args, kwargs):
    obj, name, value = args
    if not isinstance(obj, UserObject):
        raise tx.state.graph_break(
            "unsupported_mutation", f"object.__setattr__ on {obj.describe()}"
        )
    generic_store(tx, obj, name.constant(), value)
    return Const(None)


def _type_instancecheck(tx, args, kwargs):
    cls, value = args
    return Const(real_isinstance(tx, value, cls.constant()))


def _type_subclasscheck(tx, args, kwargs):
    cls, derived = args
    return Const(real_issubclass(tx, derived, cls.constant()))


def _isinstance(tx, args, kwargs):
    return Const(isinstance_of(tx, *args))


def _issubclass(tx, args, kwargs):
    return Const(issubclass_of(tx, *args))


# Handlers in the form of `builtins_impl.BUILTINS`
HANDLERS = {
    isinstance: _isinstance,
    issubclass: _issubclass,
    object.__getattribute__: _object_getattribute,
    object.__setattr__: _object_setattr,
    _TYPE_INSTANCECHECK: _type_instancecheck,
    _TYPE_SUBCLASSCHECK: _type_subclasscheck,
}
