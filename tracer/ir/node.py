"""The graph's nodes: what one operation is (`Node`), what its value is (`TensorMeta`), where in
the user's code it came from (`FrameLoc`), how it can fail at run time (its risk), and walks
over the nodes inside arguments."""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class FrameLoc:
    """One frame of the user's stack at a break or a graph node: where in their code."""

    filename: str
    lineno: int
    funcname: str

    @property
    def source_line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def render(self) -> str:
        text = f'  File "{self.filename}", line {self.lineno}, in {self.funcname}'
        src = self.source_line
        return f"{text}\n    {src}" if src else text


# How a node can fail at run time (its ``risk``; state/effects.py decides it when tracing).
SILENT, FP, RAISE = "silent", "fp", "raise"

STATEMENT_OPS = frozenset({"setitem", "inplace"})


@dataclass(frozen=True)
class TensorMeta:
    """What a node's value is, read off its example where it was traced.

    ``kind`` is "array" (an ndarray; a 0-d one has ``shape == ()``), "scalar" (a NumPy scalar,
    as a full reduction returns) or "python" (anything else; ``type_name`` says what).
    ``shape`` holds ints, and for sizes known only at run time (dynamic shapes) the dim's name
    (``"s0"``) where it is an input's, else None; ``strides`` are the example's (None where a
    size is symbolic), so two arrays with equal metas have one layout; where sizes are
    symbolic, ``order`` keeps the layout of an example whose elements are dense (its
    `memory_order`: a transposed result stays Fortran-ordered at every size). ``view_of``
    names the graph input whose memory the value shares, if any; ``placement`` says where an
    input that is not a NumPy array lives (a torch tensor, a CuPy array, a Dask array: see
    `device_arrays`), and ``chunks`` how a Dask array is cut.
    """

    kind: str
    dtype: np.dtype | None = None
    shape: tuple = ()
    strides: tuple | None = None
    view_of: str | None = None
    type_name: str = ""
    placement: str | None = None  # where a graph input lives when it is not NumPy ("torch")
    order: tuple[int, ...] | None = None
    chunks: tuple | None = None  # a Dask array input's chunk sizes, per dim

    @staticmethod
    def of(value, symbolic: bool = False) -> TensorMeta:
        if isinstance(value, np.ndarray):
            if symbolic:
                order = memory_order(value.shape, value.strides, value.itemsize)
                return TensorMeta("array", value.dtype, (None,) * value.ndim, None, order=order)
            return TensorMeta("array", value.dtype, value.shape, value.strides)
        if isinstance(value, np.generic):
            return TensorMeta("scalar", value.dtype, type_name=type(value).__name__)
        return TensorMeta("python", type_name=type(value).__name__)

    @property
    def is_static_array(self) -> bool:
        return self.kind == "array" and self.strides is not None

    @property
    def contiguous(self) -> bool | None:
        """C-contiguous (None when the layout is only known at run time)."""
        if self.kind != "array" or self.strides is None:
            return None
        expected, step = [], self.dtype.itemsize
        for size in reversed(self.shape):
            expected.append(step)
            step *= max(size, 1)
        return all(s == e for s, e, n in zip(self.strides, reversed(expected), self.shape) if n > 1)

    def text(self) -> str:
        """Short type text for comments: ``f32[4, 8]``, ``f64[s0, 3]``, ``np.float64``, ``int``."""
        if self.kind == "array":
            dims = ", ".join("?" if d is None else str(d) for d in self.shape)
            where = f" ({self.placement})" if self.placement else ""
            return f"{_short_dtype(self.dtype)}[{dims}]{where}"
        if self.kind == "scalar":
            return f"np.{self.type_name}"
        return self.type_name


@dataclass(eq=False)
class Node:
    graph: object  # the Graph it belongs to
    name: str
    op: str
    target: object
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    meta: str = ""
    stack: tuple[FrameLoc, ...] = ()
    mutates: bool = False
    errstate: tuple = ()  # np.errstate settings in force (sorted (key, value) pairs)
    risk: str = RAISE  # how it can fail at run time: SILENT, FP or RAISE
    writes_inputs: tuple = ()  # the graph inputs whose memory it writes
    tensor: TensorMeta | None = None  # its value, where the trace had an example of it
    sized_by_data: bool = False  # an array whose sizes follow array values (`data_sizes`)

    def __repr__(self) -> str:
        return f"%{self.name}"

    @property
    def has_value(self) -> bool:
        """Whether later nodes can use this node's value: not for statements, nor for calls
        with ``out=`` (their value is the ``out`` array: users name that array's node)."""
        return self.op not in STATEMENT_OPS and self.op != "output" and "out" not in self.kwargs


def user_lines(nodes) -> tuple[str, ...]:
    """The user's lines of ``nodes`` (a node, or several), each once: a step's comments."""
    lines = []
    for node in (nodes,) if isinstance(nodes, Node) else nodes:
        where = node.stack[-1] if node.stack else None
        if where is not None:
            text = f"{where.filename.rsplit('/', 1)[-1]}:{where.lineno}  {where.source_line}"
            if text not in lines:
                lines.append(text)
    return tuple(lines)


def memory_order(shape: tuple, strides: tuple, itemsize: int) -> tuple[int, ...] | None:
    """An array's dims from the fastest-varying in memory to the slowest, when its elements
    are dense (C order is ``(n - 1, ..., 0)``, a transposed C array's ``(0, ..., n - 1)``; a
    size-1 dim goes as in C order), else None (a slice with a step, a broadcast)."""
    order = tuple(sorted(range(len(shape)), key=lambda d: (strides[d], -d)))
    expected = itemsize
    for d in order:
        if shape[d] > 1 and strides[d] != expected:
            return None
        expected *= max(shape[d], 1)
    return order


def describe_value(value: object) -> str:
    """Short type text for comments: ``f32[4, 8]``, ``np.float64``, ``int``."""
    return TensorMeta.of(value).text()


def _short_dtype(dtype: np.dtype) -> str:
    kind = {"f": "f", "i": "i", "u": "u", "c": "c", "b": "bool"}.get(dtype.kind)
    if kind == "bool":
        return "bool"
    return f"{kind}{dtype.itemsize * 8}" if kind else str(dtype)


def _nodes_in(obj):
    if isinstance(obj, Node):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from _nodes_in(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _nodes_in(item)
    elif isinstance(obj, slice):
        yield from _nodes_in((obj.start, obj.stop, obj.step))


def nodes_in(obj) -> list[Node]:
    return list(_nodes_in(obj))


def follows_any(node, sources: list[Node]) -> Node | None:
    """The first of ``sources`` that ``node`` is or is computed from, if any."""
    wanted = {id(n): n for n in sources}
    seen, todo = set(), [node] if isinstance(node, Node) else []
    while todo:
        current = todo.pop()
        if id(current) in wanted:
            return wanted[id(current)]
        if id(current) not in seen:
            seen.add(id(current))
            todo += nodes_in((current.args, current.kwargs))
    return None


def substitute(obj, replaced: dict[int, Node]):
    """``obj`` (a node, or arguments holding nodes) with each node whose id is a key of
    ``replaced`` replaced by its value."""
    if isinstance(obj, Node):
        return replaced.get(id(obj), obj)
    if isinstance(obj, tuple):
        return tuple(substitute(v, replaced) for v in obj)
    if isinstance(obj, list):
        return [substitute(v, replaced) for v in obj]
    if isinstance(obj, dict):
        return {k: substitute(v, replaced) for k, v in obj.items()}
    if isinstance(obj, slice):
        return slice(*(substitute(p, replaced) for p in (obj.start, obj.stop, obj.step)))
    return obj
