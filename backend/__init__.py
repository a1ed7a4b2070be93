"""Backends: turn a captured graph into a callable.

A backend is ``(graph, example_inputs) -> callable``; the callable takes the graph's inputs
positionally and returns the tuple the graph's output node lists. ``lookup_backend`` accepts a
registered name or any such callable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .eager import eager_backend

BACKENDS: dict[str, Callable] = {"eager": eager_backend}


def register_backend(name: str, backend: Callable) -> None:
    BACKENDS[name] = backend


@dataclass(frozen=True)
class BackendChoice:
    """A backend a user can pick: usable here or not, and why not."""

    name: str
    usable: bool = True
    reason: str = ""


def backend_choices() -> list[BackendChoice]:
    """The backend names a user can pick (``auto`` first), each usable or not and why not."""
    choices = [BackendChoice("auto", True, "eager here")]
    for name, backend in BACKENDS.items():
        why_not = getattr(backend, "unavailable", lambda: "")()
        choices.append(BackendChoice(name, not why_not, why_not))
    return choices


def lookup_backend(backend) -> Callable:
    """The backend callable for a name ("eager", "auto", ...) or a user callable."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(
            f"backend must be a name or a callable (graph, example_inputs) -> callable, "
            f"not {type(backend).__name__}"
        )
    if backend == "auto":
        return BACKENDS["eager"]
    if backend not in BACKENDS:
        known = ", ".join(sorted([*BACKENDS, "auto"]))
        raise ValueError(
            f"unknown backend {backend!r}; available: {known}, or a callable "
            f"(graph, example_inputs) -> callable"
        )
    return BACKENDS[backend]
