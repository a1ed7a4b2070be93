"""Values the plan holds on the host: calls on Python values alone (folded when known, else a
`HostCall` per call), items of Python containers, ``np.shape``, and what must stay NumPy's."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.node import Node

from ..plan import HostCall, HostValue, Known, WholeGraphInNumPy
from .registry import lowers
from .shared import has_tensor, is_known, unwrap

# Python results a plan may compute once: they cannot change.
_IMMUTABLE = frozenset({"int", "float", "bool", "complex", "str", "tuple", "NoneType", "dtype",
                        "slice", "bytes", "frozenset", "ellipsis", "type"})  # fmt: skip


def rule_on_host_values(lowering, node: Node):
    """The rule for a node on values the plan holds on the host, or None: an item of a Python
    container, a call whose arguments hold no array a kernel reads."""
    if node.op == "getitem" and isinstance(lowering.value(node.args[0]), (tuple, list, Known)):
        return _item
    if node.op == "call" and not has_tensor(
        [lowering.value(a) for a in (*node.args, *node.kwargs.values())]
    ):
        return _host_call
    return None


def _item(lowering, node: Node):
    base = lowering.value(node.args[0])
    item = base.value[lowering.known(node.args[1])] if isinstance(base, Known) else \
        base[lowering.known(node.args[1])]  # fmt: skip
    return Known(item) if isinstance(base, Known) else item


def _host_call(lowering, node: Node):
    """A call on Python values: folded now when every argument is known, the result is
    immutable (a size, a dtype) and it can neither fail nor warn, else made on every call
    (an array is a new one each call, as eager code makes it)."""
    args = [lowering.value(a) for a in node.args]
    kwargs = {k: lowering.value(v) for k, v in node.kwargs.items()}
    meta = node.tensor
    # A node that may raise or warn runs on every call, as the graph's Python would (one
    # kept only for its warning, ``bool(NotImplemented)``, has known arguments too).
    if (
        node.risk == "silent"
        and all(is_known(a) for a in (*args, *kwargs.values()))
        and (meta is None or meta.kind == "python" and meta.type_name in _IMMUTABLE)
    ):
        with np.errstate(all="ignore"):
            result = node.target(*map(unwrap, args), **{k: unwrap(v) for k, v in kwargs.items()})
        return Known(result)
    dtype = meta.dtype if meta is not None and meta.kind in ("scalar", "array") else None
    shape = tuple(meta.shape) if meta is not None and meta.kind == "array" else None
    result = HostValue(lowering.fresh(node.name), dtype, shape)
    lowering.plan.steps.append(HostCall(node.target, tuple(args), kwargs, result))
    return result


@lowers(np.shape, host_args=True)
def shape(lowering, node: Node) -> Known:
    return Known(tuple(lowering.tensor(lowering.value(node.args[0])).shape))


@lowers(np.ndarray.setflags, host_args=True)
def setflags(lowering, node: Node):
    raise WholeGraphInNumPy("it changes an array's flags, which live with the caller's array")
