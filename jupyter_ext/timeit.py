"""``%%tcompile --timeit``: whether compiling paid off, on the cell's own calls.

After the cell ran (compiling its functions on their first calls), its statements other than
its definitions run again, in turn with the functions it defined compiled (warm: nothing
compiles any more) and plain (the functions as written), each in a copy of the user's namespace
with their printed output dropped, a few rounds each way while there is time; the medians are
the cell's `CellTiming`. Like IPython's ``%timeit``, this runs the user's code again: code that
changes objects in place (an array it was given, a list) changes them each time. Methods of
the classes a cell defines stay compiled in both runs (the class is one object for both).
"""

from __future__ import annotations

import ast
import contextlib
import io
import statistics
import time
import types

from tcompile.widgets.model import CellTiming

ROUNDS = 5  # at most, each way
BUDGET_S = 3.0  # no new round once the runs took this long


def measure(shell, tree: ast.Module, filename: str, defined: list[str]) -> CellTiming | None:
    """The cell's statements (``tree`` less its definitions) timed compiled and plain; None
    when there is nothing to time or a run raises."""
    calls = [node for node in tree.body if not _defines(node)]
    if not calls or not defined:
        return None
    code = shell.compile(ast.Module(calls, type_ignores=[]), filename, "exec")
    compiled_ns = dict(shell.user_ns)
    plain_ns = dict(compiled_ns)
    for name in defined:
        plain_ns[name] = plain_function(plain_ns.get(name))
    runs: dict[bool, list[float]] = {True: [], False: []}
    start = time.perf_counter()
    try:
        while len(runs[True]) < ROUNDS and time.perf_counter() - start < BUDGET_S:
            for compiled, namespace in ((False, plain_ns), (True, compiled_ns)):
                runs[compiled].append(_timed(code, dict(namespace)))
    except Exception:  # noqa: BLE001 - the cell's own run decided; timings are a bonus
        return None
    return CellTiming(statistics.median(runs[True]), statistics.median(runs[False]),
                      len(runs[True]))  # fmt: skip


def plain_function(value):
    """What a tcompile wrapper compiles (anything else as it is)."""
    frame = getattr(value, "__tc_compiled__", None)
    if frame is not None:
        return frame.fn
    inner = getattr(value, "__tc_error_on_graph_break__", None)
    return plain_function(inner[1]) if inner is not None else value


def _timed(code: types.CodeType, namespace: dict) -> float:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        start = time.perf_counter()
        exec(code, namespace)  # noqa: S102 - the user's cell, as they asked with --timeit
        return time.perf_counter() - start


def _defines(node: ast.stmt) -> bool:
    """A definition: running it again would make new functions or classes (cold again)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)
