"""Arrays that live on a device (torch tensors, CuPy arrays, anything with
``__cuda_array_interface__`` or DLPack on a GPU) or in a Dask graph (``dask.array``): what they
are, without importing their library.

A backend that runs on such arrays (``triton`` on device arrays; every built-in backend on Dask
arrays, chunk by chunk) declares it; the tracer then traces them as NumPy arrays of their dtype
and shape: inside a compiled function such an array behaves as the NumPy array of its data, and
results come back as the inputs' kind of array.
"""

from __future__ import annotations

import sys

import numpy as np

from .static_lookup import owner_index, type_attribute

# The kinds of arrays on a GPU (`array_kind`), which the Triton backend runs on.
DEVICE_KINDS = frozenset({"torch", "cupy", "cuda", "dlpack"})

# DLPack device types that are GPU memory (kDLCUDA, kDLCUDAManaged); kDLCUDAHost (3) is pinned
# host memory, which kernels cannot run on.
_DLPACK_CUDA = (2, 13)


def array_kind(obj) -> str | None:
    """What kind of array ``obj`` is: ``"numpy"`` (exactly np.ndarray), ``"torch"``, ``"cupy"``,
    ``"dask"`` (a ``dask.array`` array), ``"cuda"`` (other ``__cuda_array_interface__``
    objects), ``"dlpack"`` (other DLPack objects on a CUDA device), else None. Never imports
    torch, cupy or dask: an object of theirs means they are imported already.

    >>> array_kind(np.zeros(3)), array_kind([1.0])
    ('numpy', None)
    """
    cls = type(obj)
    if cls is np.ndarray:
        return "numpy"
    # asked of the class's dicts alone: a user class's metaclass hooks never run for this
    root = (type_attribute(cls, "__module__") or "").partition(".")[0]
    if root == "torch" and isinstance(obj, sys.modules["torch"].Tensor):
        return "torch"
    if root == "cupy" and isinstance(obj, sys.modules["cupy"].ndarray):
        return "cupy"
    if root == "dask" and isinstance(obj, sys.modules["dask.array"].Array):
        return "dask"
    if owner_index(cls, "__cuda_array_interface__") is not None:
        return "cuda"
    if (
        owner_index(cls, "__dlpack__") is not None
        and owner_index(cls, "__dlpack_device__") is not None
    ):
        try:
            if obj.__dlpack_device__()[0] in _DLPACK_CUDA:
                return "dlpack"
        except Exception:
            return None
    return None


def placement(obj) -> tuple:
    """What a guard checks about where an array lives: ``(kind, CUDA device index or None)``.

    >>> placement(np.zeros(3))
    ('numpy', None)
    """
    kind = array_kind(obj)
    if kind in (None, "numpy", "dask"):
        return (kind, None)
    if kind == "torch":
        index = obj.get_device()  # -1 for CPU tensors; cheaper than building `obj.device`
        return ("torch", index if index >= 0 else None)
    if kind == "cupy":
        return ("cupy", obj.device.id)
    # The CUDA array interface does not name the device; DLPack does.
    if hasattr(type(obj), "__dlpack_device__"):
        return (kind, obj.__dlpack_device__()[1])
    return (kind, None)


def numpy_meta(obj) -> tuple[np.dtype, tuple[int, ...]] | None:
    """``(dtype, shape)`` of a device or Dask array as NumPy would see its data; None for
    anything else, a dtype NumPy lacks (bfloat16), object arrays, and Dask arrays whose chunk
    sizes are unknown (made by ``x[mask]``): those stay objects the trace does not model, and
    the code using them runs as it is."""
    kind = array_kind(obj)
    if kind in (None, "numpy"):
        return None
    try:
        if kind == "torch":
            dtype = np.dtype(str(obj.dtype).removeprefix("torch."))
        elif kind == "cuda":
            dtype = np.dtype(obj.__cuda_array_interface__["typestr"])
        else:
            dtype = np.dtype(obj.dtype)
        if kind == "dask" and (dtype.kind == "O" or not _known_sizes(obj.chunks)):
            return None
        shape = tuple(int(d) for d in obj.shape)
    except (TypeError, AttributeError, KeyError):
        return None
    return dtype, shape


def _known_sizes(chunks: tuple) -> bool:
    return all(size == size for sizes in chunks for size in sizes)  # NaN: unknown


def guard_key(obj) -> tuple | None:
    """What an entry compiled for a device array assumes of it besides its shape: its kind,
    dtype and device, and a Dask array's chunks (a guard compares this)."""
    meta = numpy_meta(obj)
    if meta is None:
        return None
    if array_kind(obj) == "dask":
        return (placement(obj), meta[0].str, obj.chunks)
    return (placement(obj), meta[0].str)
