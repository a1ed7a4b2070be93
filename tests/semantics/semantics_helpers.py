"""Helpers shared by the seed-document behaviour tests in tests/semantics/.

The tests read PyTorch's documents for NumPy: ``torch.randn(3)`` is ``randn(3)`` below (a
fixed array), ``torch._dynamo.X`` is ``tc.X``, ``torch.compile`` is ``tc.compile``.
"""

from __future__ import annotations

import copy
import inspect
import re

import harness
import numpy as np

import tcompile as tc


def randn(*shape, seed: int = 0) -> np.ndarray:
    """``torch.randn(*shape)`` read for NumPy: a fixed standard-normal array."""
    return np.random.default_rng(seed).standard_normal(shape)


def rand(*shape, seed: int = 0) -> np.ndarray:
    """``torch.rand(*shape)`` read for NumPy: a fixed uniform [0, 1) array."""
    return np.random.default_rng(seed).random(shape)


def plain_function(fn):
    """The user's own function under any tcompile wrappers (``functools.wraps`` chains)."""
    plain = inspect.unwrap(fn)
    assert not hasattr(plain, "__tc_compiled__"), f"could not unwrap {fn!r} to the eager function"
    return plain


def eager(fn, *args, **kwargs):
    """Run the user's function eagerly (no tcompile wrapper) on deep copies of the arguments."""
    args, kwargs = copy.deepcopy((args, kwargs))
    return plain_function(fn)(*args, **kwargs)


def assert_same(actual, expected) -> None:
    """``actual`` is ``expected`` bitwise and by type (the harness's comparison)."""
    harness.assert_same(expected, actual, "actual")


def run_counted(compiled, *args, **kwargs):
    """After ``tc.reset()``, one call of ``compiled``: returns ``(result, counters)``."""
    tc.reset()
    out = compiled(*args, **kwargs)
    return out, dict(tc.counters())


def explain_fresh(fn, *args, **kwargs):
    """``tc.explain(fn)(*args)`` after ``tc.reset()``, on deep copies of the arguments."""
    tc.reset()
    args, kwargs = copy.deepcopy((args, kwargs))
    return tc.explain(fn)(*args, **kwargs)


def has_frame(qualnames, name: str) -> bool:
    """Whether a function called ``name`` is among ``qualnames`` (matched by qualname suffix:
    ``test_x.<locals>.inner1`` is ``inner1``; a resume function of ``fn`` is not ``fn``)."""
    return any(q == name or q.endswith("." + name) for q in qualnames)


def resume_frames(qualnames) -> list[str]:
    """The resume functions (continuations after a graph break) among ``qualnames``."""
    return [q for q in qualnames if "(resumed " in q]


def all_ops(report) -> list[str]:
    """Every op of every graph of an explain report, flattened."""
    return [op for ops in report.ops_per_graph for op in ops]


def line_of(fn, marker: str) -> int:
    """The absolute line number of the one source line of ``fn`` that contains ``marker``."""
    lines, start = inspect.getsourcelines(plain_function(fn))
    hits = [start + i for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times in {fn.__qualname__}"
    return hits[0]


def source_line(fn, marker: str) -> str:
    lines, _ = inspect.getsourcelines(plain_function(fn))
    (hit,) = [text for text in lines if marker in text]
    return hit.strip()


def assert_points_at(message: str, fn, marker: str) -> None:
    """An error message names the file, the line number and the source line of ``fn``'s
    line containing ``marker``."""
    filename = plain_function(fn).__code__.co_filename
    lineno = line_of(fn, marker)
    assert filename in message, f"{filename} not in:\n{message}"
    assert f"line {lineno}" in message, f"line {lineno} not in:\n{message}"
    assert source_line(fn, marker) in message, f"{source_line(fn, marker)!r} not in:\n{message}"


def assert_not_pointing_at(message: str, fn, marker: str) -> None:
    assert f"line {line_of(fn, marker)}" not in message, message


def hint_text(message: str) -> str:
    """An error message without its file paths (a test file's name must not satisfy a check
    that the message suggests, say, ``nonstrict_trace``)."""
    return re.sub(r"\S*\.py\b", "<file>", message)
