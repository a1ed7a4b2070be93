"""The Triton backend's part of the shared pipeline (`tcompile.backend.fused.target`): which
ufunc loops its kernels compute (the rules of `ufuncs`), each kernel compiled from `codegen`'s
source and launched with the launch configuration `autotune` picks, and loops recorded as CUDA
graphs (`loop_graphs`) where they can be."""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from ..fused import loop_ir as ir
from ..fused.target import CompiledKernel, KernelBuildError, Target, compaction_offsets
from ..source_files import load_kernel, load_module
from . import autotune, codegen, device, loop_graphs, pointwise, ufuncs


@functools.cache
def _kernel_build_errors() -> tuple[type[BaseException], ...]:
    """Triton's errors for a kernel it cannot compile (or, interpreting, run)."""
    from triton.compiler.errors import CompilationError
    from triton.runtime.errors import InterpreterError, PTXASError

    return CompilationError, InterpreterError, PTXASError


class TritonTarget(Target):
    name = "Triton"
    library_name = "torch"
    compacts = True

    def check_dtype(self, dtype: np.dtype) -> None:
        pointwise.triton_type(dtype)

    def ufunc_loop(self, ufunc: np.ufunc, operand_types: tuple) -> tuple[tuple, tuple]:
        ins, outs = ufuncs.ufunc_loop(ufunc, operand_types)
        ufuncs.ufunc_expr(ufunc, ins, outs, [f"a{i}" for i in range(ufunc.nin)])
        return ins, outs

    def check_ufunc(self, ufunc, ins, outs) -> None:
        ufuncs.ufunc_expr(ufunc, ins, outs, [f"a{i}" for i in range(ufunc.nin)])

    def device(self):
        return device.current_device()

    def compile(self, kernel: ir.Kernel) -> Compiled:
        xnumel = int(np.prod([v.size.value for v in kernel.xvars], dtype=np.int64))
        rnumel = int(np.prod([v.size.value for v in kernel.rvars], dtype=np.int64))
        persistent = bool(kernel.rvars) and rnumel <= codegen.PERSISTENT_LIMIT
        source = codegen.generate(kernel, persistent=persistent)
        fn = load_kernel(source.text, source.name)
        if device.interpreting():  # the interpreter has no libdevice: NumPy's C functions
            load_module(source.text).libdevice = pointwise.interpreter_libdevice()
        configs = autotune.candidates(xnumel, rnumel, reduction=kernel.is_reduction,
                                      persistent=persistent, interpreting=device.interpreting())  # fmt: skip
        return Compiled(kernel, source, fn, xnumel, configs)

    def loop_runner(self, step):
        return loop_graphs.LoopGraphs(step)


class Compiled(CompiledKernel):
    """One kernel, ready to launch: its source, its Triton function, its sizes and the launch
    configurations to choose from (`autotune`)."""

    def __init__(self, kernel: ir.Kernel, source: codegen.KernelSource, fn, xnumel: int,
                 configs: list):  # fmt: skip
        self.kernel, self.source, self.fn = kernel, source, fn
        self.xnumel, self.configs = xnumel, configs
        self.chosen: autotune.Config | None = None
        self.launcher = None  # ``fn[grid]`` for the chosen configuration
        self.options: dict = {}  # its block sizes and warps, and `pointwise.EXACT_OPTIONS`
        # The arguments in order: ints fixed now, buffers (and the error flag) filled per call.
        self.args = [a.value if isinstance(a, ir.Param) else None for a in source.args]
        self.slots = [(i, a) for i, a in enumerate(source.args) if not isinstance(a, ir.Param)]
        self.writes = kernel.writes()

    @property
    def empty(self) -> bool:  # nothing to compute (a size-0 dim): not launched
        return self.xnumel == 0

    def grid(self, config: autotune.Config) -> tuple:
        return (max(1, math.ceil(self.xnumel / config.XBLOCK)),)

    def describe(self) -> str:
        if len(self.configs) == 1:
            return ", ".join(f"{k}={v}" for k, v in self.configs[0].launch_options().items())
        return f"{len(self.configs)} block sizes tried at first launch"

    def run(self, call) -> None:
        args = self._args(call)
        with self._build_errors():
            if self.launcher is None:
                self._choose(call, args)
            self.launcher(*args, **self.options)

    def compact(self, call) -> list:
        dev = call.device
        config = autotune.compaction_config(self.xnumel, interpreting=device.interpreting())
        grid = self.grid(config)
        options = config.launch_options() | pointwise.EXACT_OPTIONS
        counts = dev.from_host(np.zeros(grid[0], np.int64))
        for buffer in self.writes:  # the count launch writes none
            call.tensors[id(buffer)] = dev.empty((1,), buffer.dtype)
        with self._build_errors():
            self.fn[grid](*self._args(call, counts), FILL=False, **options)
            offsets, total = compaction_offsets(dev.to_host(counts, scalar=False))
            for buffer in self.writes:
                call.tensors[id(buffer)] = dev.empty((total,), buffer.dtype)
            self.fn[grid](*self._args(call, dev.from_host(offsets)), FILL=True, **options)
        return [call.tensors[id(buffer)] for buffer in self.writes]

    def _args(self, call, counts=None) -> list:
        args = self.args.copy()
        for i, arg in self.slots:
            if arg == "error":
                args[i] = call.error
            elif arg == "counts":
                args[i] = counts
            else:
                args[i] = call.tensor(arg)
        return args

    @contextlib.contextmanager
    def _build_errors(self):
        try:
            yield
        except _kernel_build_errors() as error:
            raise KernelBuildError(f"kernel {self.source.name} failed in Triton "
                                   f"({type(error).__name__}: {str(error).strip()[:300]})") from error  # fmt: skip

    def _choose(self, call, args: list) -> None:
        """Pick the launch configuration (`autotune`), measuring on these arguments."""

        def run(config: autotune.Config) -> None:
            self.fn[self.grid(config)](*args, **config.launch_options(), **pointwise.EXACT_OPTIONS)

        written = [call.tensor(b) for b in self.writes]
        saved = [t.clone() for t in written] if len(self.configs) > 1 else []

        def restore() -> None:
            for tensor, copy in zip(written, saved):
                tensor.copy_(copy)

        key = f"{self.source.digest}:{self.xnumel}:{self.configs}:{call.device!r}"
        chosen = autotune.choose(key, self.configs, run, call.device.synchronize, restore)
        self.chosen = chosen
        self.options = chosen.launch_options() | pointwise.EXACT_OPTIONS
        self.launcher = self.fn[self.grid(chosen)]
