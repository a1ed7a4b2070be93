"""Running NumPy at trace time without touching warnings, on this thread or any other.

Tracing runs operations on example values; their warnings belong to the real run (the graph
runs the same operation at the user's line and warns there, on every call, as eager code does).
`warnings.catch_warnings` swaps process-wide state and would silence other threads running user
code meanwhile. Instead two filter entries are kept at the front of ``warnings.filters``; their
categories are classes whose ``issubclass`` check is true only on a thread inside `silenced`
(action "ignore") or `strict` (action "error"), so no other thread's warnings change.
NumPy's floating-point warnings are controlled with ``np.errstate``, which is per thread already.

    with silenced():            # an example run: no warning, no error from NumPy's fp checks
        y = np.log(x_example)
    with strict():              # folding a constant: any warning or fp error aborts the fold,
        c = np.sqrt(-1.0)       # so the operation goes into the graph and warns at run time
"""

from __future__ import annotations

import contextlib
import threading
import warnings

import numpy as np

_mode = threading.local()


class _ThisThread(type):
    """Metaclass of the filter categories: a warning 'is' one only on a thread in that mode."""

    def __subclasscheck__(cls, subclass) -> bool:
        return getattr(_mode, "value", None) == cls.mode


class _Silenced(Warning, metaclass=_ThisThread):
    mode = "ignore"


class _Strict(Warning, metaclass=_ThisThread):
    mode = "error"


_ENTRIES = [("ignore", None, _Silenced, None, 0), ("error", None, _Strict, None, 0)]


def _install() -> None:
    """Put the two entries first (user code and test runners insert filters in front)."""
    filters = warnings.filters
    if filters[:2] != _ENTRIES:
        filters[:] = _ENTRIES + [f for f in filters if f[2] not in (_Silenced, _Strict)]
        warnings._filters_mutated()


@contextlib.contextmanager
def _in_mode(mode: str, fp: str):
    _install()
    previous = getattr(_mode, "value", None)
    _mode.value = mode
    try:
        with np.errstate(all=fp):
            yield
    finally:
        _mode.value = previous


def silenced():
    """This thread's warnings are dropped and NumPy's fp errors ignored."""
    return _in_mode("ignore", "ignore")


def strict():
    """This thread's warnings become exceptions, and so do NumPy's fp errors."""
    return _in_mode("error", "raise")
