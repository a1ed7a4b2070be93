"""Stack effects of instructions, and a value followed through a straight run of normalised
instructions (`reader`): which stack slots and locals hold it, or what is computed from it.

The counts come from ``dis.stack_effect``; what happens to the popped values is one of a few
roles (an operator combines them into its result, a load or a build consumes them, ``POP_TOP``
drops them), and only the instructions that move slots, name them or call are special cases.
"""

from __future__ import annotations

import dis

from . import features

# Normalised forms missing from this version's opcode table, and an opcode with their effect
_SAME_EFFECT = {"UNARY_POSITIVE": "UNARY_NEGATIVE"}  # 3.12+: CALL_INTRINSIC_1


def net_effect(opname: str, arg: int | None = None, jump: bool = False) -> int:
    """The net stack effect of an instruction, original or normalised (``CALL_KW`` is 3.13's
    form: the keyword names below it count)."""
    if opname == "CALL_KW" and opname not in dis.opmap:
        return net_effect("CALL", arg) - 1
    if opname == "CALL" and features.HAS_PRECALL:
        return -(arg + 1)  # 3.11: what its PRECALL pops is counted here
    opcode = dis.opmap[_SAME_EFFECT.get(opname, opname)]
    return dis.stack_effect(opcode, arg if opcode >= dis.HAVE_ARGUMENT else None, jump=jump)


def normalised_effect(inst) -> int:
    """`net_effect` of a normalised instruction, whose ``arg`` is resolved: only a count is
    passed on (not a name, an operator's text, a constant), and a load's ``push_null`` adds
    its NULL."""
    arg = inst.arg if type(inst.arg) is int and inst.opname != "LOAD_CONST" else 0
    return net_effect(inst.opname, arg) + (inst.push_null is not None)


# -- a value followed ------------------------------------------------------------------------
# The stack a scan runs on: TRACKED marks a slot holding the value (or one computed from it),
# UNTRACKED any other pushed during the scan; below them, whatever the frame holds.
# BOUND: a method of the value that uses it up whole (``x[m].sum``): its call's result is new.
TRACKED, UNTRACKED, BOUND = True, False, "bound"


def tracked(slot) -> bool:
    return slot is TRACKED or slot is BOUND


def _pop(stack: list, count: int) -> list:
    """The top ``count`` slots, removed; top first."""
    return [stack.pop() for _ in range(count)]


def _pushes(inst) -> int:
    return 1 + (inst.push_null is not None)


def _combine(inst, stack: list, names: set, opaque) -> bool:
    """An operator: its result is computed from the value if an operand is."""
    stack.append(any(map(tracked, _pop(stack, 1 - normalised_effect(inst)))))
    return True


def _consume(inst, stack: list, names: set, opaque) -> bool:
    """A load or a build: what it pops must not be the value (indexed, put in a container, an
    attribute read)."""
    if any(map(tracked, _pop(stack, _pushes(inst) - normalised_effect(inst)))):
        return False
    stack.extend([UNTRACKED] * _pushes(inst))
    return True


def _drop(inst, stack: list, names: set, opaque) -> bool:
    _pop(stack, -normalised_effect(inst))
    return True


def _load_fast(inst, stack: list, names: set, opaque) -> bool:
    stack.append(inst.arg in names)
    return True


def _store_fast(inst, stack: list, names: set, opaque) -> bool:
    (names.add if tracked(stack.pop()) else names.discard)(inst.arg)
    return True


def _delete_fast(inst, stack: list, names: set, opaque) -> bool:
    names.discard(inst.arg)
    return True


def _copy(inst, stack: list, names: set, opaque) -> bool:
    stack.append(stack[-inst.arg])
    return True


def _swap(inst, stack: list, names: set, opaque) -> bool:
    stack[-1], stack[-inst.arg] = stack[-inst.arg], stack[-1]
    return True


def _call(inst, stack: list, names: set, opaque) -> bool:
    """A call: its result is taken to hold the value passed to it; the value called, a method
    of it, or the value passed to a callable that would see it itself (``opaque``), is lost."""
    popped = _pop(stack, 1 - normalised_effect(inst))
    args, fn = popped[inst.opname == "CALL_KW" : -2], popped[-2:]
    if BOUND in fn and not any(map(tracked, args)):
        stack.append(UNTRACKED)  # a number or a new array computed from the whole value
        return True
    passed = any(map(tracked, args))
    if any(map(tracked, fn)) or (passed and any(map(opaque, fn))):
        return False
    stack.append(passed)
    return True


def _store_subscr(inst, stack: list, names: set, opaque) -> bool:
    """``container[key] = value``: the value may be stored, not be the key or the container."""
    key, container, _value = _pop(stack, 3)
    return not (tracked(key) or tracked(container))


_ROLES = {
    **dict.fromkeys(("BINARY_OP", "COMPARE_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE",
                     "UNARY_INVERT"), _combine),
    **dict.fromkeys(("LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE", "PUSH_NULL",
                     "LOAD_ASSERTION_ERROR", "LOAD_GLOBAL", "LOAD_ATTR", "BINARY_SUBSCR",
                     "BUILD_TUPLE", "BUILD_LIST", "BUILD_SLICE"), _consume),
    **dict.fromkeys(("LOAD_FAST", "LOAD_FAST_AND_CLEAR"), _load_fast),
    **dict.fromkeys(("CALL", "CALL_KW"), _call),
    "POP_TOP": _drop, "STORE_FAST": _store_fast, "DELETE_FAST": _delete_fast, "COPY": _copy,
    "SWAP": _swap, "STORE_SUBSCR": _store_subscr,
}  # fmt: skip


def step(inst, stack: list, names: set, opaque, methods: frozenset = frozenset()) -> bool:
    """Run the normalised ``inst`` on a scan's ``stack``; ``names``: the locals holding the
    value. ``opaque(slot)``: whether a callable would see the value itself rather than what
    it holds; ``methods``: the value's methods whose call uses it up whole, its result new
    (``x[m].sum()``). False where the value would go somewhere this does not follow (a jump,
    a store elsewhere, an instruction without a role)."""
    if inst.opname == "LOAD_ATTR" and inst.push_null is not None and inst.arg in methods:
        if stack[-1] is TRACKED:  # the method itself, called next (NULL below it)
            stack.pop()
            stack.extend([UNTRACKED, BOUND])
            return True
    role = _ROLES.get(inst.opname)
    return role is not None and role(inst, stack, names, opaque)
