"""Example values: the real NumPy values a trace computes with, kept as eager code would see them.

Tracing runs every operation on example values, so shapes, dtypes and NumPy scalar types are
NumPy's own. The examples of graph inputs are the caller's arrays, which tracing must never
write. An operation that writes into an array (``x += 1``, ``out=``, ``x[i] = v``) therefore
runs for real on its example, and when that example's memory belongs to the caller, the block
of memory is first copied and every example viewing it is re-pointed at the copy, with the same
offsets, strides and flags: later reads, and views made before the write, see the written
values exactly as eager code would, and the caller's arrays stay untouched.

Memory is tracked as byte ranges (`numpy.lib.array_utils.byte_bounds`), not ``.base`` chains,
so any view of a block is found, whatever made it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserErrorInTrace
from ..ir import quiet
from ..values.arrays import ArrayValue, NumpyValue, ScalarValue, SymFloat, SymInt, is_dynamic_number
from ..values.containers import TupleValue, leaves, rebuild
from ..values.core import Const, Obj

try:  # NumPy >= 2.0
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # pragma: no cover - NumPy 1.26
    from numpy import byte_bounds

_ALIGN = 64  # copies keep the original's address modulo this, so alignment is preserved


@dataclass(eq=False)
class Block:
    """A block of memory the caller owns, and (once written) the trace's private copy."""

    low: int
    high: int
    inputs: list = field(default_factory=list)  # (input value, caller's writeable flag)
    copy: np.ndarray | None = None  # uint8 buffer holding the private copy
    # id of an example re-pointed at the copy -> (that example, its view of the copy): one
    # array reached again later (``o.b`` after a write through ``o.a``, the same array) gets
    # the same view, so that ``o.a is o.b`` still holds (kept, the example keeps its id)
    rebased: dict = field(default_factory=dict)

    def contains(self, low: int, high: int) -> bool:
        return self.low <= low and high <= self.high

    def overlaps(self, low: int, high: int) -> bool:
        return low < self.high and self.low < high


class ExampleMemory:
    """The examples of one trace's array values, and the caller's memory behind them."""

    def __init__(self):
        # every ArrayValue of the trace, whose example may be re-pointed, held weakly: a value
        # the trace no longer holds lets go of its example, as eager code frees a temporary
        self.values: list[weakref.ref] = []
        self.blocks: list[Block] = []

    def add_input(self, value) -> None:
        """An array read from the caller (argument, global, attribute...)."""
        low, high = _bounds(_owner(value.example))
        block = next((b for b in self.blocks if b.contains(low, high)), None)
        if block is None:
            block = Block(low, high)
            for other in [b for b in self.blocks if b.copy is None and b.overlaps(low, high)]:
                # the same memory reached through unrelated owners (np.frombuffer twice)
                block.low, block.high = min(block.low, other.low), max(block.high, other.high)
                block.inputs += other.inputs
                self.blocks.remove(other)
            self.blocks.append(block)
        block.inputs.append((value, bool(value.example.flags.writeable)))
        if block.copy is not None:  # read after the block was written: see the written values
            value.example = _rebase(value.example, block)
        self.values.append(weakref.ref(value))

    def add(self, value) -> None:
        """An array computed in the trace (its memory may still be the caller's: a view)."""
        self.values.append(weakref.ref(value))

    def release(self) -> None:
        """Let go of every example once the compile is done with them. A trace's state is
        held in reference cycles (closures, translators, values that name the state), which
        the garbage collector frees only when it runs: until then its examples, arrays of the
        caller's sizes, stayed in memory (nine 64 MB temporaries after a chunk's first call)."""
        for value in self.live():
            value.example = None
        self.values.clear()
        self.blocks.clear()

    def live(self) -> list:
        """The trace's array values still held (dead ones forgotten)."""
        found = [v for ref in self.values if (v := ref()) is not None]
        self.values = [weakref.ref(v) for v in found]
        return found

    def block_of(self, example: np.ndarray) -> Block | None:
        """The caller's block ``example`` views (its private copy, once written), if any."""
        low, high = _bounds(example)
        for block in self.blocks:
            if block.contains(low, high):
                return block
            if block.copy is not None:
                copy_low = _address(block.copy)
                if copy_low <= low and high <= copy_low + (block.high - block.low):
                    return block
        return None

    def prepare_write(self, value) -> Block | None:
        """Make ``value``'s example safe to write; returns the caller's block it belongs to."""
        block = self.block_of(value.example)
        if block is not None and block.copy is None:
            block.copy = _clone(block)
            for v in self.live():
                if block.contains(*_bounds(v.example)):
                    v.example = _rebase(v.example, block)
        return block


