"""How a backend lowers each canonical graph operation (see `tracer.ir.canonical`): a kernel
kind (pointwise, reduction, scan, view, gather, scatter, matmul), a loop (its body a graph of
its own), a cond (a graph per side), or extern: run by the array library as it is, marked so in the report. Backend knowledge, kept with the backends: the
tracer's NumPy table says what NumPy does, not how anything compiles it."""

from __future__ import annotations

import types

import numpy as np

from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.numpy_table import REDUCTIONS, SCANS

POINTWISE, REDUCTION, SCAN, VIEW, GATHER, SCATTER, MATMUL, LOOP, COND, EXTERN = (
    "pointwise", "reduction", "scan", "view", "gather", "scatter", "matmul", "loop", "cond",
    "extern",
)  # fmt: skip
_LOWERING = {
    POINTWISE: (np.where, np.clip, np.ndarray.astype, np.copy, np.ndarray.copy,
                np.ndarray.flatten, np.concatenate, np.stack, np.outer),
    REDUCTION: REDUCTIONS,
    SCAN: SCANS,
    VIEW: (np.transpose, np.reshape, np.expand_dims, np.squeeze, np.broadcast_to, np.swapaxes,
           np.moveaxis, np.ravel, np.real, np.imag),
    GATHER: (np.take, np.take_along_axis),
    MATMUL: (np.matmul, np.dot, np.einsum, np.tensordot, np.inner, np.vdot),
}  # fmt: skip
_LOWERING_BY_ID = {id(fn): kind for kind, fns in _LOWERING.items() for fn in fns}
_UFUNC_METHOD_LOWERING = {"reduce": REDUCTION, "accumulate": SCAN, "at": SCATTER}


def lowering_kind(op: str, target, args: tuple = ()) -> str:
    """How a backend lowers a canonical graph operation: pointwise, reduction, scan, view,
    gather, scatter, matmul, loop, cond, or extern. ``args`` are the node's (an index decides
    getitem's)."""
    if op in LOOP_OPS:
        return LOOP
    if op == Cond.op:
        return COND
    if op in ("getitem", "setitem"):
        data_index = any(getattr(n, "tensor", None) is not None and n.tensor.kind == "array"
                         for n in _leaves(args[1]))  # fmt: skip
        if op == "getitem":
            return GATHER if data_index else VIEW
        return SCATTER
    if op != "call":
        return EXTERN
    if id(target) in _LOWERING_BY_ID:
        return _LOWERING_BY_ID[id(target)]
    if isinstance(target, np.ufunc):
        return POINTWISE if target.signature is None else EXTERN
    if isinstance(target, types.BuiltinMethodType) and isinstance(target.__self__, np.ufunc):
        return _UFUNC_METHOD_LOWERING.get(target.__name__, EXTERN)
    return EXTERN


def targets(kind: str) -> tuple:
    """The callables the table names for ``kind`` (ufuncs and their methods go by their type)."""
    return tuple(_LOWERING.get(kind, ()))


def _leaves(obj):
    if isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _leaves(item)
    elif isinstance(obj, slice):
        yield from _leaves((obj.start, obj.stop, obj.step))
    else:
        yield obj
