"""The Triton backend: a captured NumPy graph run as generated, fused Triton kernels.

Lowering, fusion, plans and their runtime are shared with the CPU backend
(`tcompile.backend.fused`); this package adds what is Triton's, through `target.TritonTarget`:

  `codegen`       each `loop_ir.Kernel` to Triton source through one code writer and the per-op
                  table in `ufuncs`, on the dtypes, constants and casts of `pointwise` (NumPy's
                  exact dtype rules)
  `target`        which ufunc loops the kernels compute; a kernel compiled and launched with
                  the configuration `autotune` picks; loops as CUDA graphs (`loop_graphs`)
  `device`        device arrays (torch tensors): NumPy arrays in and out, device arrays
                  (torch, CuPy) stay on the device

Kernel sources never contain sizes or strides: they are kernel arguments, so a new shape reuses
the compiled kernel. Sources are written to files (`tcompile.backend.source_files`) because
Triton reads a kernel's source from its file; Triton caches the compiled binaries on disk.
"""

from __future__ import annotations

import glob

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
    from ..fused.runtime import compile_graph
    from .target import TritonTarget

    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    return compile_graph(graph, example_inputs, TritonTarget(), "triton")


triton_backend.device_arrays = True  # it runs on torch tensors and CuPy arrays where they are
triton_backend.loop_nodes = True  # a loop body's kernels are compiled once, launched per iteration
