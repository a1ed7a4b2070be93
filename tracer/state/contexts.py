"""The context managers a trace enters and that survive graph breaks: ``nullcontext``,
``np.errstate`` and ``tc.error_on_graph_break``. They are values in the trace (``BEFORE_WITH``
enters them, their exit call leaves them); at a break the glue re-enters them around the
resume function. A user-defined manager is inlined instead (a break inside it skips the frame).
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import hatches
from ..values.core import Obj, Value
from ..values.functions import ContextManager

SUPPORTED = (contextlib.nullcontext, np.errstate, hatches.error_on_graph_break)


def is_supported(manager: Value) -> bool:
    """A manager made in the trace, or a real one read from a source, of a supported kind."""
    if isinstance(manager, ContextManager):
        return manager.cls in SUPPORTED
    return isinstance(manager, Obj) and isinstance(manager.value, SUPPORTED)


class OpenContexts:
    """The supported with-blocks open at the current instruction, outermost first."""

    def __init__(self, breaks):
        self.exits: list = []  # ContextExit values
        self._breaks = breaks  # the BreakPolicy that tc.error_on_graph_break blocks set

    def __iter__(self):
        return iter(self.exits)

    def enter(self, exit_value) -> None:
        manager = exit_value.manager
        if manager.python_type() is hatches.error_on_graph_break:
            self._breaks.push_setting(_error_flag(manager))
        self.exits.append(exit_value)

    def exit(self, exit_value) -> None:
        if exit_value.manager.python_type() is hatches.error_on_graph_break:
            self._breaks.pop_setting()
        self.exits.remove(exit_value)

    def errstate(self) -> tuple:
        """The np.errstate settings in force (innermost wins), as sorted (key, value) pairs."""
        settings: dict = {}
        for exit_value in self.exits:
            if exit_value.manager.python_type() is np.errstate:
                settings.update(errstate_settings(exit_value.manager))
        return tuple(sorted(settings.items()))

    def fp_ignored(self) -> frozenset[str]:
        """The kinds of fp error eager code ignores here: the caller's ``np.geterr()``, then
        the trace's open np.errstate blocks, outermost first."""
        settings = np.geterr()
        for exit_value in self.exits:
            if exit_value.manager.python_type() is np.errstate:
                given = errstate_settings(exit_value.manager)
                settings = {k: given.get(k, given.get("all", v)) for k, v in settings.items()}
        return frozenset(k for k, v in settings.items() if v == "ignore")


def errstate_settings(manager: Value) -> dict:
    """The keyword arguments of an np.errstate made in the trace, or of a real one."""
    if isinstance(manager, ContextManager):
        return {k: v.value for k, v in manager.kwargs.items() if k != "call"}
    real = manager.value
    names = ("all", "divide", "over", "under", "invalid")
    return {k: getattr(real, f"_{k}") for k in names if getattr(real, f"_{k}", None) is not None}


def _error_flag(manager: Value) -> bool:
    """The flag of an error_on_graph_break manager (made in the trace, or a real object)."""
    if isinstance(manager, ContextManager):
        return bool(manager.args[0].value if manager.args else manager.kwargs["flag"].value)
    return manager.value.flag
