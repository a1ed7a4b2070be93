"""Nodes as Python text: the statement each node prints as, spelled the fastest exact way,
with constants bound in the namespace the code runs in."""

from __future__ import annotations

import builtins
import math
import types

import numpy as np

from . import canonical, file_labels, operators
from .cond_nodes import BODY_OPS
from .loop_nodes import FIRST
from .node import Node

# Ufuncs written as the operators that run them on ndarrays (``np.add(a, b)``: ``a + b``).
_UFUNC_OPERATORS = {op.ufunc: op for op in operators.OPERATORS if op.ufunc is not None}
_ATTRIBUTE_SPELLING = {np.transpose: "T", np.real: "real", np.imag: "imag"}


def _holds_array(arg) -> bool:
    return isinstance(arg, Node) and arg.tensor is not None and arg.tensor.kind == "array"


def _python_bool(value) -> bool:
    """A Python bool, constant or a node's (a comparison of Python numbers)."""
    return type(value) is bool or (isinstance(value, Node) and value.tensor is None
                                   and value.meta == "bool")  # fmt: skip


class Printer:
    """Turns nodes and constant arguments into Python text; binds non-literals in ``ns``."""

    # whether a for loop's function returns () when it ran no iteration (`loop_nodes`)
    empty_loop_tail = True
    # whether a for loop node in a loop body prints as the body's own for statement
    # (`inline_loops`); ``loop_depth`` counts the loop bodies being printed
    inline_loops = True
    loop_depth = 0

    def errstate(self, settings: dict) -> str | None:
        """The statement that runs the statements after it under ``np.errstate(**settings)``
        (None: none needed)."""
        return f"with np.errstate(**{settings!r}):"

    def first_index(self, loop_node: Node | None) -> str:
        """How a for loop's function spells its first index: its parameter."""
        return FIRST

    def loop_prologue(self, loop, first: str) -> list[str]:
        """Statements a for loop's function runs before its loop, once per call (``first``:
        its first index as `first_index` spells it), after its body was printed: none here."""
        return []

    def lines_of(self, node: Node) -> list[tuple[str, Node | None]] | None:
        """The lines ``node`` prints as, each with the node it is for (None: a line of no
        node's), where a printer prints some nodes otherwise than as their one statement each
        (None: its statement)."""
        return None

    def __init__(self, ns: dict):
        self.ns = ns
        self.bound: dict[int, str] = {id(v): k for k, v in ns.items()}
        # id(node) -> its text where it stands for another value: a cond node's side printed
        # inline reads its inputs as the enclosing function's values
        self.aliases: dict[int, str] = {}

    def statement(self, node: Node, buffer: Node | None = None, loop_function: str = "") -> str:
        """The node's statement; a loop or cond node's calls its function ``loop_function``."""
        if node.op in BODY_OPS:
            return f"{node.name} = {loop_function}({self.call_args(node.args, {})})"
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

    def test(self, node: Node) -> str:
        """The node's value as an ``if`` tests it: NumPy's bool of a Python bool as that bool
        (its truth is the same; no conditional expression making the singleton)."""
        if node.target is np.bool_ and len(node.args) == 1 and not node.kwargs \
                and _python_bool(node.args[0]):  # fmt: skip
            return self.arg(node.args[0])
        return self.expression(node)

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
        if target is np.bool_ and len(args) == 1 and not kwargs and _python_bool(args[0]):
            # NumPy's bool of a Python bool (`a and n < m` tested): its singletons, no type call
            return f"(np.True_ if {self.arg(args[0])} else np.False_)"
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
        if name is None and getattr(builtins, getattr(target, "__name__", ""), None) is target:
            name = target.__name__  # ``int(v)``: no node takes a builtin's name (`graph`)
        return name if name is not None else self.bind(target, getattr(target, "__name__", "fn"))

    def arg(self, value) -> str:
        if isinstance(value, Node):
            return self.aliases.get(id(value), value.name)
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


# NumPy's index tricks are objects (``np.mgrid[0:n]`` indexes one), nameless: id -> text
INDEX_TRICKS = {id(getattr(np, name)): f"np.{name}" for name in ("mgrid", "ogrid", "r_", "c_")}


def numpy_name(obj) -> str | None:
    """``np.<path>`` text for NumPy's public functions, ufuncs, ufunc methods and types."""
    if isinstance(obj, np.dtype):
        return f"np.dtype({obj.str!r})" if obj.isbuiltin else None
    if isinstance(obj, types.BuiltinMethodType) and isinstance(obj.__self__, np.ufunc):
        base = numpy_name(obj.__self__)
        return f"{base}.{obj.__name__}" if base else None
    name = getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return INDEX_TRICKS.get(id(obj))
    for prefix, module in (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft)):
        # (the module's dict: NumPy's __getattr__ warns for some names, ``np.str``)
        if vars(module).get(name) is obj:
            return f"{prefix}.{name}"
    return None


def comment(node: Node) -> str:
    where = node.stack[-1] if node.stack else None
    loc = (
        f"  {file_labels.label(where.filename)}:{where.lineno} in {where.funcname}" if where else ""
    )
    return f"{node.meta}{loc}"
