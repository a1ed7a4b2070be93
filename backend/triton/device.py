"""Where the Triton backend's arrays live: device tensors (torch) made from and returned as NumPy,
torch, CuPy or other CUDA arrays, and why the backend cannot run here when it cannot.

torch and triton are imported lazily, inside functions: ``import tcompile`` never imports them.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings

import numpy as np

from tcompile.tracer.ir.device_arrays import array_kind

from ..fused import target
from ..fused.dtypes import KERNEL_DTYPES

_INSTALL = "pip install 'tcompile[gpu]'"


def interpreting() -> bool:
    """Whether kernels run in Triton's CPU interpreter (``TRITON_INTERPRET=1``)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def installed() -> bool:
    """Whether Triton and torch are installed (found, not imported)."""
    return all(importlib.util.find_spec(name) is not None for name in ("triton", "torch"))


def why_unavailable() -> str:
    """``""`` when the Triton backend can run here, else a sentence saying what is missing and
    what to do.

    >>> why_unavailable()  # doctest: +SKIP
    "the triton backend found no CUDA GPU here (...); set TRITON_INTERPRET=1 to run ..."
    """
    return _reason(interpreting())


@functools.cache
def _reason(interpreting: bool) -> str:
    # Keyed by the interpreter setting, which a process (or a test) may change; the rest (what is
    # installed, whether there is a GPU) does not change while a process runs.
    try:
        import triton  # noqa: F401
    except ImportError:
        return f"the triton backend needs Triton, which is not installed here: {_INSTALL}"
    except Exception as e:  # a broken install (e.g. no driver it can load) is still a reason
        return f"the triton backend could not import Triton ({type(e).__name__}: {e})"
    try:
        import torch
    except ImportError:
        return (
            "the triton backend needs PyTorch, which is not installed here (Triton launches "
            f"its kernels with torch tensors): {_INSTALL}"
        )
    if interpreting or torch.cuda.is_available():
        return ""
    return (
        "the triton backend found no CUDA GPU here (torch.cuda.is_available() is False); set "
        "TRITON_INTERPRET=1 to run its kernels in Triton's CPU interpreter (slowly, for testing), "
        "or use backend='eager'"
    )


def current_device() -> Device:
    """The process's device: CUDA device 0, or the CPU under ``TRITON_INTERPRET=1``.
    Raises RuntimeError saying why when the backend cannot run here."""
    reason = why_unavailable()
    if reason:
        raise RuntimeError(reason)
    return _device("interpreter" if interpreting() else "cuda")


@functools.cache
def _device(kind: str) -> Device:
    return Device(kind)


