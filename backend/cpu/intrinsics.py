"""LLVM operations numba has no Python spelling for, for the generated kernels' helpers."""

from __future__ import annotations

from llvmlite import ir as llvm
from numba.core import types
from numba.extending import intrinsic


@intrinsic
def int32_as_float32(typingctx, bits):
    """The float32 whose bits are ``bits`` (an int32): ``2**k`` as ``(k + 127) << 23``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], llvm.FloatType())

    return types.float32(types.int32), codegen


def _nan_propagating(name):
    """LLVM's ``llvm.maximum``/``llvm.minimum`` on two floats of one type: NaN when either is
    NaN, -0.0 below +0.0. LLVM vectorizes a reduction of them (4x on a row's max), where it
    leaves np.maximum's compare-and-select chain scalar."""

    @intrinsic
    def reduce_step(typingctx, a, b):
        def codegen(context, builder, signature, args):
            kind = args[0].type
            fn = builder.module.declare_intrinsic(name, [kind], llvm.FunctionType(kind, [kind] * 2))
            return builder.call(fn, args)

        return a(a, b), codegen

    return reduce_step


nan_maximum = _nan_propagating("llvm.maximum")
nan_minimum = _nan_propagating("llvm.minimum")


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``), three floats of one type: NumPy's SIMD
    complex products are made of them where the CPU has them (`native_masked`)."""

    def codegen(context, builder, signature, args):
        kind = args[0].type
        fn = builder.module.declare_intrinsic(
            "llvm.fma", [kind], llvm.FunctionType(kind, [kind] * 3)
        )
        return builder.call(fn, args)

    return a(a, b, c), codegen
