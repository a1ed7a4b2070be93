"""Array graphs as fused numba kernels: the shared lowering and fusion (`tcompile.backend.fused`)
with `codegen`'s numba source, run on NumPy arrays (`device.NumpyDevice`).

    >>> compiled = fused_backend(graph, example_inputs)  # doctest: +SKIP
    >>> compiled.fn(*inputs)  # NumPy arrays in, NumPy arrays out  # doctest: +SKIP

Each kernel's source goes to a file named by its hash (`tcompile.backend.source_files`:
``$TCOMPILE_CACHE_DIR/cpu``, else ``~/.cache/tcompile/cpu``), so numba's disk cache (``cache=True``) finds the machine code in
the next process. Sources hold no sizes: a new shape reuses the compiled function.

Loop nodes run as `fused.plan.DeviceLoop` steps: their body's plan once per iteration, unless
the target gives the step a runner of its own. A native loop plugs in there::

    class CpuTarget(NumbaTarget):
        def loop_runner(self, step):          # once per plan, per loop step
            native = compile_loop(step.node)  # or None: iterate the body's plan
            return None if native is None else (lambda call, body, args: native(*args))

    fused_backend(graph, example_inputs, CpuTarget())

The runner is called as ``runner(call, body, args)``: ``args`` are the loop node's arguments
(NumPy arrays: views of this call's buffers, host values), ``body`` the body graph's `Runner`,
``call.error`` the call's error flag (``call.new_error_flag()`` makes one); it returns the
loop's outputs in the node's order (arrays, NumPy scalars, ints), or None to let the body's
plan run per iteration.
"""

from __future__ import annotations

import importlib.util
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from tcompile.tracer.ir.compiled_graph import CompiledGraph

from ..fused import loop_ir as ir
from ..fused.dtypes import Unlowerable
from ..fused.target import CompiledKernel, KernelBuildError, Target, compaction_offsets
from ..source_files import load_module
from . import codegen, scalar_ops
from .device import NumpyDevice, flat

_INSTALL = "pip install 'tcompile[cpu]'"


def unavailable() -> str:
    """Why the fused CPU kernels cannot run here ("" when they can)."""
    if importlib.util.find_spec("numba") is None:
        return f"the cpu backend's kernels need numba, which is not installed here: {_INSTALL}"
    return ""


class NumbaTarget(Target):
    """Kernels as numba functions on NumPy arrays. float16 stays in NumPy (numba has no
    float16 arithmetic on the CPU); a scatter-add runs serially, so any dtype adds."""

    name = "CPU kernel"
    refused_dtypes = frozenset({"float16"})
    exact_float_sums = True  # NumPy's pairwise order (`pairwise`), a selection's too (`compact`)
    compacts = True
    library_name = "np"
    accumulate_dtypes = tuple(
        np.dtype(t)
        for t in (
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
            "float32",
            "float64",
        )  # fmt: skip
    )

    def check_ufunc(self, ufunc, ins, outs) -> None:
        scalar_ops.check_loop(ufunc, ins, outs)

    def device(self) -> NumpyDevice:
        return _DEVICE

    def compile(self, kernel: ir.Kernel) -> NumbaKernel:
        source = codegen.generate(kernel)
        work = int(np.prod([v.size.value for v in kernel.xvars + kernel.rvars], dtype=np.int64))
        try:
            fn = getattr(load_module(source.text, "cpu"), source.name)
        except Exception as error:  # a source Python cannot even load: tcompile's bug
            raise KernelBuildError(f"kernel {source.name} did not load ({error})") from error
        # under SMALL elements of work, waking threads costs more than the work (~20 µs)
        parts = threads() if source.parallel and work >= codegen.SMALL else 1
        return NumbaKernel(kernel, source, fn, parts)


_DEVICE = NumpyDevice()


