"""The CPU backend's "device": NumPy arrays in host memory, so the shared runtime
(`tcompile.backend.fused.runtime`) runs its plans on them unchanged. A caller's array is used
where it is (kernels read its memory); an array the graph writes is copied first by the runtime
and written back once the whole call succeeded.

    >>> dev = NumpyDevice()
    >>> a = dev.empty((2, 3), np.dtype(np.float64), (1, 2))  # Fortran order, in elements
    >>> dev.strides(a)
    (1, 2)
"""

from __future__ import annotations

import numpy as np

from ..fused import target


class NumpyDevice(target.Device):
    """Tensors are NumPy arrays with non-negative strides in whole elements (what kernel
    indices address); the array library is NumPy itself."""

    kind = "cpu"
    shares_host_memory = True
    array_kinds = frozenset({"numpy"})

    def __repr__(self) -> str:
        return "NumpyDevice()"

    # -- between the caller and the kernels -------------------------------------------------------
    def from_host(self, array: np.ndarray) -> np.ndarray:
        """``array`` itself where kernels can address it, else a C-contiguous native copy
        (negative or misaligned strides, another byte order)."""
        itemsize = array.itemsize
        if (
            array.flags.aligned
            and array.dtype.isnative
            and all(s >= 0 and s % itemsize == 0 for s in array.strides)
        ):
            return array
        return np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)

    def to_host(self, tensor: np.ndarray, *, scalar: bool):
        if scalar:
            return tensor.reshape(())[()]  # the NumPy scalar bit for bit
        return tensor

    def write_back(self, tensor: np.ndarray, host) -> None:
        if not _same_memory(tensor, host):
            host[...] = tensor  # a read-only ``host`` raises, as NumPy's own write would

    # -- tensors -----------------------------------------------------------------------------------
    def empty(self, shape, dtype, strides=None) -> np.ndarray:
        shape, dtype = tuple(shape), np.dtype(dtype)
        if strides is None or _is_c_order(shape, strides):
            return np.empty(shape, dtype)
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
        flat = np.empty(max(span, 1), dtype)
        return self.view(flat, shape, strides, 0)

    def strides(self, tensor: np.ndarray) -> tuple[int, ...]:
        itemsize = tensor.itemsize
        return tuple(s // itemsize for s in tensor.strides)

    def view(self, tensor: np.ndarray, shape, strides, offset: int) -> np.ndarray:
        """A view ``offset`` elements after ``tensor``'s first element (no bounds check: the
        plan's views lie inside their buffers)."""
        itemsize = tensor.itemsize
        pointer = tensor.__array_interface__["data"][0] + int(offset) * itemsize
        interface = {"data": (pointer, not tensor.flags.writeable), "shape": tuple(shape),
                     "strides": tuple(int(s) * itemsize for s in strides),
                     "typestr": tensor.dtype.str, "version": 3}  # fmt: skip
        return np.asarray(_Memory(interface, tensor))

    def copy(self, target: np.ndarray, source) -> None:
        target[...] = np.reshape(source, target.shape)

    def clone(self, tensor: np.ndarray) -> np.ndarray:
        return tensor.copy(order="K")

    def copy_from_host(self, tensor: np.ndarray, host: np.ndarray) -> None:
        if not _same_memory(tensor, host):
            tensor[...] = host

    def error_flag(self) -> np.ndarray:
        return np.zeros(1, np.int32)

    def error_raised(self, flag: np.ndarray) -> bool:
        return bool(flag[0])

    def library(self, op: str, operands: list, dtype: np.dtype, options: dict) -> np.ndarray:
        """NumPy's own ``op``: bit for bit what the plain call computes."""
        if op == "matmul":
            a, b = (o.astype(dtype, copy=False) for o in operands)
            return np.matmul(a, b)
        return getattr(np, op)(operands[0], axis=options["axis"], dtype=dtype)


def flat(tensor: np.ndarray) -> np.ndarray:
    """The memory a tensor spans as a 1-D array from its first element: what a kernel's
    affine indices (element offsets, `loop_ir.Affine`) address."""
    if tensor.flags.c_contiguous:
        return tensor.reshape(-1)
    itemsize = tensor.itemsize
    span = 1 + sum((n - 1) * s // itemsize for n, s in zip(tensor.shape, tensor.strides))
    return np.lib.stride_tricks.as_strided(tensor, (span,), (itemsize,))


def _is_c_order(shape, strides) -> bool:
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _same_memory(a: np.ndarray, b) -> bool:
    return (
        isinstance(b, np.ndarray)
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
        and a.strides == b.strides
        and a.dtype == b.dtype
    )


class _Memory:
    """Raw memory for NumPy, keeping the array that owns it alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__ = interface
        self.owner = owner
