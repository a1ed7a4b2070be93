"""When a graph raises at run time: put back what it wrote, and run the frame eagerly instead.

An operation in a graph can raise for particular values (a singular matrix, an out-of-range
index, ``FloatingPointError`` under ``np.errstate(...="raise")``). Eager code would have done
everything before that operation (list appends, attribute writes, prints: the glue replays
those only after the graph) and then raised, or run an ``except``/``finally`` clause. So the
glue catches the graph's exception and runs the whole frame again as plain Python, which
reproduces all of that exactly once. That is exact as long as the graph changed nothing the
caller can see before it raised: its only visible effects are writes into input arrays, so the
inputs a failing node may already have written are copied before the graph runs and restored
before the eager run:

    __tc_saved = __tc_snapshot((x,), ())       # inputs written before a node that may raise
    __tc_seen = __tc_watch()                   # warnings shown before it (if any can be)
    try:
        __tc_o = __tc_graph(x, y)
    except Exception:
        __tc_seen = __tc_unwatch(__tc_seen)
        __tc_restore(__tc_saved)
        with __tc_skipping(__tc_seen): return __tc_rerun(x, y)
    __tc_unwatch(__tc_seen)

Which nodes may raise is their risk (`effects`): "raise" nodes always; "fp" nodes only when the
caller's ``np.errstate`` turns floating-point errors into exceptions, which is checked per call.
"""

from __future__ import annotations

import numpy as np

from . import quiet
from .graph import Graph
from .node import FP, RAISE, SILENT, Node

try:  # NumPy >= 2: the errstate lives in a context variable; the default is one object
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE

    _DEFAULT_ERRSTATE = _ERRSTATE.get()
except ImportError:  # pragma: no cover - NumPy 1.26
    _ERRSTATE = None


def inputs_to_save(graph: Graph) -> tuple[list[Node], list[Node]]:
    """(inputs to copy always, inputs to copy only when fp errors raise): the inputs written
    at or before a node that may raise."""
    written: list[Node] = []
    always: list[Node] = []
    fp_only: list[Node] = []
    for node in _operations(graph):
        written += [n for n in node.writes_inputs if n not in written]
        if node.risk == RAISE:
            always += [n for n in written if n not in always]
        if node.risk in (RAISE, FP):
            fp_only += [n for n in written if n not in fp_only and n not in always]
    fp_only = [n for n in fp_only if n not in always]
    return always, fp_only


def warns_before_raising(graph: Graph) -> bool:
    """Whether a node that can warn runs before one that can raise: the warnings a failing
    graph showed must not show again in the eager rerun (`quiet.watch`)."""
    risks = [node.risk for node in _operations(graph)]
    last = max((i for i, r in enumerate(risks) if r == RAISE), default=0)
    return any(r != SILENT for r in risks[:last])


def _operations(graph: Graph) -> list[Node]:
    return [node for node in graph.nodes if node.op not in ("input", "output")]


def fp_errors_raise() -> bool:
    """Whether the current ``np.errstate`` turns some floating-point error into an exception."""
    if _ERRSTATE is not None and _ERRSTATE.get() is _DEFAULT_ERRSTATE:
        return False
    return any(mode in ("raise", "call") for mode in np.geterr().values())


def snapshot(always: tuple, fp_only: tuple) -> list:
    """Copies of the arrays a failing graph may have written (NumPy arrays, or the device
    arrays a backend takes as they are: torch tensors, CuPy arrays), with their flags."""
    arrays = always + fp_only if fp_only and fp_errors_raise() else always
    return [(a, _copy(a), isinstance(a, np.ndarray) and a.flags.writeable) for a in arrays]


def _copy(array):
    if isinstance(array, np.ndarray):
        return array.copy(order="K")
    clone = getattr(array, "clone", None)  # torch; CuPy arrays have NumPy's ``copy``
    return clone() if clone is not None else array.copy()


def restore(saved: list) -> None:
    for array, copy, writeable in reversed(saved):
        if isinstance(array, np.ndarray):
            # with the flag it had: the graph may have made it read-only after writing it
            # (``x.flags.writeable = False``), and the eager rerun writes it again first
            if not array.flags.writeable:
                array.flags.writeable = True
            np.copyto(array, copy)
            if array.flags.writeable != writeable:  # (an array over another library's memory
                array.flags.writeable = writeable  # refuses the flag set again, even to True)
        elif hasattr(array, "copy_"):  # torch
            array.copy_(copy)
        else:
            array[...] = copy


RUNTIME_NAMES = {"__tc_snapshot": snapshot, "__tc_restore": restore, "__tc_watch": quiet.watch,
                 "__tc_unwatch": quiet.unwatch, "__tc_skipping": quiet.skipping}  # fmt: skip