class NumbaKernel(CompiledKernel):
    """One kernel's numba function with its fixed arguments (sizes, strides, offsets)."""

    def __init__(self, kernel: ir.Kernel, source: codegen.KernelSource, fn, parts: int):
        self.kernel, self.source, self.fn, self.parts = kernel, source, fn, parts
        self.compiled = False  # the first call compiles (or loads) on this thread alone
        self.xnumel = int(np.prod([v.size.value for v in kernel.xvars], dtype=np.int64))
        self.args = [a.value if isinstance(a, ir.Param) else None for a in source.args]
        self.slots = [(i, a) for i, a in enumerate(source.args) if not isinstance(a, ir.Param)]
        self.writes = kernel.writes()

    @property
    def empty(self) -> bool:
        return self.xnumel == 0  # nothing to compute (a size-0 dim): not run

    def describe(self) -> str:
        return "threads" if self.parts > 1 else "one thread"

    def compact(self, call) -> list[np.ndarray]:
        parts = self.parts if self.compiled else 1  # both runs share the space alike
        counts, mask = np.zeros(parts, np.int64), np.empty(self.xnumel, np.bool_)
        for buffer in self.writes:
            call.tensors[id(buffer)] = np.empty(0, buffer.dtype)
        self.run(call, {"counts": counts, "mask": mask, "fill": False}, parts)
        offsets, total = compaction_offsets(counts)
        for buffer in self.writes:
            call.tensors[id(buffer)] = np.empty(total, buffer.dtype)
        self.run(call, {"counts": offsets, "mask": mask, "fill": True}, parts)
        return [call.tensors[id(buffer)] for buffer in self.writes]

    def run(self, call, roles: dict | None = None, parts: int | None = None) -> None:
        """``roles``: a compaction's "counts", "mask" and "fill" arguments; ``parts``: its
        shares."""
        parts = self.parts if parts is None else parts
        args = self.args.copy()
        for i, arg in self.slots:
            if arg == "error":
                args[i] = call.error
            elif isinstance(arg, str):
                args[i] = roles[arg]
            else:
                args[i] = flat(call.tensor(arg))
        try:
            if parts > 1 and self.compiled:
                run_parts(self.fn, args, parts)
            else:
                self.fn(*args, 0, 1)
                self.compiled = True
        except Exception as error:
            # A kernel raises nothing of the user's (what NumPy raises for sets the error
            # flag): numba failing to compile it, or a stale cache entry, is tcompile's bug.
            raise KernelBuildError(f"kernel {self.source.name} failed in numba "
                                   f"({type(error).__name__}: {str(error).strip()[:300]})") from error  # fmt: skip


def threads() -> int:
    """How many threads a large kernel runs on: ``NUMBA_NUM_THREADS`` where set (as numba's
    own parallel code), else the cores this process may use."""
    setting = os.environ.get("NUMBA_NUM_THREADS")
    if setting:
        return int(setting)
    affinity = getattr(os, "sched_getaffinity", None)  # Linux; elsewhere every core
    return len(affinity(0)) if affinity else os.cpu_count() or 1


_POOL: list[ThreadPoolExecutor] = []  # made at the first threaded call


def run_parts(fn, args: list, parts: int) -> None:
    """``fn(*args, part, parts)`` for every part, each on a thread (this one runs part 0);
    the kernels release the GIL (``nogil=True``)."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max(1, threads() - 1), "tcompile-cpu"))
    others = [_POOL[0].submit(fn, *args, part, parts) for part in range(1, parts)]
    fn(*args, 0, parts)
    for future in others:
        future.result()


def fused_backend(graph, example_inputs, target: Target | None = None) -> CompiledGraph:
    """Compile ``graph`` to fused numba kernels; the plan for the example inputs' shapes is
    made now (its kernel sources go in the report), others on first sight. Loop nodes run
    their body's plan once per iteration (`fused.plan.DeviceLoop`) unless ``target`` (a
    `NumbaTarget` subclass) gives them a runner of its own (``loop_runner``)."""
    from ..fused.runtime import compile_graph

    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    return compile_graph(graph, example_inputs, target or NumbaTarget(), "cpu")


fused_backend.loop_nodes = True  # a loop body's kernels are compiled once, run per iteration

__all__ = ["NumbaTarget", "Unlowerable", "fused_backend", "unavailable"]
