"""Differential-test corpus: small NumPy functions registered with the arguments to call them with.

Each module groups one construct family and registers functions with decorators:

    @case(np.ones(8), 2)          # must be captured in one graph (fullgraph=True)
    def scale(x, k): ...

    @raises(np.ones(8, np.int8))  # eager raises; compiled must raise the same
    def overflow(x): return x + 300

    @breaks(np.ones(8))           # must graph-break; the breaking line carries `# BREAK`
    def noisy(x): print(x)  # BREAK

A decorator may be stacked to register several argument sets for one function.
`capture_cases()`, `raises_cases()` and `breaking_cases()` import every module and return the lists.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Modules whose functions must be captured without a graph break.
CAPTURE_MODULES = (
    "numpy_funcs",
    "ndarray_methods",
    "operators",
    "python_values",
    "closures_globals",
    "user_functions",
    "user_objects",
    "loops",
    "branches",
    "comprehensions",
    "unpacking",
    "indexing",
    "mutation",
    "results",
)
BREAKING_MODULES = ("breaking",)


@dataclass(frozen=True)
class Case:
    """One registered call: `fn(*args, **kwargs)`, shown in test ids as `id`."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    # Breaking cases only: the function whose source holds the `# BREAK` marker
    # (an inlined helper when the break happens inside a callee); defaults to `fn`.
    break_in: Callable[..., Any] | None = None


class TmpPath:
    """Placeholder argument replaced by the test with a file path under pytest's `tmp_path`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"TmpPath({self.name!r})"


_CAPTURE: list[Case] = []
_RAISES: list[Case] = []
_BREAKING: list[Case] = []
_ids: dict[str, int] = {}


def _unique_id(name: str) -> str:
    n = _ids.get(name, 0)
    _ids[name] = n + 1
    return name if n == 0 else f"{name}-{n + 1}"


def _register(store: list[Case], args: tuple, kwargs: dict, id: str | None, break_in=None):
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        store.append(Case(fn, args, kwargs, _unique_id(id or fn.__name__), break_in))
        return fn

    return deco


def case(*args: Any, id: str | None = None, **kwargs: Any):
    """Register `fn(*args, **kwargs)` as a call that must compile to one graph."""
    return _register(_CAPTURE, args, kwargs, id)


def raises(*args: Any, id: str | None = None, **kwargs: Any):
    """Register a call that raises eagerly; the compiled function must raise the same."""
    return _register(_RAISES, args, kwargs, id)


def breaks(*args: Any, id: str | None = None, break_in: Callable | None = None, **kwargs: Any):
    """Register a call that must graph-break on the line marked `# BREAK` (in `break_in` or fn)."""
    return _register(_BREAKING, args, kwargs, id, break_in)


def register(fn: Callable[..., Any], *args: Any, id: str, **kwargs: Any) -> None:
    """Register a function object that cannot be decorated (e.g. a closure built by a factory)."""
    case(*args, id=id, **kwargs)(fn)


def _load(modules: tuple[str, ...]) -> None:
    for name in modules:
        importlib.import_module(f"{__name__}.{name}")


def capture_cases() -> list[Case]:
    _load(CAPTURE_MODULES)
    return list(_CAPTURE)


def raises_cases() -> list[Case]:
    _load(CAPTURE_MODULES)
    return list(_RAISES)


def breaking_cases() -> list[Case]:
    _load(BREAKING_MODULES)
    return list(_BREAKING)
