"""The graph IR: a list of nodes that prints as runnable Python calling NumPy.

Node kinds (``Node.op``), the only ones there are:

  ``input``    a graph input; ``target`` is the description of where the frame reads it
               (``x``, ``G['W']``, ``obj.w``); prints as a parameter of ``forward``.
  ``call``     ``target(*args, **kwargs)``; ``target`` is a NumPy function, a ufunc or ufunc
               method, an ``operator`` function (printed infix), or any other callable the
               tables allow; the result is the node's value.
  ``method``   ``args[0].target(*args[1:], **kwargs)``: an ndarray / NumPy-scalar method.
  ``attr``     ``args[0].target``: an attribute of an array (``x.T``, ``x.real``).
  ``getitem``  ``args[0][args[1]]``.
  ``setitem``  statement ``args[0][args[1]] = args[2]``: mutates ``args[0]``; no value.
  ``inplace``  statement ``args[0] <op>= args[1]`` (``target`` an ``operator.i*`` function):
               mutates ``args[0]`` in place; no value of its own.
  ``output``   ``return args[0]`` (a tuple of nodes); always last.

A ``call`` or ``method`` node with ``mutates=True`` also writes into one of its arguments
(``np.add(a, b, out=c)``, ``x.sort()``): like a statement, it is never dropped as dead code.

Arguments may nest nodes inside tuples, lists, dicts and slices. Every node carries
``meta`` (``"f64[4, 8]"``-style text of its value's type) and ``stack`` (the user's frames, innermost
last), which the printer puts in a trailing comment: what the user sees is what runs.
"""

from __future__ import annotations