def _owner(array: np.ndarray) -> np.ndarray:
    """The array owning ``array``'s memory (the end of its chain of ndarray bases)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _bounds(array: np.ndarray) -> tuple[int, int]:
    low, high = byte_bounds(array)
    return low, max(high, low + 1)  # empty arrays still occupy an address


def _clone(block: Block) -> np.ndarray:
    size = block.high - block.low
    raw = np.empty(size + _ALIGN, np.uint8)
    shift = (block.low - _address(raw)) % _ALIGN
    copy = raw[shift : shift + size]
    copy[...] = np.asarray(_Memory(block.low, size))
    return copy


def _rebase(example: np.ndarray, block: Block) -> np.ndarray:
    """The same view of ``block``'s private copy (same offset, shape, strides, flags), one
    per example: the same array is the same view."""
    key = id(example)
    if key not in block.rebased:
        offset = _address(example) - block.low
        view = np.ndarray(example.shape, example.dtype, buffer=block.copy, offset=offset,
                          strides=example.strides)  # fmt: skip
        view.flags.writeable = example.flags.writeable
        block.rebased[key] = (example, view)
    return block.rebased[key][1]


class _Memory:
    """A read-only buffer over raw memory of the caller's (only to copy it)."""

    def __init__(self, address: int, size: int):
        self.__array_interface__ = {
            "data": (address, True),
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


# -- running an operation on examples ------------------------------------------------------


def as_example(value, replace: dict | None = None):
    """The example object for a symbolic value (``replace``: id(value) -> another example)."""

    def example(v):
        if replace and id(v) in replace:
            return replace[id(v)]
        if isinstance(v, NumpyValue):
            return v.example
        if isinstance(v, (SymInt, SymFloat)):
            return v.hint
        return v.value if isinstance(v, (Const, Obj)) else v

    return rebuild(value, example)


def apply(op: str, target, args: tuple, kwargs: dict, noted: list | None = None):
    """Run one operation on examples, quietly (its warnings belong to the real run); a
    warning or fp error that came is added to ``noted``."""
    with quiet.noting() as seen:
        try:
            return _apply(op, target, args, kwargs)
        finally:
            if noted is not None and seen:
                noted.append(f"{seen[0]} while tracing")


def _apply(op: str, target, args: tuple, kwargs: dict):
    if op == "call":
        return target(*args, **kwargs)
    if op == "method":
        return getattr(args[0], target)(*args[1:], **kwargs)
    if op == "attr":
        return getattr(args[0], target)
    if op == "getitem":
        return args[0][args[1]]
    if op == "setitem":
        args[0][args[1]] = args[2]
        return None
    if op == "inplace":
        return target(args[0], args[1])
    raise AssertionError(op)


def traced_leaves(obj) -> list:
    """The array and NumPy-scalar values inside an operation's arguments, and the dynamic
    Python numbers (`is_dynamic_number`)."""
    return [
        v for v in leaves(obj) if isinstance(v, (ArrayValue, ScalarValue)) or is_dynamic_number(v)
    ]


def run_with_stand_ins(op: str, target, args: tuple, kwargs: dict, writes: list,
                       noted: list | None = None, wrap_indices: bool = False):  # fmt: skip
    """Run the operation on its examples; if that raises, on stand-ins of the same shapes,
    dtypes and flags (zeros, then identity matrices, then random values) for the arguments it
    does not write; with ``wrap_indices``, first with the traced ints of an item index wrapped
    into the array's dims (`_wrapped_indices`).

    An operation can fail on these particular values (``np.linalg.inv`` of a singular matrix,
    an out-of-range index) yet succeed on others: the graph must still hold it, and it raises
    at run time exactly where eager code does. Only when every stand-in fails too does the
    error belong to the shapes and types the guards fix: `UserErrorInTrace`. ``noted``: why
    the example is not what the operation gives the caller (a warning came, a stand-in's).
    """
    try:
        return apply(op, target, as_example(args), as_example(kwargs), noted)
    except Exception as error:
        first = error
    if noted is not None:
        noted.append("an example computed on stand-ins")
    replace = _wrapped_indices(op, args) if wrap_indices else None
    if replace:  # first: no array is copied for an index out of range
        try:
            return apply(op, target, as_example(args, replace), as_example(kwargs, replace))
        except Exception:  # noqa: BLE001, S110 - not the index's: try the arrays' stand-ins
            pass
    readable = [v for v in traced_leaves((args, kwargs))
                if isinstance(v, NumpyValue) and not any(v is w for w in writes)]  # fmt: skip
    if readable:
        for make in (np.zeros_like, _eye_like, _random_like):
            replace = {id(v): _stand_in(v.example, make) for v in readable}
            try:
                return apply(op, target, as_example(args, replace), as_example(kwargs, replace))
            except Exception:  # noqa: S112 - try the next kind of stand-in
                continue
    raise UserErrorInTrace(first) from first


def _wrapped_indices(op: str, args: tuple) -> dict:
    """For ``a[i, j]`` (read or written) whose index holds traced ints: each int's hint taken
    modulo its dim, by id. In a loop body traced on an index the loop never reaches (``for j in
    range(i + 1, n)`` when ``i + 1 == n``: no iteration, ``j``'s example is ``n``) the item read
    has no example of its own; any in-range item has its dtype. The body's writes are undone
    after its trace (`loops.loop_body.Watch`), so a written stand-in item is too."""
    if op not in ("getitem", "setitem") or not isinstance(args[0], ArrayValue):
        return {}
    shape, index = args[0].example.shape, args[1]
    items = index.items if isinstance(index, TupleValue) else [index]
    if len(items) > len(shape):
        return {}
    return {
        id(item): item.hint % size
        for item, size in zip(items, shape)
        if isinstance(item, SymInt) and size > 0
    }


def _stand_in(example, make):
    if isinstance(example, np.generic):
        return make(np.asarray(example))[()]
    made = make(example)
    made.flags.writeable = example.flags.writeable
    return made


def _eye_like(example: np.ndarray) -> np.ndarray:
    if example.ndim >= 2 and example.shape[-1] == example.shape[-2]:
        eye = np.broadcast_to(np.eye(example.shape[-1], dtype=example.dtype), example.shape)
        return np.array(eye, order="K")
    return np.ones_like(example)


def _random_like(example: np.ndarray) -> np.ndarray:
    values = np.random.default_rng(0).standard_normal(example.shape)
    return np.asarray(values).astype(example.dtype)


def value_dependent_shape(op: str, target, args: tuple, kwargs: dict, result, leaves) -> bool:
    """Whether the result's shape or dtype changes when the traced numbers ``leaves`` among
    the arguments change (``np.arange(n[0])``, ``np.zeros(counts.max())``, ``np.repeat(x,
    counts)``): such a size must not be baked into the graph. Checked by running the operation
    again on nudged values (`_nudged_result`)."""
    if not any(_is_size_like(as_example(v)) for v in leaves):
        return False
    other = _nudged_result(op, target, args, kwargs, leaves)
    return other is _RAISED or _layout(other) != _layout(result)


def sizes_follow_data(op: str, target, args: tuple, kwargs: dict, result, leaves) -> bool:
    """Whether, where the result's layout follows the traced numbers ``leaves``
    (`value_dependent_shape`), only its sizes do: one array whose dtype and rank stay. Not a
    list whose length follows them (``np.array_split(x, n[0])``), nor a dtype."""
    if type(result) is not np.ndarray:
        return False
    other = _nudged_result(op, target, args, kwargs, leaves)
    return type(other) is np.ndarray and other.dtype == result.dtype and other.ndim == result.ndim


_RAISED = object()  # every nudge made the operation raise


def _nudged_result(op: str, target, args: tuple, kwargs: dict, leaves):
    """The operation run again with the size-like ``leaves`` nudged (+1, else +2, else -1
    where the others make it raise: an index at the end), or `_RAISED`."""
    nudged = [v for v in leaves if _is_size_like(as_example(v))]
    for step in (1, 2, -1):
        replace = {id(v): _nudge(as_example(v), step) for v in nudged}
        try:
            return apply(op, target, as_example(args, replace), as_example(kwargs, replace))
        except Exception:  # noqa: S112 - these values are invalid here; try others
            continue
    return _RAISED


def _layout(result):
    """What of a result the graph takes as fixed: its structure, shapes and dtypes."""
    if isinstance(result, (np.ndarray, np.generic)):
        return np.shape(result), result.dtype
    if isinstance(result, (tuple, list)):
        return type(result), tuple(_layout(item) for item in result)
    return type(result)


def _is_size_like(example) -> bool:
    """Numbers, 0-d arrays of numbers, and arrays of integers or bools, can be sizes."""
    if type(example) in (bool, int, float):  # a bool: a comparison of dynamic numbers
        return True
    kind = example.dtype.kind
    if isinstance(example, np.generic) or example.ndim == 0:
        return kind in "biuf"
    return kind in "biu"


def _nudge(example, step: int):
    if type(example) is bool:
        return not example if step != 2 else example
    if type(example) in (int, float):
        return example + step
    if example.dtype.kind == "b":
        return ~example if step != 2 else example
    return example + np.asarray(step, dtype=example.dtype)
