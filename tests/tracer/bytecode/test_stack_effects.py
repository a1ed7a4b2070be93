"""Stack effects (tracer/bytecode/stack_effects.py) on the bytecode of the running CPython
(3.11, 3.12 or 3.13): every normalised instruction's effect adds up to the stack each function
really has, and a value read by a subscript is followed to where it is used up or lost."""

from __future__ import annotations

import dis

import pytest

from tcompile.tracer.bytecode import analysis, instructions, reader, stack_effects
from tcompile.tracer.bytecode.stack_effects import TRACKED, UNTRACKED


def calls(a, b, np):
    return np.add(a, b, out=a, where=b), len(a), sorted(b, key=abs, reverse=True)


def operators(a, b, i):
    return +a, -b, ~i, a[1:i], a[i], (a @ b) < b, [a, b], (a, b)


def loads(a, xs):
    global dis
    y = dis.opmap
    xs[0] = y.get(a.b.c)
    return y


STRAIGHT = [calls, operators, loads]


@pytest.mark.parametrize("fn", STRAIGHT, ids=lambda f: f.__name__)
def test_normalised_effects_add_up_to_an_empty_stack_at_the_return(fn):
    depth = 0
    for inst in reader.normalize(fn.__code__).instrs:
        depth += stack_effects.normalised_effect(inst)
        assert depth >= 0, inst
    assert depth == 0


@pytest.mark.parametrize("fn", STRAIGHT, ids=lambda f: f.__name__)
def test_net_effect_of_the_original_instructions_is_dis_stack_effect(fn):
    depth = 0
    for ins in instructions.original(fn.__code__):
        if ins.opname != "PRECALL":  # 3.11: counted with its CALL
            depth += stack_effects.net_effect(ins.opname, ins.arg)
    assert depth == 0
    assert stack_effects.net_effect("BINARY_OP", 0) == dis.stack_effect(dis.opmap["BINARY_OP"], 0)


def test_stack_producers_still_name_the_instruction_that_pushed_each_slot():
    code = calls.__code__
    listing = instructions.original(code)
    at = next(i for i in listing if i.opname == "RETURN_VALUE")
    slots = analysis.stack_producers(code, at.offset)
    assert [listing[n].opname for n, _ in slots] == ["BUILD_TUPLE"]


def _follow(fn, opaque=lambda slot: False) -> bool:
    """Whether the value the first BINARY_SUBSCR of ``fn`` pushes is used up before the end
    of its straight run (no slot or local holds it); the frame's own slots are UNTRACKED."""
    instrs = reader.normalize(fn.__code__).instrs
    start = next(n for n, i in enumerate(instrs) if i.opname == "BINARY_SUBSCR")
    depth = sum(stack_effects.normalised_effect(i) for i in instrs[: start + 1])
    stack: list = [UNTRACKED] * (depth - 1) + [TRACKED]
    names: set = set()
    for inst in instrs[start + 1 :]:
        if not any(map(stack_effects.tracked, stack)) and not names:
            return True
        if not stack_effects.step(inst, stack, names, opaque):
            return False
    return False


def masked_update(z, m, c):
    z[m] = z[m] ** 2 + c[m]


def through_a_call(z, m, np):
    z[m] = np.sqrt(z[m], where=True)


def through_a_local(z, m):
    t = z[m]
    t = 1
    return t


def kept_in_a_local(z, m):
    t = z[m]
    z[m] = t


def method_of_it(z, m):
    return z[m].sum()


def in_a_list(z, m):
    return [z[m]]


def used_as_an_index(z, m, w):
    w[z[m]] = 1


def returned(z, m):
    return -z[m]


@pytest.mark.parametrize(
    "fn, used_up",
    [(masked_update, True), (through_a_call, True), (through_a_local, True),
     (kept_in_a_local, False), (method_of_it, False), (in_a_list, False),
     (used_as_an_index, False), (returned, False)],
    ids=lambda v: getattr(v, "__name__", ""),
)  # fmt: skip
def test_a_value_is_followed_to_where_it_is_used_up_or_lost(fn, used_up):
    assert _follow(fn) is used_up


def test_a_value_passed_to_an_opaque_callable_is_lost():
    assert not _follow(through_a_call, opaque=lambda slot: slot is UNTRACKED)
