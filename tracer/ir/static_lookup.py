"""Attributes of classes read without running any of their code: a class's own slots read
through `type`'s descriptors, so a metaclass's ``__getattribute__`` or ``__getattr__`` (user
code) never runs. The NumPy table and the array kinds ask these; so does the tracer.
"""

from __future__ import annotations

import types

_MRO = type.__dict__["__mro__"].__get__
_NAMESPACE = type.__dict__["__dict__"].__get__


def type_attribute(cls: type, name: str):
    """One of what every class has (``__module__``, ``__dictoffset__``...), as `type` reads it."""
    return type.__dict__[name].__get__(cls)


def static_lookup(cls: type, name: str, default=None):
    """What ``cls.name`` finds in the class dicts along its MRO, without calling a descriptor's
    ``__get__`` or any hook of its metaclass (as ``inspect.getattr_static`` on a class)."""
    index = owner_index(cls, name)
    return default if index is None else _NAMESPACE(_MRO(cls)[index])[name]


def owner_index(cls: type, name: str) -> int | None:
    """Where in ``cls``'s MRO the class whose own dict holds ``name`` is (None: nowhere)."""
    for i, klass in enumerate(_MRO(cls)):
        if name in _NAMESPACE(klass):
            return i
    return None


def subclass_of(cls: type, bases: tuple) -> bool:
    """``issubclass(cls, bases)`` by the MRO alone (no ``__subclasscheck__`` hook runs)."""
    mro = _MRO(cls)
    return any(base in mro for base in bases)


# What C code implements: Python's own machinery, never the user's
_C_CODE = (types.WrapperDescriptorType, types.MethodDescriptorType, types.BuiltinFunctionType,
           types.GetSetDescriptorType, types.MemberDescriptorType)  # fmt: skip


def protocol_hook(cls: type, name: str):
    """The user's code behind the attribute protocol method ``name`` of ``cls`` objects
    (``__getattribute__``, ``__getattr__``, ``__setattr__``, a ``__class__`` descriptor): what
    the class defines in Python (a function the trace inlines, or something else it cannot see
    into), None where that is C code (``object``'s, a builtin base class's)."""
    found = static_lookup(cls, name)
    return None if found is None or isinstance(found, _C_CODE) else found


def mro(cls: type) -> tuple:
    """``cls.__mro__``, read without a metaclass's hooks."""
    return _MRO(cls)