class Device(target.Device):
    """Makes, fills and reads device tensors: torch CUDA tensors on device 0, or torch CPU
    tensors under Triton's interpreter (which reads and writes through torch storages)."""

    __slots__ = ("kind", "index", "torch_device", "_torch")
    array_kinds = frozenset({"numpy", "torch", "cupy", "cuda", "dlpack"})

    def __init__(self, kind: str):
        import torch

        if kind not in ("cuda", "interpreter"):
            raise ValueError(f"device kind must be 'cuda' or 'interpreter', not {kind!r}")
        self.kind = kind
        self.index = 0 if kind == "cuda" else None
        self.torch_device = torch.device("cuda", 0) if kind == "cuda" else torch.device("cpu")
        self._torch = torch

    def __repr__(self) -> str:
        return f"Device({self.kind!r}, {self.torch_device})"

    def empty(self, shape: tuple[int, ...], dtype: np.dtype, strides: tuple | None = None):
        """An uninitialised device tensor: C-contiguous, or with ``strides`` (in elements)."""
        if strides is None:
            return self._torch.empty(shape, dtype=torch_dtype(dtype), device=self.torch_device)
        return self._torch.empty_strided(shape, strides, dtype=_torch_dtype(dtype),
                                         device=self.torch_device)  # fmt: skip

    def from_host(self, array: np.ndarray):
        """A device tensor holding ``array``'s values.

        Interpreter: ``array``'s own memory (zero-copy, same strides) whenever torch can view it,
        else a C-contiguous copy (negative strides, non-writeable, non-native byte order,
        unaligned). CUDA: a new device tensor (pageable H2D copy, measured 8 GB/s); it keeps the
        strides of a dense array (C, F-order, transposed), other layouts arrive C-contiguous.
        """
        torch = self._torch
        torch_dtype(array.dtype)  # raises TypeError for a dtype the backend has no type for
        if self.kind == "interpreter":
            if not _torch_can_view(array, writeable=True):
                array = _native_copy(array)
            return torch.from_numpy(array)
        if _torch_can_view(array, writeable=False):
            if not array.flags.writeable:
                # torch warns that it cannot protect a read-only array; we only read from it.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    host = torch.from_numpy(array)
            else:
                host = torch.from_numpy(array)
        else:
            host = torch.from_numpy(_native_copy(array))
        return host.to(self.torch_device)

    def to_host(self, tensor, *, scalar: bool):
        """The tensor's values as NumPy: with ``scalar`` a NumPy scalar of its dtype (what NumPy
        returns for a full reduction, e.g. ``np.float64``), else an ndarray that keeps its memory
        alive, with the tensor's strides when it is dense.

        Interpreter: the tensor's own memory (zero-copy). CUDA: one D2H copy into pinned host
        memory that the returned array owns.
        """
        if tensor.device.type == "cpu":
            array = tensor.numpy()  # its base is the tensor: the memory stays alive with it
        else:
            # Pinned memory from torch's caching host allocator: a D2H copy into it ran at 54 GB/s
            # on an H100 against 1.3 GB/s for `.cpu().numpy()` into fresh pageable memory, and the
            # NumPy array *is* that buffer (no second copy). The array's base is the pinned
            # tensor, whose block returns to the pool when the array dies.
            host = self._torch.empty_like(tensor, device="cpu", pin_memory=True)
            host.copy_(tensor, non_blocking=True)
            self._torch.cuda.current_stream(tensor.device).synchronize()
            array = host.numpy()
        if scalar:
            # Indexing a 0-d array gives the NumPy scalar bit for bit, with no trip through a
            # Python number (`tensor.item()`) and back.
            return array.reshape(())[()]
        return array

    def write_back(self, tensor, host) -> None:
        """After a kernel updated ``tensor`` in place, make the caller's array ``host`` (NumPy, or
        a device array ``to_device_tensor`` had to copy) hold the new values; a no-op when they
        are the same memory."""
        torch = self._torch
        if type(host) is np.ndarray:
            if _torch_can_view(host, writeable=True):
                target = torch.from_numpy(host)
                if not _same_memory(target, tensor):
                    target.copy_(tensor)  # synchronous D2H straight into the caller's array
            else:
                # A layout torch cannot view (negative strides, byte order, ...): NumPy converts.
                # A read-only `host` raises here, as NumPy's own assignment would have.
                host[...] = self.to_host(tensor, scalar=False)
        elif isinstance(host, torch.Tensor):
            if not _same_memory(host, tensor):
                host.copy_(tensor)
        elif host.__cuda_array_interface__["data"][0] != tensor.data_ptr():
            # A CuPy array that `to_device_tensor` copied (torch has no negative strides).
            host[...] = from_device_tensor(tensor, "cupy", scalar=False, device=self)

    def synchronize(self) -> None:
        """Wait for the kernels launched so far (the interpreter runs them synchronously)."""
        if self.kind == "cuda":
            self._torch.cuda.synchronize(self.torch_device)

    # -- the shared runtime's operations (`fused.target.Device`) --------------------------------
    @property
    def shares_host_memory(self) -> bool:
        return self.kind == "interpreter"

    def adopt(self, obj):
        return to_device_tensor(obj, self)

    def give(self, tensor, kind: str, *, scalar: bool):
        return from_device_tensor(tensor, kind, scalar=scalar, device=self)

    def numpy_dtype(self, tensor) -> np.dtype:
        return numpy_dtype(tensor)

    def strides(self, tensor) -> tuple[int, ...]:
        return tensor.stride()

    def view(self, tensor, shape, strides, offset):
        return tensor.as_strided(shape, strides, offset)

    def copy(self, target, source) -> None:
        target.copy_(source.reshape(target.shape))

    def clone(self, tensor):
        return tensor.clone()

    def copy_from_host(self, tensor, host: np.ndarray) -> None:
        if tensor.device.type == "cpu" and tensor.data_ptr() == host.__array_interface__["data"][0]:
            return  # the interpreter's tensor is that memory
        tensor.copy_(self._torch.from_numpy(np.ascontiguousarray(host)))

    def error_flag(self):
        return self._torch.zeros((1,), dtype=self._torch.int32, device=self.torch_device)

    def error_raised(self, flag) -> bool:
        return bool(int(flag.cpu()[0]))

    def library(self, op: str, operands: list, dtype: np.dtype, options: dict):
        """torch's ``op`` (cuBLAS for matmul) in ``dtype`` (NumPy's: the trace saw it)."""
        torch_type = torch_dtype(dtype)
        if op == "matmul":
            a, b = (t.to(torch_type) for t in operands)
            return self._torch.matmul(a, b)
        return getattr(self._torch, op)(operands[0], dtype=torch_type, dim=options["axis"])


