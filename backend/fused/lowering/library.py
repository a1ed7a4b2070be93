"""The array library's kernels: matmul and scans (cumsum, cumprod) on device buffers, as
`LibraryCall` steps that the target's device runs (torch and cuBLAS on a GPU, NumPy on the CPU)."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from ..dtypes import Unlowerable
from ..plan import LibraryCall
from ..tensors import BufferTensor
from .registry import lowers
from .shared import describe
from .views import flatten


@lowers(kind=lowering_kinds.MATMUL)
@lowers(kind=lowering_kinds.SCAN)
def library_call(lowering, node: Node) -> BufferTensor:
    """``node`` run by the device's array library (matmul, scans) on the
    device buffers: floats for matmul (integer matmul is NumPy's), 1-D/2-D operands."""
    meta = node.tensor
    if meta is None or meta.kind != "array" or not all(isinstance(d, int) for d in meta.shape):
        raise Unlowerable(f"{describe(node)} giving a {meta.text() if meta else 'value'}")
    make = _CALLS.get(node.target)
    if make is None or _OPS[node.target] not in lowering.target.library_ops:
        raise Unlowerable(f"{describe(node)} has no library call here")
    call = make(lowering, node)
    result = lowering.buffer(node.name, meta.dtype, tuple(meta.shape))
    call.result = result
    lowering.plan.steps.append(call)
    return BufferTensor.whole(result)


def _matmul(lowering, node: Node) -> LibraryCall:
    if node.kwargs or len(node.args) != 2:
        raise Unlowerable(f"np.{node.target.__name__} with options")
    operands = [lowering.tensor(lowering.value(a)) for a in node.args]
    if node.tensor.dtype.kind != "f" or any(len(o.shape) not in (1, 2) for o in operands):
        raise Unlowerable(f"np.{node.target.__name__} of {node.tensor.dtype} or of more than 2-D")
    return LibraryCall("matmul", tuple(lowering.memory(o) for o in operands), {}, None)


def _scan(lowering, node: Node) -> LibraryCall:
    axis = lowering.known(node.kwargs.get("axis"))
    if set(node.kwargs) - {"axis", "dtype"}:
        raise Unlowerable(f"np.{node.target.__name__} with out=")
    source = lowering.tensor(lowering.value(node.args[0]))
    if axis is None:
        source, axis = flatten(lowering, source), 0
    return LibraryCall(node.target.__name__, (lowering.memory(source),),
                       {"axis": axis % max(len(source.shape), 1)}, None)  # fmt: skip


_CALLS = {np.matmul: _matmul, np.dot: _matmul, np.cumsum: _scan, np.cumprod: _scan}
_OPS = {np.matmul: "matmul", np.dot: "matmul", np.cumsum: "cumsum", np.cumprod: "cumprod"}
