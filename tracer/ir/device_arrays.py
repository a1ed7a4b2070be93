"""Arrays that live on a device (torch tensors, CuPy arrays, anything with
``__cuda_array_interface__`` or DLPack on a GPU): what they are, without importing their library.

A backend that runs on such arrays (``triton``) declares it; the tracer then traces them as
NumPy arrays of their dtype and shape: inside a compiled function a device array behaves as the
NumPy array of its data, and results come back as the inputs' kind of array.
"""

from __future__ import annotations

import sys

import numpy as np

from .static_lookup import owner_index, type_attribute

# DLPack device types that are GPU memory (kDLCUDA, kDLCUDAManaged); kDLCUDAHost (3) is pinned
# host memory, which kernels cannot run on.
_DLPACK_CUDA = (2, 13)


def array_kind(obj) -> str | None:
    """What kind of array ``obj`` is: ``"numpy"`` (exactly np.ndarray), ``"torch"``, ``"cupy"``,
    ``"cuda"`` (other ``__cuda_array_interface__`` objects), ``"dlpack"`` (other DLPack objects
    on a CUDA device), else None. Never imports torch or cupy: an object of theirs means they
    are imported already.

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
    if kind is None or kind == "numpy":
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
    """``(dtype, shape)`` of a device array as NumPy would see its data; None for anything
    else, or a dtype NumPy lacks (bfloat16)."""
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
        shape = tuple(int(d) for d in obj.shape)
    except (TypeError, AttributeError, KeyError):
        return None
    return dtype, shape


def guard_key(obj) -> tuple | None:
    """What an entry compiled for a device array assumes of it besides its shape: its kind,
    dtype and device (a guard compares this)."""
    meta = numpy_meta(obj)
    return None if meta is None else (placement(obj), meta[0].str)
