"""Values of the graph: arrays and NumPy scalars (`NumpyValue`, with an ``example`` of their
kind), dynamic sizes (`SymInt`), dynamic float arguments (`SymFloat`) and text made of them
(`SymStr`); and what hangs off an array before it is used (``arr.sum``, ``arr.flags``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.node import Node
from .core import NotConstant, Value
from .source import Source


class GraphValue(Value):
    """A value the graph computes or takes as an input: ``node`` is its node."""

    node: Node

    def graph_arg(self):
        return self.node

    def rebuild_text(self, rb) -> str:
        return rb.output(self.node, self)


class NumpyValue(GraphValue):
    """An ndarray or NumPy scalar of the graph; ``example`` is a real value of its kind."""

    example: object


@dataclass(eq=False)
class ArrayValue(NumpyValue):
    node: Node
    example: np.ndarray
    source: Source | None = None
    # For each dim: None if static, else the SymInt standing for it (graph inputs only).
    sym_dims: tuple | None = None
    device: bool = False  # a device array (torch, CuPy) traced as the NumPy array of its data

    def python_type(self) -> type:
        return np.ndarray

    def describe(self) -> str:
        return f"ndarray {self.node.meta}"


@dataclass(eq=False)
class ScalarValue(NumpyValue):
    node: Node
    example: np.generic
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.example)


@dataclass(eq=False)
class FloatOrFloat64(ScalarValue):
    """A Python float or a NumPy float64, which of the two known only when the graph runs: a
    float a loop carries, made a float64 by its first iteration, after a loop that may run no
    iteration (``total = 0.0``, then ``total += v[j]`` over a row of a CSR matrix). Traced as
    the float64; only the uses that give one result for both take it (`loops.either_float`)."""


@dataclass(eq=False)
class SymInt(GraphValue):
    """An int known only at run time: a size, a captured loop's index, or an int argument seen
    with a second value (automatic dynamic ints). ``deps``: the (input source name, dim) pairs
    it is made of, or None when it comes from an intermediate array (then concretising it
    restarts the trace with static shapes). ``on_concrete``: what runs when the trace needs its
    value as a Python int: pin an int argument with a value guard, or, for a loop index, give
    up capturing the loop. ``branch``: a comparison in a split loop's body
    (`operations.number_compare`), or made of one, whose truth is a break rather than a guard;
    its ``hint`` is a bool (a bool is an int: its Python type is the hint's). An input's dynamic
    dim (``deps`` one pair) is guarded to be at least 2 (``at_least``)."""

    node: Node
    hint: int
    deps: frozenset | None
    source: Source | None = None
    on_concrete: tuple = ()
    branch: bool = False
    at_least: int = 0  # a bound its guards assure: an input's dynamic dim is at least 2

    def python_type(self) -> type:
        return type(self.hint)

    def constant(self) -> int:
        if self.deps != frozenset():  # input dims: `operations.concretize` specialises them
            raise NotConstant(self)
        for callback in self.on_concrete:
            callback()
        return self.hint

    def guard_value(self) -> None:
        """Pin it: a dynamic float computed from it (``1.0 / (i + 1)``) is needed as a number."""
        self.constant()


@dataclass(eq=False)
class SymFloat(GraphValue):
    """A Python float argument traced as a graph input (automatic dynamic floats), or float
    arithmetic on such inputs. NumPy calls and ``+ - * /`` keep it symbolic; any other use
    needs its value and pins the ``inputs`` it is made of with value guards (`pin`)."""

    node: Node
    hint: float
    inputs: tuple = ()  # the input SymFloats (and SymInts) it is computed from
    source: Source | None = None
    guard_value: object = None  # inputs only: adds the guard pinning the value

    @classmethod
    def leaf(cls, node: Node, hint: float, guard_value, source: Source | None = None) -> SymFloat:
        """A float made of nothing else (an input, a loop's carried or resulting float): it is
        its own input, and ``guard_value`` is what pinning it does."""
        value = cls(node, hint, source=source, guard_value=guard_value)
        value.inputs = (value,)
        return value

    def python_type(self) -> type:
        return float

    def pin(self) -> float:
        for value in self.inputs:
            value.guard_value()
        return self.hint

    def constant(self) -> float:
        return self.pin()


@dataclass(eq=False)
class SymStr(GraphValue):
    """A str the graph makes of dynamic numbers (``f"{err:.3e}"``, ``str(k)``), or a str input
    seen with a second value (the text an f-string had made before a break, handed to the
    resume function): it leaves the graph as it is (printed after a break, say) with no value
    guard; any other use needs its value, and pins the numbers it is made of (``pins``)."""

    node: Node
    hint: str
    pins: tuple = ()
    source: Source | None = None  # a str input (seen with a second value): where it is read

    def python_type(self) -> type:
        return str

    def constant(self) -> str:
        for pin in self.pins:
            pin()
        return self.hint


@dataclass(eq=False)
class ArrayMethod(Value):
    """``arr.name`` (or a NumPy scalar's method) before it is called."""

    self_value: Value
    name: str

    def python_type(self) -> type:
        return type(np.zeros(0).sum)

    def made_text(self, rb) -> str:
        return f"{rb.expr(self.self_value)}.{self.name}"


@dataclass(eq=False)
class ArrayFlags(Value):
    """``arr.flags``: read from the example's flags; writes become ``arr.setflags(...)``."""

    array: Value

    def python_type(self) -> type:
        return type(np.zeros(0).flags)

    def describe(self) -> str:
        return f"flags of {self.array.describe()}"

    def made_text(self, rb) -> str:
        return f"{rb.expr(self.array)}.flags"


def is_dynamic_number(v) -> bool:
    """A dynamic float, or an int argument or loop index: symbolic numbers whose values a
    graph may use but a size must not (sizes of input dims are symbolic in their own way)."""
    return isinstance(v, SymFloat) or (isinstance(v, SymInt) and v.deps == frozenset())
