"""When a call of a program may let go of each buffer and host value: after the last step that
reads or writes it. A long plan (a time loop unrolled into kernels and host steps) would
otherwise hold every intermediate until the call ends: 44 arrays of one 64 MB chunk for four
steps of a rolled stencil, where NumPy's own code holds three."""

from __future__ import annotations

from . import loop_ir as ir
from .plan import (
    Compaction,
    Extern,
    HostCall,
    HostValue,
    Launch,
    LibraryCall,
    NumpyScalar,
    Upload,
    map_leaves,
)
from .tensors import BufferTensor, Tensor, strided


def frees_after(plan, steps: list) -> list[tuple[int, ...]] | None:
    """Per step, the ids of the buffers and host values no later step uses (never an input's
    or an output's); None where a loop step takes part (its body's plan names what it uses):
    then everything lives until the call ends."""
    last: dict[int, int] = {}
    for position, step in enumerate(steps):
        used = _slots_of(step)
        if used is None:
            return None
        for slot in used:
            last[id(slot)] = position
    kept = {id(slot) for slot in plan.inputs} | {id(out.source) for out in plan.outputs}
    frees: list[list[int]] = [[] for _ in steps]
    for slot, position in last.items():
        if slot not in kept:
            frees[position].append(slot)
    return [tuple(f) for f in frees]


def _slots_of(step) -> list | None:
    """The buffers and host values ``step`` reads or writes."""
    if isinstance(step, Launch):
        return [*step.kernel.reads(), *step.kernel.writes()]
    if isinstance(step, Compaction):
        return [*step.kernel.reads(), *step.kernel.writes(), *step.results]
    if isinstance(step, Extern):
        return _leaves((step.args, step.kwargs, step.results)) + list(step.writes)
    if isinstance(step, HostCall):
        return _leaves((step.args, step.kwargs)) + [step.result]
    if isinstance(step, Upload):
        return [step.value, step.buffer]
    if isinstance(step, LibraryCall):
        return _leaves(step.operands) + ([step.result] if step.result is not None else [])
    return None


def _leaves(value) -> list:
    found: list = []

    def leaf(item):
        if isinstance(item, NumpyScalar):
            item = item.tensor
        if isinstance(item, BufferTensor):
            found.append(item.buffer)
        elif isinstance(item, Tensor):
            found.append(strided(item)[0])
        elif isinstance(item, (ir.Buffer, HostValue)):
            found.append(item)
        return item

    map_leaves(value, leaf)
    return found
