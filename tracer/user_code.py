"""Which code is the user's: what tcompile inlines and compiles, as opposed to NumPy's, the
standard library's and tcompile's own."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import sysconfig
import types

from . import numpy_table

# tcompile's own files (wrappers such as disable, error_on_graph_break, compile).
OWN_DIR = os.path.dirname(os.path.abspath(__file__))
# Functions whose call does not run their body (it makes a generator or coroutine).
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_STDLIB = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def is_user_function(fn: types.FunctionType) -> bool:
    """Functions tcompile inlines: not NumPy's, not tcompile's, not the standard library's."""
    return _is_user_code(getattr(fn, "__module__", None) or "", fn.__code__.co_filename)


@functools.lru_cache(maxsize=4096)
def _is_user_code(module: str, filename: str) -> bool:
    top = module.partition(".")[0]
    if (
        top in ("numpy", "tcompile")
        or top in sys.stdlib_module_names
        or filename.startswith("<frozen")
    ):
        return False
    path = os.path.abspath(filename)
    if path.startswith(OWN_DIR):
        return False
    return not (path.startswith(_STDLIB) and "site-packages" not in path)


def is_user_instance(obj: object) -> bool:
    """Instances of the user's classes, whose attributes the trace reads and writes."""
    t = type(obj)
    module = getattr(t, "__module__", "") or ""
    if module.partition(".")[0] == "tcompile":
        return False  # tcompile's own objects (custom ops, nonstrict_trace wrappers) are known
    if (
        module in ("builtins", "functools")  # C objects with a __dict__ (lru_cache wrappers)
        or numpy_table.is_numpy_object(obj)
        or isinstance(obj, types.ModuleType)
    ):
        return False
    return hasattr(obj, "__dict__") and not isinstance(
        obj, (type, types.FunctionType, types.MethodType)
    )
