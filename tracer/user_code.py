"""Which code is the user's: what tcompile inlines and compiles, as opposed to NumPy's, the
standard library's and tcompile's own; the user's methods behind a class attribute; names for
messages read without running user code (the class lookups themselves: `ir.static_lookup`)."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import sysconfig
import types

from .ir.static_lookup import owner_index, protocol_hook, subclass_of, type_attribute

# tcompile's own files (wrappers such as disable, error_on_graph_break, compile).
OWN_DIR = os.path.dirname(os.path.abspath(__file__))
# Functions whose call does not run their body (it makes a generator or coroutine).
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def is_user_function(fn: types.FunctionType) -> bool:
    """Functions tcompile inlines: not NumPy's, Dask's or tcompile's, not the standard
    library's."""
    return _is_user_code(getattr(fn, "__module__", None) or "", fn.__code__.co_filename)


# Libraries whose code is never traced: NumPy's, and Dask's, whose arrays a trace models as
# NumPy arrays (its functions called on one would see an ndarray, not a Dask array).
_LIBRARIES = ("numpy", "tcompile", "dask", "distributed")


@functools.lru_cache(maxsize=4096)
def _is_user_code(module: str, filename: str) -> bool:
    top = module.partition(".")[0]
    if top in _LIBRARIES or top in sys.stdlib_module_names or filename.startswith("<frozen"):
        return False
    path = os.path.abspath(filename)
    if path.startswith(OWN_DIR):
        return False
    return not (path.startswith(_STDLIB) and "site-packages" not in path)


def is_user_instance(obj: object) -> bool:
    """Instances of the user's classes, whose attributes the trace reads and writes. Asked of
    the type alone: the object's own attribute protocol (``__getattribute__``, a ``__class__``
    property) is the user's code, which tcompile never runs to look at it."""
    t = type(obj)
    module = type_attribute(t, "__module__") or ""
    if module.partition(".")[0] == "tcompile":
        return False  # tcompile's own objects (custom ops, nonstrict_trace wrappers) are known
    if (
        module in ("builtins", "functools")  # C objects with a __dict__ (lru_cache wrappers)
        or module.partition(".")[0] == "numpy"
        or subclass_of(t, (types.ModuleType,))
    ):
        return False
    # __slots__ instead of a __dict__: the user's classes only (the standard library's are known
    # constants, fractions.Fraction...)
    slots = owner_index(t, "__slots__") is not None and module.partition(".")[0] not in (
        sys.stdlib_module_names
    )
    has_attributes = type_attribute(t, "__dictoffset__") != 0 or slots
    return has_attributes and not subclass_of(t, (type, types.FunctionType, types.MethodType))


def user_method(found) -> types.FunctionType | None:
    """The user's Python function behind a class attribute (plain, or wrapped by staticmethod
    or classmethod: the caller binds it), else None."""
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    return found if type(found) is types.FunctionType and is_user_function(found) else None


def instance_dict(obj) -> dict:
    """The instance dict of ``obj`` (empty for none), read without its attribute protocol."""
    try:
        return object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return {}


def name_of(obj) -> str | None:
    """``obj.__qualname__`` (or ``__name__``) where reading it runs none of the user's code (a
    module's ``__getattr__``, a metaclass's hooks), for messages; None where it has none."""
    t = type(obj)
    if subclass_of(t, (type,)):
        return type_attribute(obj, "__qualname__")
    if subclass_of(t, (types.ModuleType,)):
        name = obj.__dict__.get("__name__")
    elif protocol_hook(t, "__getattribute__") or protocol_hook(t, "__getattr__"):
        return None
    else:
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return name if isinstance(name, str) else None
