"""Backends: turn a captured graph into a callable.

A backend is ``(graph, example_inputs) -> callable``; the callable takes the graph's inputs
positionally and returns the tuple the graph's output node lists. ``lookup_backend`` accepts a
registered name or any such callable. Of the tracer a backend reads only the graph IR
(`tcompile.tracer.ir`; tests/test_layering.py checks it): `eager` (the graph's printed Python,
with a `memory_plan`), `cpu` (machine code by numba), `triton` (fused kernels), `dask` (graphs
on Dask arrays, each backend's kernels run chunk by chunk), `source_files`
(generated code as modules in files), and `lowering_kinds`, how each canonical operation lowers
to a kernel kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import cpu as _cpu
from . import triton as _triton
from .dask import OnDask
from .eager import eager_backend

# Each also runs graphs on Dask arrays, chunk by chunk (`dask`).
BACKENDS: dict[str, Callable] = {"eager": OnDask(eager_backend), "cpu": OnDask(_cpu.cpu_backend),
                                 "triton": OnDask(_triton.triton_backend)}  # fmt: skip
_WHY_NOT = {"cpu": _cpu.unavailable, "triton": _triton.unavailable}


@dataclass(frozen=True)
class BackendChoice:
    """A backend a user can pick: usable here or not, and why not."""

    name: str
    usable: bool = True
    reason: str = ""


def backend_choices() -> list[BackendChoice]:
    """The backend names a user can pick (``auto`` first), each usable or not and why not."""
    choices = [BackendChoice("auto", True, f"{_auto_name()} here")]
    for name in BACKENDS:
        why_not = _WHY_NOT.get(name, str)()
        choices.append(BackendChoice(name, not why_not, why_not))
    return choices


def _auto_name() -> str:
    """``auto`` is triton where a CUDA GPU and Triton are usable, else eager."""
    return "triton" if _triton.usable_gpu() else "eager"


def auto_backend(graph, example_inputs):
    """The ``auto`` backend: decided at the first compile (not at import: it may load torch)."""
    return BACKENDS[_auto_name()](graph, example_inputs)


auto_backend.loop_nodes = True  # both backends it picks from run loop nodes
auto_backend.dask_arrays = True


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
        return auto_backend
    if backend not in BACKENDS:
        known = ", ".join(sorted([*BACKENDS, "auto"]))
        raise ValueError(
            f"unknown backend {backend!r}; available: {known}, or a callable "
            f"(graph, example_inputs) -> callable"
        )
    why_not = _WHY_NOT.get(backend, str)()
    if why_not:
        raise RuntimeError(f"backend {backend!r} cannot run here: {why_not}")
    prepare = getattr(BACKENDS[backend], "prepare", None)
    if prepare is not None:  # what the backend's first call will need, started now
        prepare()
    return BACKENDS[backend]
