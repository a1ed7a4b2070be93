"""How many bits a Python int of a loop body may need: index arithmetic that provably fits
numba's int64 is compiled as it is, the rest is checked for overflow (`native_source`).

A loop's counter is bounded: the loop runs as machine code only when its first and last index
fit `COUNTER_BITS` bits (`native_loops` checks that per call), and a nested loop's counter is
bounded by the values its range was made of. A dim of an array fits `SIZE_BITS`. From there,
``i + 1`` needs one bit more than ``i``, ``i * n`` the bits of both. A Python int the loop
carries and only counts up by constants (``n += 1``, in a branch or not: `carried_steps`) is
bounded too, where it starts within `COUNTER_BITS` bits (checked per call): by its start plus
its step times the count. Any other value of unknown size (a number passed in, an int carried
otherwise) has no bound.
"""

from __future__ import annotations

from tcompile.tracer.ir import operators
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.loop_nodes import LOOP_OPS, ForLoop
from tcompile.tracer.ir.node import Node

COUNTER_BITS = 52
SIZE_BITS = 48  # no machine holds an array with a dim of 2**48 elements
INT64_BITS = 63  # magnitude bits of an int64


class IntRanges:
    """The bits each Python int of a loop's body (and of the loops inside it) may need."""

    def __init__(self, loop):
        self.known: dict[int, int | None] = {}
        self.counters: dict[int, tuple | None] = {}  # a counter's node -> (first, count) args
        self.passed: dict[int, object] = {}  # a nested body's input read, never reassigned ->
        # the value the enclosing body passes for it
        # a carried int that counts up by a constant step -> the step's bits
        self.stepped: dict[int, int] = {}
        if isinstance(loop, ForLoop):
            self.counters[id(loop.body.inputs[0])] = None  # bounded by the per-call check
            for start, step in carried_steps(loop).items():
                self.stepped[id(loop.body.inputs[1 + start])] = step.bit_length()
        self._nested(loop.body)

    def _nested(self, body) -> None:
        for node in body.nodes:
            if isinstance(node.target, Cond):  # a side's inputs are the node's arguments
                for side in node.target.bodies:
                    self.passed.update((id(i), a) for i, a in zip(side.inputs, node.args[1:]))
                    self._nested(side)
            if node.op not in LOOP_OPS:
                continue
            loop = node.target
            if isinstance(loop, ForLoop):
                self.counters[id(loop.body.inputs[0])] = tuple(node.args[:2])
            # the loop node's arguments: (first, count) or (cond), then its body's own inputs
            own = node.args[2 if isinstance(loop, ForLoop) else 1 :]
            inputs = loop.body.inputs[loop.index_inputs :]
            for position in range(loop.carried, len(inputs)):
                self.passed[id(inputs[position])] = own[position]
            self._nested(loop.body)

    def bits(self, value) -> int | None:
        """Magnitude bits ``value`` may need (None: unbounded)."""
        if type(value) is bool:
            return 1
        if type(value) is int:
            return value.bit_length()
        if not isinstance(value, Node):
            return None
        key = id(value)
        if key not in self.known:
            self.known[key] = self._bits_of(value)
        return self.known[key]

    def _bits_of(self, node: Node) -> int | None:
        if id(node) in self.passed:
            return self.bits(self.passed[id(node)])
        if id(node) in self.stepped:  # at most its start plus count times its step
            return max(COUNTER_BITS, self.stepped[id(node)] + COUNTER_BITS) + 1
        if id(node) in self.counters:
            bounds = self.counters[id(node)]
            if bounds is None:
                return COUNTER_BITS
            first, count = (self.bits(v) for v in bounds)
            return None if first is None or count is None else max(first, count) + 1
        if node.op == "getitem" and getattr(node.args[0], "op", None) == "attr" \
                and node.args[0].target == "shape":  # fmt: skip
            return SIZE_BITS
        if node.op == "call" and node.target is len:
            return SIZE_BITS
        name = _op(node)
        if name is None:
            return None
        a, b = (self.bits(v) for v in node.args)
        if a is None or b is None:
            return None
        return {"add": max(a, b) + 1, "sub": max(a, b) + 1, "mul": a + b,
                "floordiv": a, "mod": b}.get(name)  # fmt: skip

    def fits(self, node: Node) -> bool:
        """Whether ``node``'s value surely fits an int64."""
        bits = self.bits(node)
        return (bits is not None and bits <= INT64_BITS - 1) or self._range_item(node)

    def _range_item(self, node: Node) -> bool:
        """``k + start`` in a loop over ``range(start, stop)`` inside the loop (its count
        computed as the tracer does, ``stop - start``, from a first index of 0): a value from
        ``start`` up to ``stop``, two ints of the graph, so within int64."""
        if _op(node) != "add" or id(node.args[0]) not in self.counters:
            return False
        counter, start = node.args
        first, count = self.counters[id(counter)] or (None, None)
        start = self.passed.get(id(start), start)
        return first == 0 and _op(count) == "sub" and count.args[1] is start


def carried_steps(loop: ForLoop) -> dict[int, int]:
    """The carried values (by position among them) that are Python ints each iteration moves up
    by at most a constant (``n += 1``; ``if c: n += 2``), with that most."""
    body, found = loop.body, {}
    carried = body.inputs[1 : 1 + loop.carried]
    ends = loop.returned()[: loop.carried]  # (after them, values made in the body)
    for position, (start, end) in enumerate(zip(carried, ends, strict=True)):
        step = _step(start, end) if start.meta == "int" else None
        if step is not None:
            found[position] = step
    return found


def _step(start: Node, value) -> int | None:
    """How much ``value`` exceeds ``start`` at most, where it is ``start`` plus constants
    (through the sides of cond nodes); None where it is anything else."""
    if value is start:
        return 0
    if not isinstance(value, Node):
        return None
    op = operators.of_function(value.target) if value.op == "call" else None
    if op is not None and op.name == "add" and len(value.args) == 2:
        low, high = value.args
        if type(high) is int and high >= 0:
            inner = _step(start, low)
        elif type(low) is int and low >= 0:
            low, high = high, low
            inner = _step(start, low)
        else:
            return None
        return None if inner is None else inner + high
    if value.op == "getitem" and isinstance(getattr(value.args[0], "target", None), Cond):
        return _cond_step(start, value.args[0], value.args[1])
    return None


def _cond_step(start: Node, cond_node: Node, item: int) -> int | None:
    """The most either side of a cond node adds to ``start`` in its item ``item``."""
    arguments = cond_node.args[1:]
    if not any(a is start for a in arguments):
        return None
    position = next(k for k, a in enumerate(arguments) if a is start)
    steps = [_step(body.inputs[position], body.output.args[0][item])
             for body in cond_node.target.bodies]  # fmt: skip
    return None if None in steps else max(steps)


def _op(value) -> str | None:
    """The name of the operator a call node of two arguments applies, else None."""
    if not isinstance(value, Node) or value.op != "call" or len(value.args) != 2:
        return None
    op = operators.of_function(value.target)
    return op.name if op is not None else None
