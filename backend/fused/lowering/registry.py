"""The rules, by what they lower (as TorchInductor's ``register_lowering``).

``@lowers(np.where)`` registers ``rule(lowering, node)`` for calls of NumPy callables (functions,
ufuncs, ufunc methods such as ``np.add.at``, ndarray methods); ``@lowers(kind=REDUCTION)`` for
the calls of a `lowering_kinds` kind that no callable names (every ufunc, every reduction);
``@lowers(kind=VIEW, op="getitem")`` for the nodes of another op. `find` is the walk's lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tcompile.tracer.ir.node import Node

from ... import lowering_kinds
from ..dtypes import Unlowerable
from .shared import describe


@dataclass(frozen=True)
class Rule:
    """A registered lowering: ``fn(lowering, node)`` gives the node's value. ``host_args``: it
    lowers calls whose arguments are all host values too (others run those on the host)."""

    fn: Callable
    host_args: bool = False

    def __call__(self, lowering, node: Node):
        return self.fn(lowering, node)


_BY_TARGET: dict[object, Rule] = {}
_BY_KIND: dict[tuple[str, str], Rule] = {}  # (node op, lowering kind) -> rule


def lowers(*targets, kind: str | None = None, op: str = "call", host_args: bool = False):
    """Register the decorated function for calls of ``targets``, and for the ``op`` nodes of
    ``kind`` that no registered callable names."""

    def register(fn: Callable) -> Callable:
        rule = Rule(fn, host_args)
        for target in targets:
            _add(_BY_TARGET, target, rule)
        if kind is not None:
            _add(_BY_KIND, (op, kind), rule)
        return fn

    return register


def _add(table: dict, key, rule: Rule) -> None:
    if key in table:
        raise ValueError(f"{key!r} is lowered twice: {table[key].fn.__name__}, {rule.fn.__name__}")
    table[key] = rule


def find(node: Node) -> Rule | None:
    """The rule for ``node``: its callable's, else its op's and kind's; None: not lowered."""
    if node.op == "call":
        rule = _for_target(node.target)
        if rule is not None:
            return rule
    return _BY_KIND.get((node.op, lowering_kinds.lowering_kind(node.op, node.target, node.args)))


def _for_target(target) -> Rule | None:
    try:
        return _BY_TARGET.get(target)
    except TypeError:  # an unhashable callable
        return None


def for_kind(kind: str, op: str = "call") -> Rule | None:
    return _BY_KIND.get((op, kind))


def targets() -> dict[object, Rule]:
    """Every registered callable, with its rule."""
    return dict(_BY_TARGET)


def not_lowered(node: Node, kind: str | None = None) -> Unlowerable:
    """Why ``node`` has no rule (the extern's reason)."""
    kind = kind or lowering_kinds.lowering_kind(node.op, node.target, node.args)
    return Unlowerable(f"{describe(node)} is not lowered to kernels ({kind})")
