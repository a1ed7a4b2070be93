"""The Triton backend: a captured NumPy graph run as generated, fused Triton kernels.

The layers, each speaking to the next through one data structure:

  graph (tracer IR, canonical ops)
    -> `lowering`   nodes to loop-level expressions (`loop_ir.Expr`): pointwise ops compose,
                    views remap indices, reductions nest; what cannot be lowered becomes an
                    extern step (run by NumPy, marked in the report)
    -> `fusion`     expressions grouped into kernels (`loop_ir.Kernel`); `can_fuse` says why
                    two groups stay apart
    -> `codegen`    each kernel to Triton source through one code writer and the per-op table
                    in `ufuncs`, on the dtypes, constants and casts of `pointwise` (NumPy's exact
                    dtype rules)
    -> `runtime`    a plan of steps (launch, extern, copy) run on device arrays from `device`;
                    NumPy arrays in and out, device arrays (torch, CuPy) stay on the device

Kernel sources never contain sizes or strides: they are kernel arguments, so a new shape reuses
the compiled kernel. Sources are written to files (`kernel_source`) because Triton reads a
kernel's source from its file; Triton caches the compiled binaries on disk across processes.
"""

from __future__ import annotations

import functools
import glob
from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph, KernelInfo

from . import device


def unavailable() -> str:
    """Why the triton backend cannot run here ("" when it can)."""
    return device.why_unavailable()


def usable_gpu() -> bool:
    """Whether a real CUDA GPU (not the interpreter) can run the backend: ``auto`` picks it.
    Answered without importing torch where Triton, torch or an NVIDIA device is missing."""
    if device.interpreting() or not device.installed() or not glob.glob("/dev/nvidia[0-9]*"):
        return False
    return not device.why_unavailable()


def triton_backend(graph, example_inputs) -> CompiledGraph:
    """Compile ``graph`` to Triton kernels; plans for the example inputs' shapes are made now
    (their sources go in the report), others on first sight."""
    from .runtime import Runner, describe

    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    runner = Runner(graph)
    program, _ = runner.program_for(example_inputs)
    if program is None:
        return CompiledGraph(runner, "triton", MappingProxyType({}), _in_numpy(runner))
    sources = {"kernels": "\n\n".join(c.source.text for c in program.compiled.values()),
               "plan": describe(program)}  # fmt: skip
    return CompiledGraph(runner, "triton", MappingProxyType(sources),
                         _infos(program) + tuple(program.decisions))  # fmt: skip


triton_backend.device_arrays = True  # it runs on torch tensors and CuPy arrays where they are
triton_backend.loop_nodes = True  # a loop body's kernels are compiled once, launched per iteration


def _infos(program) -> tuple[KernelInfo, ...]:
    """What a program runs, for the Kernels tab: its kernels, library calls, loops (whose
    bodies' kernels are listed once made: at the loop's first run) and extern steps."""
    from .lowering import DeviceLoop, LibraryCall

    return tuple(
        KernelInfo(c.kernel.name, _kind(c.kernel), c.source.text, c.kernel.lines, c.kernel.fused)
        for c in program.compiled.values()
    ) + tuple(
        KernelInfo(f"torch.{step.op}", "library", notes=("the array library's kernel, on the "
                                                          "device buffers",))
        for step in program.steps if isinstance(step, LibraryCall)
    ) + tuple(
        KernelInfo(f"{step.node.op} {step.node.target.body.name}", "loop",
                   step.node.target.body.python_code(), _lines(step.node), notes=(LOOP_NOTE,),
                   parts=functools.partial(_body_infos, program.bodies[id(step)]))
        for step in program.steps if isinstance(step, DeviceLoop)
    ) + tuple(
        KernelInfo(f"extern {_name(e.node)}", "extern", lines=_lines(e.node), notes=(e.reason,))
        for e in program.plan.externs
    )  # fmt: skip


def _body_infos(runner) -> tuple[KernelInfo, ...]:
    """A loop body's programs so far (one per layout of its inputs), as `_infos`."""
    programs = [p for p in runner.programs.values() if p is not None]
    return sum(map(_infos, programs), ()) + (_in_numpy(runner) if not programs else ())


def _in_numpy(runner) -> tuple[KernelInfo, ...]:
    """The graph runs in NumPy as a whole, if a plan said so."""
    return tuple(KernelInfo("the whole graph", "extern", notes=(reason,))
                 for reason in list(runner.in_numpy_because.values())[:1])  # fmt: skip


LOOP_NOTE = (
    "its body (the source) is a plan of its own: its kernels compile at its first run "
    "(listed below once made) and launch once per iteration, its arrays staying on the device"
)


def _kind(kernel) -> str:
    if any(store.accumulate for store in kernel.stores):
        return "scatter"
    return "reduction" if kernel.rvars else "pointwise"


def _name(node) -> str:
    return getattr(node.target, "__name__", None) or node.op


def _lines(node) -> tuple[str, ...]:
    where = node.stack[-1] if node.stack else None
    return (
        (f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}  {where.source_line}",)
        if where
        else ()
    )
