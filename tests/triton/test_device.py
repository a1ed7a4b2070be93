"""Device arrays of the Triton backend: NumPy in and out bit for bit, zero-copy where promised,
array kinds and placements, and the reasons the backend cannot run.

Runs under Triton's CPU interpreter (torch CPU tensors are the device); the CUDA and CuPy tests
run only where there is a GPU.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
from requires_triton import require_triton  # noqa: E402

torch = require_triton()

from tcompile.backend.triton import device as dev  # noqa: E402
from tcompile.tracer.ir import device_arrays  # noqa: E402

DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64",
]  # fmt: skip

# NaNs with payloads: a bitwise round trip keeps them.
NAN_BITS = {"float16": 0x7E01, "float32": 0x7FC00123, "float64": 0x7FF8000000000123}


def sample(dtype: str, shape=(4, 6)) -> np.ndarray:
    """A C-contiguous array of ``dtype`` with its edge values: extremes, -0.0, inf, NaN payloads."""
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        values = np.arange(n) % 3 == 0
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        values = np.random.default_rng(0).integers(info.min, info.max, n, dtype=dt, endpoint=True)
        values[:3] = [info.min, info.max, 0]
    else:
        values = np.random.default_rng(0).standard_normal(n).astype(dt)
        nan = np.array(NAN_BITS[dtype], dtype=f"u{dt.itemsize}").view(dt)
        values[:6] = [nan, -0.0, np.inf, -np.inf, np.finfo(dt).smallest_subnormal, np.finfo(dt).max]
    return values.reshape(shape)


def readonly(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def unaligned(a):
    buf = np.zeros(a.nbytes + 1, np.uint8)[1:].view(a.dtype).reshape(a.shape)
    buf[...] = a
    return buf


LAYOUTS = {
    "C": lambda a: a,
    "F": np.asfortranarray,
    "transposed": lambda a: a.T,
    "strided": lambda a: a[:, ::2],
    "negative strides": lambda a: a[::-1, ::-2],
    "non-writeable": readonly,
    "0-d": lambda a: np.array(a[1, 2]),
    "empty": lambda a: a[:0],
    "non-native byte order": lambda a: a.astype(a.dtype.newbyteorder()),
    "broadcast": lambda a: np.broadcast_to(a[1], (3, a.shape[1])),
    "unaligned": unaligned,
}
# Layouts torch.from_numpy can view as they are (one-byte types have no byte order or alignment).
VIEWED = {"C", "F", "transposed", "strided", "0-d", "empty"}
VIEWED_IF_ONE_BYTE = {"non-native byte order", "unaligned"}


def native(a: np.ndarray) -> np.ndarray:
    return np.array(a, dtype=a.dtype.newbyteorder("="), order="C")


def assert_same_bits(got, want):
    assert got.shape == want.shape
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("=")
    assert native(got).tobytes() == native(want).tobytes()


@pytest.fixture
def device(monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    d = dev.current_device()
    assert d.kind == "interpreter" and d.torch_device.type == "cpu"
    return d


@pytest.fixture
def fresh_reason():
    dev._reason.cache_clear()
    yield
    dev._reason.cache_clear()


# --- NumPy -> device -> NumPy ---------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_is_bitwise_and_keeps_the_dtype(device, dtype, layout):
    a = LAYOUTS[layout](sample(dtype))
    before = a.copy()
    t = device.from_host(a)
    assert dev.numpy_dtype(t) == a.dtype.newbyteorder("=")
    back = device.to_host(t, scalar=False)
    assert type(back) is np.ndarray and back.dtype.isnative
    assert_same_bits(back, a)
    assert a.dtype == before.dtype and a.tobytes() == before.tobytes()  # the input is untouched


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float64"])
def test_from_host_is_zero_copy_exactly_where_torch_can_view(device, dtype, layout):
    a = LAYOUTS[layout](sample(dtype))
    t = device.from_host(a)
    viewed = layout in VIEWED or (layout in VIEWED_IF_ONE_BYTE and a.itemsize == 1)
    if a.size:
        assert (t.data_ptr() == a.ctypes.data) == viewed
        assert np.shares_memory(device.to_host(t, scalar=False), a) == viewed
    if viewed:  # the array's own layout, strides in elements
        assert t.stride() == tuple(s // a.itemsize for s in a.strides)
    else:  # a fresh C-contiguous copy
        assert t.is_contiguous()


def test_to_host_under_the_interpreter_is_the_tensors_memory(device):
    t = device.empty((3, 5), np.float32).t()
    out = device.to_host(t, scalar=False)
    assert out.ctypes.data == t.data_ptr()
    assert out.strides == (4, 20)  # the tensor's (transposed) layout, as NumPy's K order keeps


def test_to_host_result_keeps_its_memory_alive(device):
    t = device.empty((4096,), np.float64)
    t.fill_(3.0)
    out = device.to_host(t, scalar=False)
    del t
    gc.collect()
    junk = [torch.full((4096,), 7.0, dtype=torch.float64) for _ in range(8)]  # reuse freed memory
    assert (out == 3.0).all()
    del junk


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_result_is_the_numpy_scalar_numpy_returns(device, dtype):
    for a in (sample(dtype)[0, 0:1], np.array(sample(dtype)[0, 0])):  # 1-element and 0-d
        got = device.to_host(device.from_host(a), scalar=True)
        assert type(got) is np.dtype(dtype).type
        assert isinstance(got, np.generic)
        assert native(np.array(got)).tobytes() == native(a).tobytes()  # NaN payload included
    with np.errstate(invalid="ignore"):
        summed = np.sum(sample(dtype))
    t = torch.from_numpy(np.array(summed))
    assert type(device.to_host(t, scalar=True)) is type(summed)


def test_empty_makes_a_contiguous_tensor_of_the_dtype(device):
    t = device.empty((2, 3), np.dtype("uint16"))
    assert t.shape == (2, 3) and t.dtype == torch.uint16 and t.is_contiguous()
    assert t.device == device.torch_device


# --- write_back -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layout", ["C", "F", "transposed", "strided", "negative strides", "non-native byte order",
               "unaligned", "0-d"],
)  # fmt: skip
def test_write_back_makes_the_callers_array_hold_the_kernels_values(device, layout):
    a = LAYOUTS[layout](sample("float64"))
    with np.errstate(over="ignore"):
        want = a * 2 + 1
    t = device.from_host(a)
    t.mul_(2).add_(1)  # what an in-place kernel does
    device.write_back(t, a)
    assert_same_bits(a, want)


def test_write_back_copies_from_a_separate_tensor(device):
    a = sample("int32")
    t = torch.from_numpy(sample("int32") + 5)
    device.write_back(t, a)
    assert (a == sample("int32") + 5).all()


def test_write_back_to_a_read_only_array_raises_like_numpy(device):
    a = readonly(sample("float32"))
    t = device.from_host(a)
    t.add_(1)
    with pytest.raises(ValueError, match="read-only"):
        device.write_back(t, a)


# --- kinds, placements, conversions ---------------------------------------------------------


class SubArray(np.ndarray):
    pass


class FakeCudaArray:
    """Only the attribute array_kind looks for: never handed to torch."""

    __cuda_array_interface__ = {"shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3}


class FakeCudaArrayOnDevice1(FakeCudaArray):
    def __dlpack__(self, stream=None):
        raise NotImplementedError

    def __dlpack_device__(self):
        return (2, 1)


class FakeDLPack:
    def __init__(self, device_type, index=0):
        self.where = (device_type, index)

    def __dlpack__(self, stream=None):
        raise NotImplementedError

    def __dlpack_device__(self):
        return self.where


@pytest.mark.parametrize(
    "obj, kind, where",
    [
        (np.zeros(3), "numpy", None),
        (np.float64(1.0), None, None),
        (np.zeros(2).view(SubArray), None, None),  # a subclass: not what the backend takes
        (torch.zeros(3), "torch", None),
        (FakeCudaArray(), "cuda", None),
        (FakeCudaArrayOnDevice1(), "cuda", 1),
        (FakeDLPack(2, 3), "dlpack", 3),  # kDLCUDA, device 3
        (FakeDLPack(1), None, None),  # kDLCPU
        (FakeDLPack(3), None, None),  # kDLCUDAHost: pinned host memory, not a device
        ([1.0, 2.0], None, None),
        (3.0, None, None),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, (str, int)) else str(v),
)
def test_array_kind_and_placement(obj, kind, where):
    assert dev.array_kind(obj) == kind
    assert device_arrays.placement(obj) == (kind, where)


def test_to_device_tensor_and_back(device):
    a = sample("float32")
    t = dev.to_device_tensor(a, device)
    assert t.data_ptr() == a.ctypes.data
    assert dev.from_device_tensor(t, "numpy", scalar=False, device=device) is not None
    own = torch.arange(4.0)
    assert dev.to_device_tensor(own, device) is own
    assert dev.from_device_tensor(own, "torch", scalar=False, device=device) is own
    with pytest.raises(TypeError, match="list"):
        dev.to_device_tensor([1.0], device)
    with pytest.raises(TypeError, match="complex"):
        dev.to_device_tensor(torch.zeros(2, dtype=torch.complex64), device)
    with pytest.raises(ValueError, match="kind"):
        dev.from_device_tensor(t, "jax", scalar=False, device=device)


class NegativeStridesCuda(FakeCudaArray):
    __cuda_array_interface__ = {**FakeCudaArray.__cuda_array_interface__, "strides": (-8,)}


class NegativeStridesDLPack(FakeDLPack):
    strides = (-8,)


@pytest.mark.parametrize("obj", [NegativeStridesCuda(), NegativeStridesDLPack(2)])
def test_device_arrays_with_negative_strides_are_refused_before_torch_sees_them(device, obj):
    # torch.from_dlpack aborts the whole process on negative strides: refuse them first.
    with pytest.raises(ValueError, match="negative strides"):
        dev.to_device_tensor(obj, device)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_tables_round_trip(dtype):
    td = dev.torch_dtype(np.dtype(dtype))
    assert td == getattr(torch, dtype)
    assert dev.numpy_dtype(torch.empty(0, dtype=td)) == np.dtype(dtype)
    assert dev.torch_dtype(np.dtype(dtype).newbyteorder()) == td


@pytest.mark.parametrize("dtype", ["complex128", "object", "datetime64[s]", "<U3", "longdouble"])
def test_unsupported_dtypes_raise_type_error_naming_them(device, dtype):
    name = str(np.dtype(dtype))
    with pytest.raises(TypeError, match=name.replace("[", r"\[").replace("]", r"\]")):
        dev.torch_dtype(np.dtype(dtype))
    with pytest.raises(TypeError):
        device.from_host(np.zeros(2, dtype=dtype))


def test_numpy_dtype_of_a_torch_type_numpy_lacks():
    with pytest.raises(TypeError, match="bfloat16"):
        dev.numpy_dtype(torch.zeros(1, dtype=torch.bfloat16))


# --- why_unavailable ------------------------------------------------------------------------


def test_missing_triton_says_what_to_install(monkeypatch, fresh_reason):
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` now raises ImportError
    reason = dev.why_unavailable()
    assert "Triton" in reason and "pip install 'tcompile[gpu]'" in reason
    with pytest.raises(RuntimeError, match="Triton"):
        dev.current_device()


def test_missing_torch_says_what_to_install_and_why(monkeypatch, fresh_reason):
    monkeypatch.setitem(sys.modules, "torch", None)
    reason = dev.why_unavailable()
    assert "PyTorch" in reason and "torch tensors" in reason
    assert "pip install 'tcompile[gpu]'" in reason


def test_no_gpu_without_interpreter_points_at_triton_interpret(monkeypatch, fresh_reason):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    reason = dev.why_unavailable()
    assert "no CUDA GPU" in reason and "TRITON_INTERPRET=1" in reason
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the answer follows the setting
    assert dev.why_unavailable() == ""


def test_available_with_a_gpu_and_the_answer_is_cached(monkeypatch, fresh_reason):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dev.why_unavailable() == ""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dev.why_unavailable() == ""  # cached: a GPU does not come and go


def test_import_tcompile_imports_neither_torch_nor_triton():
    code = (
        "import sys, numpy as np\n"
        "import tcompile\n"
        "from tcompile.backend.triton import device as d\n"
        "assert d.array_kind(np.zeros(2)) == 'numpy' and d.array_kind([1]) is None\n"
        "bad = [m for m in ('torch', 'triton', 'cupy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


# --- CUDA and CuPy (only where there is a GPU) -----------------------------------------------

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (this torch sees none)"
)


@pytest.fixture
def cuda_device():
    return dev._device("cuda")


@needs_cuda
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_round_trip_through_pinned_memory(cuda_device, dtype, layout):
    a = LAYOUTS[layout](sample(dtype))
    t = cuda_device.from_host(a)
    assert t.is_cuda
    back = cuda_device.to_host(t, scalar=False)
    assert_same_bits(back, a)
    if back.size:
        assert back.base is not None and back.base.is_pinned()  # the array is the pinned buffer
    if a.ndim == 0:
        got = cuda_device.to_host(t, scalar=True)
        assert type(got) is np.dtype(dtype).type
    t.zero_()
    if layout in ("C", "F", "negative strides", "non-native byte order", "unaligned"):
        cuda_device.write_back(t, a)
        assert not native(a).any()


@needs_cuda
def test_cupy_arrays_stay_on_the_device_zero_copy(cuda_device):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    for dtype in DTYPES:
        x = cupy.asarray(sample(dtype))
        t = dev.to_device_tensor(x, cuda_device)
        assert t.data_ptr() == x.data.ptr
        assert device_arrays.placement(x) == ("cupy", 0)
        y = dev.from_device_tensor(t, "cupy", scalar=False, device=cuda_device)
        assert type(y) is cupy.ndarray and y.data.ptr == x.data.ptr and y.dtype == x.dtype
    x = cupy.arange(6.0)[::-1]  # negative strides: copied, then written back
    t = dev.to_device_tensor(x, cuda_device)
    t.mul_(10)
    cuda_device.write_back(t, x)
    assert (cupy.asnumpy(x) == np.arange(6.0)[::-1] * 10).all()