import builtins
import keyword
import linecache
import math
import types
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from . import canonical, file_labels, operators


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
# Names a node may not take: the printed code uses some, and the others would read as builtins.
_RESERVED = frozenset({"np", "self", "forward", *dir(builtins)})


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
    input that is not a NumPy array lives (a torch tensor, a CuPy array: see `device_arrays`).
    """

    kind: str
    dtype: np.dtype | None = None
    shape: tuple = ()
    strides: tuple | None = None
    view_of: str | None = None
    type_name: str = ""
    placement: str | None = None  # where a graph input lives when it is not NumPy ("torch")
    order: tuple[int, ...] | None = None

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
    graph: Graph
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

    def __repr__(self) -> str:
        return f"%{self.name}"

    @property
    def has_value(self) -> bool:
        """Whether later nodes can use this node's value: not for statements, nor for calls
        with ``out=`` (their value is the ``out`` array: users name that array's node)."""
        return self.op not in STATEMENT_OPS and self.op != "output" and "out" not in self.kwargs


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


class Graph:
    """An ordered list of nodes. Build with the ``add_*`` methods; print with ``python_code``."""

    def __init__(self, name: str = "forward", module: str | None = None):
        self.name = name
        # The user's module: the graph's warnings show as its code's do (the warnings filters
        # match by module: DeprecationWarning is shown by default in __main__ only)
        self.module = module
        self.nodes: list[Node] = []
        self._names: set[str] = set()
        self._next_suffix: dict[str, int] = {}  # base -> the first suffix that may be free
        self._made: dict[str, tuple[str, int]] = {}  # name -> (base, suffix) it was made of

    # -- building -----------------------------------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "v"
        if base[0].isdigit():
            base = f"v_{base}"
        if keyword.iskeyword(base) or base in _RESERVED:
            base = f"{base}_"
        # The lowest free suffix, searched from where the last search for ``base`` ended (a
        # search from 1 each time is quadratic in a graph of thousands of ``add_N`` nodes).
        n = self._next_suffix.get(base, 0)
        name = f"{base}_{n}" if n else base
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        self._next_suffix[base] = n + 1
        self._made[name] = (base, n)
        return name

    def rename(self, node: Node, hint: str) -> None:
        """Give ``node`` the user's variable name (first store wins)."""
        self._names.discard(node.name)
        base, n = self._made.pop(node.name, (None, 0))
        if base is not None:  # its suffix is free again
            self._next_suffix[base] = min(self._next_suffix[base], n)
        node.name = self.fresh_name(hint)

    def add(self, op: str, target, args=(), kwargs=None, *, name: str, meta: str = "", stack=(),
            risk: str = RAISE) -> Node:  # fmt: skip
        node = Node(self, self.fresh_name(name), op, target, tuple(args), kwargs or {}, meta, stack,
                    risk=risk)  # fmt: skip
        self.nodes.append(node)
        return node

    @property
    def inputs(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "input"]

    @property
    def output(self) -> Node | None:
        return self.nodes[-1] if self.nodes and self.nodes[-1].op == "output" else None

    def op_count(self) -> int:
        return sum(1 for n in self.nodes if n.op not in ("input", "output"))

    # -- checking -----------------------------------------------------------------------------
    def lint(self) -> None:
        """Check the IR's invariants; raise AssertionError naming the first broken one."""
        seen: set[int] = set()
        names: set[str] = set()
        for i, node in enumerate(self.nodes):
            assert node.graph is self, f"{node} belongs to another graph"
            assert node.op in _OPS, f"{node} has unknown op {node.op!r}"
            assert node.name.isidentifier() and node.name not in names, f"bad name {node.name!r}"
            names.add(node.name)
            if node.op == "input":
                assert all(n.op == "input" for n in self.nodes[:i]), f"input {node} after an op"
            if node.op == "output":
                assert i == len(self.nodes) - 1, "output is not the last node"
            for used in _nodes_in((node.args, node.kwargs)):
                assert used.graph is self, f"{node} uses {used} of another graph"
                assert id(used) in seen, f"{node} uses {used} before it is defined"
                assert used.has_value, f"{node} uses the value of statement {used}"
            seen.add(id(node))

    def eliminate_dead_code(self) -> None:
        """Drop nodes nothing uses. Statements, writes, and nodes that may raise or warn (any
        risk but "silent") always stay: eager code would raise or warn there. Inputs stay too
        (their risk is not "silent"): the graph takes what the glue passes it."""
        live: set[int] = set()
        for node in reversed(self.nodes):
            keep = node.op in STATEMENT_OPS or node.op == "output" or node.mutates
            keep = keep or node.risk != SILENT
            if keep or id(node) in live:
                live.add(id(node))
                live.update(id(n) for n in _nodes_in((node.args, node.kwargs)))
        self.nodes = [n for n in self.nodes if id(n) in live]

    # -- printing -----------------------------------------------------------------------------
    def python_code(self, namespace: dict | None = None, *, comments: bool = True,
                    plan=None) -> str:  # fmt: skip
        """The graph as a Python function ``forward``; ``namespace`` receives the globals it needs.

        ``plan`` (a backend's memory plan) adds ``out=`` buffers and ``del`` statements: its
        ``buffer_of(node)`` is the node whose array ``node`` writes into, ``released_after(node)``
        the nodes whose names die after ``node``'s statement."""
        params = ", ".join(n.name for n in self.inputs)
        lines = [f"def {self.name}({params}):"]
        errstate: tuple = ()
        for node, text in self.statements(namespace, comments=comments, plan=plan):
            wanted = node.errstate if node.op != "output" else ()
            if wanted != errstate:  # ops traced under np.errstate run under it
                if wanted:
                    lines.append(f"    with np.errstate(**{dict(wanted)!r}):")
                errstate = wanted
            indent = "        " if errstate else "    "
            lines.append(indent + text)
            released = plan.released_after(node) if plan else ()
            if released:
                lines.append(f"{indent}del {', '.join(n.name for n in released)}")
        if self.output is None:
            lines.append("    return ()")
        return "\n".join(lines) + "\n"

    def statements(self, namespace: dict | None = None, *, comments: bool = True,
                   plan=None) -> Iterator[tuple[Node, str]]:  # fmt: skip
        """(node, its statement as `python_code` prints it, unindented) for every node but the
        inputs, in order: what a view of the code line by line shows (the widget's line map
        lists a source line's ops by it). Constants are bound in the order of the whole graph,
        so a statement's names are those of the printed code."""
        ns = namespace if namespace is not None else {}
        ns.setdefault("np", np)
        if self.module is not None:
            ns.setdefault("__name__", self.module)
        printer = _Printer(ns)
        for node in self.nodes:
            if node.op == "input":
                continue
            text = printer.statement(node, plan.buffer_of(node) if plan else None)
            if comments and node.op != "output":
                text = f"{text:<40}  # {_comment(node)}"
            yield node, text

    def format_node(self, node: Node) -> str:
        """One node as the Python statement it prints as."""
        return _Printer({"np": np}).statement(node)

    def __str__(self) -> str:
        header = "".join(f"# input {n.name}: {n.target}  {n.meta}\n" for n in self.inputs)
        return header + self.python_code()


_OPS = {"input", "call", "method", "attr", "getitem", "setitem", "inplace", "output"}


def _comment(node: Node) -> str:
    where = node.stack[-1] if node.stack else None
    loc = (
        f"  {file_labels.label(where.filename)}:{where.lineno} in {where.funcname}" if where else ""
    )
    return f"{node.meta}{loc}"


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


# Ufuncs written as the operators that run them on ndarrays (``np.add(a, b)``: ``a + b``).
_UFUNC_OPERATORS = {op.ufunc: op for op in operators.OPERATORS if op.ufunc is not None}
_ATTRIBUTE_SPELLING = {np.transpose: "T", np.real: "real", np.imag: "imag"}


def _holds_array(arg) -> bool:
    return isinstance(arg, Node) and arg.tensor is not None and arg.tensor.kind == "array"


class _Printer:
    """Turns nodes and constant arguments into Python text; binds non-literals in ``ns``."""

    def __init__(self, ns: dict):
        self.ns = ns
        self.bound: dict[int, str] = {id(v): k for k, v in ns.items()}

    def statement(self, node: Node, buffer: Node | None = None) -> str:
        if buffer is not None:  # an element-wise ufunc writing into a dead operand's array
            call = f"{self.callable(node.target)}({self.call_args(node.args, node.kwargs)}, out={buffer.name})"
            return f"{node.name} = {call}"
        if node.op == "output":
            return f"return {self.arg(node.args[0])}"
        if node.op == "setitem":
            obj, index, value = node.args
            return f"{self.arg(obj)}[{self.index(index)}] = {self.arg(value)}"
        if node.op == "inplace":
            op = operators.of_function(node.target)
            return f"{self.arg(node.args[0])} {op.symbol}= {self.arg(node.args[1])}"
        if "out" in node.kwargs and node.op == "call":  # its value is the ``out`` array
            op = _UFUNC_OPERATORS.get(node.target) if canonical.hashable(node.target) else None
            if op is not None and op.inplace and node.kwargs == {"out": node.args[0]} \
                    and len(node.args) == 2:  # fmt: skip
                return f"{self.arg(node.args[0])} {op.symbol}= {self.arg(node.args[1])}"
            return self.expression(node)
        return f"{node.name} = {self.expression(node)}"

    def expression(self, node: Node) -> str:
        """The node's value, spelled the fastest exact way: canonical ufuncs on arrays as
        operators (``a + b``), np functions with an equal ndarray method as that method
        (``a.sum(axis=0)``: no dispatch through ``np.sum``), see `canonical`."""
        args, kwargs = node.args, node.kwargs
        if node.op == "attr":
            return f"{self.arg(args[0])}.{node.target}"
        if node.op == "getitem":
            return f"{self.arg(args[0])}[{self.index(args[1])}]"
        if node.op == "method":
            return f"{self.arg(args[0])}.{node.target}({self.call_args(args[1:], kwargs)})"
        target = node.target
        on_array = bool(args) and _holds_array(args[0])
        if not canonical.hashable(target):
            return f"{self.callable(target)}({self.call_args(args, kwargs)})"
        op = operators.of_function(target) or _UFUNC_OPERATORS.get(target)
        if (
            op is not None
            and not kwargs
            and op.symbol != "abs"
            and len(args) == op.arity
            and (target is op.fn or any(_holds_array(a) for a in args))
            # CPython folds an operator on literals when it compiles the text: one that warns
            # (``~True``) would warn there, once, instead of on every run
            and not all(literal_text(a) is not None for a in args)
        ):
            if op.arity == 2:
                return f"{self.arg(args[0])} {op.symbol} {self.arg(args[1])}"
            return f"{op.symbol}{self.arg(args[0])}"
        if on_array and target in _ATTRIBUTE_SPELLING and len(args) == 1 and not kwargs:
            return f"{self.arg(args[0])}.{_ATTRIBUTE_SPELLING[target]}"
        spelling = canonical.method_spelling(target, args, kwargs) if on_array else None
        if spelling is not None:
            name, rest, named = spelling
            return f"{self.arg(args[0])}.{name}({self.call_args(rest, named)})"
        if on_array and isinstance(target, types.MethodDescriptorType) \
                and target.__objclass__ is np.ndarray:  # fmt: skip
            return f"{self.arg(args[0])}.{target.__name__}({self.call_args(args[1:], kwargs)})"
        return f"{self.callable(target)}({self.call_args(args, kwargs)})"

    def call_args(self, args, kwargs) -> str:
        parts = [self.arg(a) for a in args] + [f"{k}={self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def index(self, index) -> str:
        if isinstance(index, tuple) and index:
            text = ", ".join(self.index_item(i) for i in index)
            return text + ("," if len(index) == 1 else "")
        return self.index_item(index)

    def index_item(self, item) -> str:
        if isinstance(item, slice):
            parts = ["" if p is None else self.arg(p) for p in (item.start, item.stop, item.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if item.step is not None else "")
        if item is Ellipsis:
            return "..."
        return self.arg(item)

    def callable(self, target) -> str:
        name = numpy_name(target)
        return name if name is not None else self.bind(target, getattr(target, "__name__", "fn"))

    def arg(self, value) -> str:
        if isinstance(value, Node):
            return value.name
        if isinstance(value, tuple):
            inner = ", ".join(self.arg(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.arg(v) for v in value) + "]"
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self.arg(value.start)}, {self.arg(value.stop)}, {self.arg(value.step)})"
        literal = literal_text(value)
        if literal is not None:
            return literal
        name = numpy_name(value)
        return name if name is not None else self.bind(value, "c")

    def bind(self, value, hint: str) -> str:
        key = id(value)
        if key not in self.bound:
            name = f"_{hint}_{len(self.bound)}" if hint.isidentifier() else f"_c_{len(self.bound)}"
            self.ns[name] = value
            self.bound[key] = name
        return self.bound[key]


def literal_text(value) -> str | None:
    """Python source that evaluates to exactly ``value``, for literal constants; else None."""
    if value is None or value is Ellipsis or type(value) in (bool, int, str, bytes):
        return "..." if value is Ellipsis else repr(value)
    if type(value) is float and not math.isnan(value):  # a NaN's sign and payload have no text
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    return None  # complex too: repr(complex(0.0, -0.0)) == "-0j" reads back as (-0-0j)


def numpy_name(obj) -> str | None:
    """``np.<path>`` text for NumPy's public functions, ufuncs, ufunc methods and types."""
    if isinstance(obj, np.dtype):
        return f"np.dtype({obj.str!r})" if obj.isbuiltin else None
    if isinstance(obj, types.BuiltinMethodType) and isinstance(obj.__self__, np.ufunc):
        base = numpy_name(obj.__self__)
        return f"{base}.{obj.__name__}" if base else None
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return None
    for prefix, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        # (the module's dict: NumPy's __getattr__ warns for some names, ``np.str``)
        if vars(module).get(name) is obj:
            return f"{prefix}.{name}"
    return None
