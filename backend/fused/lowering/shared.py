"""What the rules share: casts and constants as expressions and tensors, known values, dtype
checks, and what the graph writes and a tensor reads."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir import numpy_table
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.node import Node, TensorMeta, nodes_in

from .. import loop_ir as ir
from ..dtypes import Unlowerable
from ..plan import HostValue, Known
from ..tensors import Lin, Pointwise, Tensor, broadcast_index


def describe(node: Node) -> str:
    if node.op in ("getitem", "setitem"):
        return f"{node.op} {node.name}"
    return getattr(node.target, "__name__", str(node.target))


# -- expressions and tensors ---------------------------------------------------------------------


def cast(expr: ir.Expr, dtype: np.dtype) -> ir.Expr:
    return expr if expr.dtype == dtype else ir.Cast(expr, np.dtype(dtype))


def cast_tensor(tensor: Tensor, dtype: np.dtype) -> Tensor:
    if tensor.dtype == dtype:
        return tensor
    return Pointwise(np.dtype(dtype), tensor.shape, lambda index: cast(tensor.load(index), dtype))


def constant_tensor(value, dtype: np.dtype, shape: tuple[int, ...] = ()) -> Tensor:
    constant = ir.Constant(value, np.dtype(dtype))
    return Pointwise(np.dtype(dtype), shape, lambda index: constant)


def operand_expr(operand, index, dtype: np.dtype) -> ir.Expr:
    """A tensor operand broadcast to ``index`` and cast, or a Python number as a constant."""
    if isinstance(operand, Tensor):
        return cast(operand.load(broadcast_index(index, operand.shape)), dtype)
    return ir.Constant(operand, np.dtype(dtype))


def binary(ufunc, a: Tensor, b: Tensor, dtype: np.dtype) -> Tensor:
    """``ufunc(a, b)`` element by element, broadcast, computed in ``dtype``."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    loop = (dtype, dtype)
    return Pointwise(dtype, shape, lambda index: ir.Op(
        ufunc, (operand_expr(a, index, dtype), operand_expr(b, index, dtype)), loop, (dtype,)))  # fmt: skip


def store_affine(target, index) -> ir.Affine:
    """Where ``target`` (a `BufferTensor`) holds its element at ``index``."""
    return target.load(index).index


def reads(tensor: Tensor) -> set:
    """The buffers ``tensor``'s elements are computed from."""
    probe = tuple(Lin.of(ir.IterVar(ir.Param(max(s, 1), "n"))) for s in tensor.shape)
    return {n.buffer for n in ir.walk(tensor.load(probe)) if isinstance(n, ir.Load)}


# -- dtypes ---------------------------------------------------------------------------------------


def check_dtype(node: Node, result) -> None:
    """The lowering's dtype is the one the trace saw, or the node runs in NumPy."""
    if result is None or node.tensor is None or node.tensor.kind == "python":
        return
    if result.dtype != node.tensor.dtype:
        raise Unlowerable(f"lowered to {result.dtype} where NumPy gave {node.tensor.dtype}")


# -- values the plan knows -------------------------------------------------------------------------


def has_tensor(value) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_tensor(v) for v in value)
    return isinstance(value, HostValue) and value.dtype is not None


def is_known(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(is_known(v) for v in value)
    if isinstance(value, slice):
        return is_known((value.start, value.stop, value.step))
    return isinstance(value, Known)


def unwrap(value):
    if isinstance(value, (tuple, list)):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, slice):
        return slice(*unwrap((value.start, value.stop, value.step)))
    return value.value


# -- memory ---------------------------------------------------------------------------------------


def written_nodes(graph: Graph, args_written=None) -> set[Node]:
    """Nodes whose memory the graph writes, directly or through views of them (``args_written``:
    the arguments a node writes, `written_args` by default)."""
    written: set[Node] = set()
    for node in graph.nodes:
        for arg in (args_written or written_args)(node):
            written.add(arg)
    changed = True
    while changed:  # a write through a view writes its base
        changed = False
        for node in graph.nodes:
            if (
                node in written
                and node.op in ("getitem", "call", *LOOP_OPS)  # a loop may give back its arguments
                and node.args
                and isinstance(node.args[0], Node)
                and not numpy_table.returns_new_memory(node.op, node.target)
            ):
                if node.args[0] not in written:
                    written.add(node.args[0])
                    changed = True
    return written


def written_args(node: Node) -> list[Node]:
    """The arguments ``node`` writes in place."""
    if node.op in ("setitem", "inplace"):
        return [node.args[0]] if isinstance(node.args[0], Node) else []
    if node.mutates:
        out = node.kwargs.get("out")
        if out is not None:
            return [o for o in (out if isinstance(out, tuple) else (out,)) if isinstance(o, Node)]
        return [n for n in nodes_in(node.args)]
    return []


def traced_order(traced: TensorMeta | None, shape: tuple) -> tuple[int, ...] | None:
    """`dims_in_memory` of a traced array at ``shape`` (None: no layout was traced)."""
    if traced is None or traced.kind != "array":
        return None
    if traced.strides is not None:
        return dims_in_memory(shape, traced.strides)
    if traced.order is not None:
        return tuple(d for d in traced.order if shape[d] > 1)
    return None


def dims_in_memory(shape: tuple, strides: tuple) -> tuple[int, ...]:
    """The dims that hold more than one element, fastest-varying in memory first."""
    order = sorted(range(len(shape)), key=lambda d: (abs(strides[d]), -d))
    return tuple(d for d in order if shape[d] > 1)
