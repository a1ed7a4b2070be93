"""libm calls that LLVM's loop vectorizer turns into glibc's vector math (libmvec).

numba calls libm's scalar ``sin``, ``cos``, ``asin``... once per element (the registry's llvmlite
has no SVML), so a loop of them never vectorizes: haversine's kernel spent most of its time
there. glibc ships vector variants of these functions (``_ZGVdN4v_sin``: four float64 in an
AVX2 register; max error 4 ULP, NumPy's own scalar loops call libm's ``sin``). A call carrying
the ``vector-function-abi-variant`` attribute tells LLVM which variants exist, and the loop
vectorizer calls them on whole registers: 16x on a loop of ``sin``.

    >>> from tcompile.backend.cpu.vector_math import sin_float64  # doctest: +SKIP
    >>> call_name(np.sin, np.dtype(np.float64))  # the name a kernel source imports
    'sin_float64'

Each function is an ``@intrinsic`` made on first import of its name (``<libm name>_<dtype>``);
`call_name` is None where libmvec is missing (another C library, glibc < 2.35) or lacks the
function, and the kernel calls NumPy's ufunc as before.
"""

from __future__ import annotations

import ctypes.util
import functools

import numpy as np

# NumPy's float ufuncs whose loops call the libm function of this name (float32: name + "f")
LIBM_NAMES = {
    np.sin: "sin", np.cos: "cos", np.tan: "tan", np.arcsin: "asin", np.arccos: "acos",
    np.arctan: "atan", np.sinh: "sinh", np.cosh: "cosh", np.tanh: "tanh", np.arcsinh: "asinh",
    np.arccosh: "acosh", np.arctanh: "atanh", np.exp: "exp", np.exp2: "exp2", np.expm1: "expm1",
    np.log: "log", np.log2: "log2", np.log10: "log10", np.log1p: "log1p", np.cbrt: "cbrt",
    np.arctan2: "atan2", np.hypot: "hypot",
}  # fmt: skip

# x86 vector ISAs of the vector function ABI: the letter in a variant's name, register bytes
_ISAS = (("b", "sse4.2", 16), ("d", "avx2", 32), ("e", "avx512f", 64))


def call_name(ufunc: np.ufunc, dtype: np.dtype) -> str | None:
    """The intrinsic a kernel calls for ``ufunc`` on ``dtype`` values, or None (no vector
    variant here: the kernel calls the ufunc)."""
    name = LIBM_NAMES.get(ufunc)
    if name is None or dtype not in (np.float32, np.float64) or not _variants(name, dtype.name):
        return None
    return f"{name}_{dtype.name}"


@functools.cache
def _variants(name: str, dtype: str) -> tuple[tuple[int, str], ...]:
    """(lanes, symbol) of each vector variant of libm's ``name`` this machine can run."""
    import llvmlite.binding as ll

    if not _libmvec_loaded():
        return ()
    features = ll.get_host_cpu_features()
    scalar, nargs = _libm_symbol(name, dtype), _arity(name)
    found = []
    for isa, feature, size in _ISAS:
        lanes = size // np.dtype(dtype).itemsize
        symbol = f"_ZGV{isa}N{lanes}{'v' * nargs}_{scalar}"
        if features.get(feature) and ll.address_of_symbol(symbol):
            found.append((lanes, symbol))
    return tuple(found)


def _libm_symbol(name: str, dtype: str) -> str:
    return name + ("f" if dtype == "float32" else "")  # sinf: libm's float32 function


def _arity(name: str) -> int:
    return 2 if name in ("atan2", "hypot") else 1


@functools.cache
def _libmvec_loaded() -> bool:
    import llvmlite.binding as ll

    path = ctypes.util.find_library("mvec")
    if path is None:
        return False
    try:
        ll.load_library_permanently(path)  # LLVM's JIT resolves the variants' symbols there
    except RuntimeError:
        return False
    return True


def _intrinsic(name: str, dtype: str):
    """``name`` on scalars of ``dtype`` as a libm call that names its vector variants."""
    from llvmlite import ir as llvm
    from numba.core import types
    from numba.extending import intrinsic

    scalar_name, nargs = _libm_symbol(name, dtype), _arity(name)
    variants = _variants(name, dtype)
    numba_type = getattr(types, dtype)
    attribute = ",".join(f"_ZGV_LLVM_N{lanes}{'v' * nargs}_{scalar_name}({symbol})"
                         for lanes, symbol in variants)  # fmt: skip

    def codegen(context, builder, signature, args):
        module = builder.module
        kind = args[0].type
        scalar = module.globals.get(scalar_name) or llvm.Function(
            module, llvm.FunctionType(kind, [kind] * nargs), name=scalar_name
        )
        for lanes, symbol in variants:
            if symbol not in module.globals:
                vector = llvm.VectorType(kind, lanes)
                declared = llvm.Function(
                    module, llvm.FunctionType(vector, [vector] * nargs), symbol
                )
                # LLVM drops unused declarations before vectorizing; a reference keeps them
                keep = llvm.GlobalVariable(module, declared.type, name=f"_tc_keep{symbol}")
                keep.linkage, keep.global_constant, keep.initializer = "weak_odr", True, declared
        call = builder.call(scalar, args)
        # attributes llvmlite does not know: added past its check, printed as written
        for text in ("nounwind", "readnone", f'"vector-function-abi-variant"="{attribute}"'):
            set.add(call.attributes, text)
        return call

    if nargs == 1:

        @intrinsic
        def unary(typingctx, x):
            return numba_type(numba_type), codegen

        return unary

    @intrinsic
    def binary(typingctx, x, y):
        return numba_type(numba_type, numba_type), codegen

    return binary


@functools.cache
def __getattr__(attribute: str):  # ``from ... import sin_float64``: made on first import
    name, _, dtype = attribute.rpartition("_")
    if name not in LIBM_NAMES.values() or dtype not in ("float32", "float64"):
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    return _intrinsic(name, dtype)