def _torch_can_view(array: np.ndarray, *, writeable: bool) -> bool:
    """Whether ``torch.from_numpy`` can take ``array`` as it is (and, with ``writeable``, whether
    kernels may write to it). torch has no negative strides and only native byte order;
    unaligned elements would fault in a GPU kernel."""
    itemsize = array.itemsize
    return (
        (array.flags.writeable or not writeable)
        and array.flags.aligned
        and array.dtype.isnative
        and all(s >= 0 and s % itemsize == 0 for s in array.strides)
    )


def _native_copy(array: np.ndarray) -> np.ndarray:
    # np.array, not np.ascontiguousarray, which turns a 0-d array into a 1-d one.
    return np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)


def _same_memory(a, b) -> bool:
    return (
        a.device == b.device
        and a.data_ptr() == b.data_ptr()
        and a.stride() == b.stride()
        and a.dtype == b.dtype
    )


def to_device_tensor(obj, device: Device):
    """A device tensor for ``obj``: NumPy through ``device.from_host``; torch tensors as they are;
    CuPy and other CUDA arrays as zero-copy torch views of their memory.

    torch has no negative strides (and ``torch.from_dlpack`` aborts the process on them, torch
    2.13): a CuPy array with them is copied, and the runtime writes a mutated copy back with
    ``device.write_back``; another device array with them is refused.
    """
    import torch

    kind = array_kind(obj)
    if kind == "numpy":
        return device.from_host(obj)
    if kind == "torch":
        if obj.device != device.torch_device:
            raise ValueError(
                f"a torch tensor on {obj.device} was passed to the triton backend, which runs "
                f"on {device.torch_device}: move it there first (tensor.to('{device.torch_device}'))"
            )
        numpy_dtype(obj)  # TypeError for a dtype the backend has no type for
        return obj
    if kind == "cuda":
        strides = obj.__cuda_array_interface__.get("strides")
    else:  # CuPy and most DLPack producers show their strides; a producer that does not is trusted
        strides = getattr(obj, "strides", None)
    if strides and any(s < 0 for s in strides):
        if kind != "cupy":
            raise ValueError(
                f"a {type(obj).__name__} with negative strides cannot be viewed by torch: "
                "pass a contiguous copy"
            )
        obj = obj.copy()
    if kind == "cuda":
        return torch.as_tensor(obj)  # zero-copy through __cuda_array_interface__
    if kind in ("cupy", "dlpack"):
        # DLPack rather than the CUDA array interface for CuPy: it carries the unsigned types and
        # orders the hand-over after the producer's stream.
        return torch.from_dlpack(obj)
    raise TypeError(f"the triton backend cannot put a {type(obj).__name__} on the device")


def from_device_tensor(tensor, kind: str, *, scalar: bool, device: Device):
    """A result as the inputs' kind of array: ``"numpy"`` through ``device.to_host``; ``"torch"``
    the tensor itself (0-d for a scalar, as torch returns); ``"cupy"`` a zero-copy CuPy array
    (0-d for a scalar, as CuPy returns); ``"cuda"`` and ``"dlpack"``, whose own types we cannot
    build, the torch tensor, which speaks both protocols."""
    if kind == "numpy":
        return device.to_host(tensor, scalar=scalar)
    if kind in ("torch", "cuda", "dlpack"):
        return tensor
    if kind == "cupy":
        import cupy

        # DLPack rather than __cuda_array_interface__: it carries bool and the unsigned types,
        # and orders the hand-over on CuPy's stream after torch's work.
        return cupy.from_dlpack(tensor)
    raise ValueError(f"unknown array kind {kind!r}")


@functools.cache
def _to_numpy_table() -> dict:
    import torch

    return {getattr(torch, name): np.dtype(name) for name in KERNEL_DTYPES.values()}


def torch_dtype(dtype: np.dtype):
    """The torch dtype for a NumPy dtype; TypeError for one the backend has no type for.

    >>> torch_dtype(np.dtype(">f8"))
    torch.float64
    """
    dtype = np.dtype(dtype)
    name = KERNEL_DTYPES.get((dtype.kind, dtype.itemsize))
    if name is None:
        raise TypeError(
            f"the triton backend has no type for NumPy dtype {dtype}: it supports bool, "
            "int8-int64, uint8-uint64 and float16/32/64"
        )
    import torch

    return getattr(torch, name)


@functools.lru_cache(maxsize=64)
def _torch_dtype(dtype: np.dtype):
    return torch_dtype(dtype)  # per call, a dict lookup rather than the checks


def numpy_dtype(tensor) -> np.dtype:
    """The NumPy dtype of a torch tensor (or of a torch dtype); TypeError for one with none."""
    dtype = getattr(tensor, "dtype", tensor)
    try:
        return _to_numpy_table()[dtype]
    except KeyError:
        raise TypeError(f"the triton backend has no NumPy dtype for torch {dtype}") from None
