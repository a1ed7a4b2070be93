"""The Triton backend: a captured NumPy graph run as generated, fused Triton kernels.

The layers, each speaking to the next through one data structure:

  graph (tracer IR, canonical ops)
    -> `lowering`   nodes to loop-level expressions (`loop_ir.Expr`) by a rule per NumPy
                    callable or kind: pointwise ops compose, views remap indices, reductions
                    nest; what cannot be lowered becomes an extern step (run by NumPy, marked
                    in the report)
    -> `fusion`     expressions grouped into kernels (`loop_ir.Kernel`); `can_fuse` says why
                    two groups stay apart
    -> `codegen`    each kernel to Triton source through one code writer and the per-op table
                    in `ufuncs`, on the dtypes, constants and casts of `pointwise` (NumPy's exact
                    dtype rules)
    -> `runtime`    a `plan` of steps (launch, extern, library call, loop...), each running
                    and describing itself, run on device arrays from `device`; NumPy arrays in
                    and out, device arrays (torch, CuPy) stay on the device

Kernel sources never contain sizes or strides: they are kernel arguments, so a new shape reuses
the compiled kernel. Sources are written to files (`tcompile.backend.source_files`) because
Triton reads a kernel's source from its file; Triton caches the compiled binaries on disk.
"""

from __future__ import annotations

import glob
from types import MappingProxyType

from tcompile.tracer.ir.compiled_graph import CompiledGraph

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
        return CompiledGraph(runner, "triton", MappingProxyType({}), runner.in_numpy_infos())
    sources = {"kernels": "\n\n".join(c.source.text for c in program.compiled.values()),
               "plan": describe(program)}  # fmt: skip
    return CompiledGraph(runner, "triton", MappingProxyType(sources),
                         program.infos() + tuple(program.decisions))  # fmt: skip


triton_backend.device_arrays = True  # it runs on torch tensors and CuPy arrays where they are
triton_backend.loop_nodes = True  # a loop body's kernels are compiled once, launched per iteration
