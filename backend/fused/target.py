"""What a backend gives the shared pipeline: a `Target` (which dtypes and ops its kernels compute,
its code generator) and a `Device` (where its arrays live and how they are copied, viewed and
handed to the array library). The lowering asks the target; the runtime runs on the device.

    target.compile(kernel) -> CompiledKernel     once per plan, per kernel
    compiled.run(call)                           per call: ``call.tensor(buffer)``, ``call.error``

Neither this package nor its runtime imports torch, Triton or numba: each backend's own package
does (`tcompile.backend.triton`, `tcompile.backend.cpu`).
"""

from __future__ import annotations

import numpy as np

from .dtypes import Unlowerable, check_kernel_dtype, numpy_loops, resolve_loop, show


class KernelBuildError(RuntimeError):
    """A generated kernel its compiler could not build (or run): tcompile's bug, never the
    user's. The graph then runs in NumPy, with a warning."""


class CompiledKernel:
    """One kernel, ready to run: ``kernel`` (the loop IR), ``source`` (with ``text``, ``name``
    and ``checks``: whether it may raise the error flag), and `run`."""

    kernel = None
    source = None

    @property
    def empty(self) -> bool:
        """Nothing to compute (a size-0 dim): not run."""
        return False

    def run(self, call) -> None:
        """Run on one call's arrays: ``call.tensor(buffer)`` for each buffer, ``call.error``
        for the error flag. Raises `KernelBuildError` where the compiler fails."""
        raise NotImplementedError

    def describe(self) -> str:
        """How it runs, for the plan's text (block sizes, threads)."""
        return ""

    def compact(self, call) -> list:
        """A compaction kernel's two runs (`plan.Compaction`): it counts the selected points
        of each share of its space, then writes each share's values from the count of the
        shares before it (`compaction_offsets`); gives a tensor of them all per store."""
        raise NotImplementedError


class Target:
    """A backend's kernels: what they compute and how they are made. ``name`` appears in
    messages ("complex64 has no Triton type"); ``refused_dtypes`` are kernel dtypes it leaves to
    NumPy; ``library_ops`` the `plan.LibraryCall` ops its device runs.

    >>> runtime.Runner(graph, TritonTarget())  # doctest: +SKIP
    """

    name = "kernel"
    refused_dtypes: frozenset = frozenset()
    library_ops: frozenset = frozenset({"matmul", "cumsum", "cumprod"})
    library_name = "library"  # the Kernels tab's name for it: "torch.matmul", "np.matmul"
    compacts = False  # whether its kernels make selections (`CompiledKernel.compact`)
    # Whether its float sums are NumPy's bit for bit (then no reduction may change their order).
    exact_float_sums = False
    # What a scatter-add (`loop_ir.Store` with ``accumulate``: ``np.add.at``) may write.
    accumulate_dtypes: tuple = tuple(map(np.dtype, (np.float64, np.float32, np.int64, np.int32)))

    def check_dtype(self, dtype: np.dtype) -> None:
        """`Unlowerable` where kernels cannot hold ``dtype``."""
        check_kernel_dtype(dtype, self.name, self.refused_dtypes)

    def holds(self, dtype) -> bool:
        try:
            self.check_dtype(dtype)
        except Unlowerable:
            return False
        return True

    def ufunc_loop(self, ufunc: np.ufunc, operand_types: tuple) -> tuple[tuple, tuple]:
        """NumPy's loop for ``ufunc`` on these operands (`dtypes.resolve_loop`), or
        `Unlowerable` where this backend's kernels cannot compute it."""
        name = f"np.{ufunc.__name__}"
        self.check_ufunc(ufunc, None, None)
        ins, outs = resolve_loop(ufunc, operand_types)
        try:
            for dtype in ins + outs:
                self.check_dtype(dtype)
        except Unlowerable as e:
            raise Unlowerable(f"{name} on {show(operand_types)} runs a {show(ins + outs)} "
                              f"loop: {e}") from None  # fmt: skip
        if ins + outs not in numpy_loops(ufunc):
            raise Unlowerable(f"NumPy has no {name} loop {show(ins)} -> {show(outs)}")
        self.check_ufunc(ufunc, ins, outs)
        return ins, outs

    def check_ufunc(self, ufunc: np.ufunc, ins: tuple | None, outs: tuple | None) -> None:
        """`Unlowerable` where the kernels cannot compute ``ufunc``'s loop ``ins -> outs``
        (``None``: whether they compute the ufunc at all)."""
        raise NotImplementedError

    def device(self):
        """The `Device` this backend's arrays live on."""
        raise NotImplementedError

    def compile(self, kernel) -> CompiledKernel:
        raise NotImplementedError

    def loop_runner(self, step):
        """Something that runs a `plan.DeviceLoop` step other than iteration by iteration
        (CUDA graphs; native loops), or None. It is called as ``runner(call, body, args)`` and
        gives the loop's outputs, or None to let the body run per iteration."""
        return None


