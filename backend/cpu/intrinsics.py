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