class Device:
    """Where a backend's arrays (its "tensors") live; the runtime touches them only through
    these methods. ``kind``: a short name; ``shares_host_memory``: its tensors made from NumPy
    arrays are those arrays' memory (so inputs the graph writes are copied first);
    ``array_kinds``: the kinds of caller arrays (`tcompile.tracer.ir.device_arrays`) it takes
    as they are."""

    kind = "device"
    shares_host_memory = False
    array_kinds: frozenset = frozenset({"numpy"})

    # -- between the caller and the device ---------------------------------------------------
    def from_host(self, array: np.ndarray):
        """A tensor holding ``array``'s values."""
        raise NotImplementedError

    def to_host(self, tensor, *, scalar: bool):
        """``tensor``'s values as NumPy (a NumPy scalar with ``scalar``)."""
        raise NotImplementedError

    def write_back(self, tensor, host) -> None:
        """Make the caller's array ``host`` hold ``tensor``'s values (written in place)."""
        raise NotImplementedError

    def adopt(self, obj):
        """A tensor for a caller's array of one of ``array_kinds``."""
        return self.from_host(obj)

    def give(self, tensor, kind: str, *, scalar: bool):
        """A result as the caller's ``kind`` of array."""
        return self.to_host(tensor, scalar=scalar)

    def numpy_dtype(self, tensor) -> np.dtype:
        return tensor.dtype

    def synchronize(self) -> None:
        """Wait for the work started so far."""

    # -- tensors -----------------------------------------------------------------------------
    def empty(self, shape: tuple, dtype: np.dtype, strides: tuple | None = None):
        """An uninitialised tensor: C-contiguous, or with ``strides`` (in elements)."""
        raise NotImplementedError

    def strides(self, tensor) -> tuple[int, ...]:
        """Its strides, in elements."""
        raise NotImplementedError

    def view(self, tensor, shape: tuple, strides: tuple, offset: int):
        """A view of ``tensor``'s memory (in elements, from its first element)."""
        raise NotImplementedError

    def copy(self, target, source) -> None:
        """``target[...] = source`` (same number of elements; ``source`` reshaped)."""
        raise NotImplementedError

    def clone(self, tensor):
        raise NotImplementedError

    def copy_from_host(self, tensor, host: np.ndarray) -> None:
        """Put a NumPy array's values (an extern's in-place result) into ``tensor``; nothing
        when it is that memory."""
        raise NotImplementedError

    def error_flag(self):
        """A new error flag: one int32, zero."""
        raise NotImplementedError

    def error_raised(self, flag) -> bool:
        raise NotImplementedError

    def library(self, op: str, operands: list, dtype: np.dtype, options: dict):
        """The array library's ``op`` ("matmul", "cumsum", "cumprod"; ``options``: ``axis``)
        on tensors, giving a tensor of ``dtype``."""
        raise NotImplementedError


def compaction_offsets(counts: np.ndarray) -> tuple[np.ndarray, int]:
    """Each share's first position in a compaction's result (the counts of the shares before
    it), and the result's size."""
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    return ends - counts, int(ends[-1]) if len(ends) else 0
