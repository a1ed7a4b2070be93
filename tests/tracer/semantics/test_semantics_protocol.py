"""The semantics protocol (tracer/semantics/protocol.py): families registered by value class and
found along the MRO, and the rule a binary operator follows: the left operand's family, then
the right's reflected, the right first where it outranks or specialises the left's,
NotImplemented passing on, constants folded where every family passes."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import pytest

from tcompile.tracer.semantics import (
    operations,  # noqa: F401 - registers the families
    protocol,
)
from tcompile.tracer.semantics.protocol import Semantics, register, semantics_of
from tcompile.tracer.state.masked import MaskedValue
from tcompile.tracer.values.arrays import ArrayValue, ScalarValue, SymInt
from tcompile.tracer.values.containers import ListValue, PreexistingList, TupleValue
from tcompile.tracer.values.core import Const, NotConstant, Value
from tcompile.tracer.values.objects import UserObject


class Broke(Exception):
    pass


class State:
    """What the protocol's defaults ask of a trace's state: a break to raise."""

    def graph_break(self, kind: str, text: str) -> Broke:
        return Broke(kind, text)


ASKED: list = []


@dataclass(eq=False)
class Num(Value):
    value: int

    def constant(self):
        return self.value

    def describe(self) -> str:
        return f"num {self.value}"


class Low(Num):
    pass


class Sub(Low):
    pass


class High(Num):
    pass


class Unknown(Num):
    def constant(self):
        raise NotConstant(self)


class Passing(Semantics):
    """Records who was asked, and passes."""

    def binary(self, state, fn, a, b, name, reflected):
        ASKED.append((type(self).__name__, reflected))
        return NotImplemented


@register(Low)
class LowSemantics(Passing):
    pass


@register(Sub)
class SubSemantics(LowSemantics):
    def binary(self, state, fn, a, b, name, reflected):
        super().binary(state, fn, a, b, name, reflected)
        return Const(("sub", reflected))


@register(High)
class HighSemantics(Passing):
    rank = 5


@pytest.fixture(autouse=True)
def fresh_record():
    ASKED.clear()


def test_a_class_without_semantics_of_its_own_gets_its_nearest_bases():
    class Deeper(Sub):
        pass

    assert type(semantics_of(Deeper(1))) is SubSemantics
    assert type(semantics_of(Low(1))) is LowSemantics
    assert type(semantics_of(Num(1))) is Semantics  # no family: the defaults
    assert type(semantics_of(PreexistingList.__new__(PreexistingList))) is type(
        semantics_of(ListValue([]))
    )


def test_the_left_operand_is_asked_then_the_rights_reflected_then_constants_fold():
    result = protocol.binary(State(), operator.add, Low(2), Num(3), "add")
    assert ASKED == [("LowSemantics", False)]
    assert isinstance(result, Const) and result.value == 5
    ASKED.clear()
    protocol.binary(State(), operator.sub, Num(2), Low(3), "sub")
    assert ASKED == [("LowSemantics", True)]


def test_one_family_is_asked_once():
    protocol.binary(State(), operator.add, Low(1), Low(2), "add")
    assert ASKED == [("LowSemantics", False)]


def test_a_subclass_family_on_the_right_goes_first():
    result = protocol.binary(State(), operator.add, Low(1), Sub(2), "add")
    assert ASKED == [("SubSemantics", True)]
    assert result.value == ("sub", True)


def test_a_higher_ranked_family_goes_first_and_passing_leaves_it_to_the_other():
    result = protocol.binary(State(), operator.mul, Low(2), High(3), "mul")
    assert ASKED == [("HighSemantics", True), ("LowSemantics", False)]
    assert result.value == 6


def test_below_asks_only_lower_ranked_families():
    protocol.binary(State(), operator.add, High(1), Low(2), "add", below=HighSemantics.rank)
    assert ASKED == [("LowSemantics", True)]


def test_what_every_family_passes_on_and_is_no_constant_breaks():
    with pytest.raises(Broke, match="operator 'add' on num 1 and num 2"):
        protocol.binary(State(), operator.add, Unknown(1), Low(2), "add")


def test_the_defaults_fold_constants_or_break():
    state, default = State(), semantics_of(Num(1))
    assert default.unary(state, operator.neg, Num(4), "neg").value == -4
    assert default.get_item(state, Num((1, 2)), Num(1), None).value == 2
    for ask in (lambda: default.truth(state, Num(1)),
                lambda: default.get_attr(state, Num(1), "real", None),
                lambda: default.set_item(state, Num(1), Num(0), Num(0)),
                lambda: default.iterate(state, Num(1), False, False)):  # fmt: skip
        with pytest.raises(Broke):
            ask()


def test_the_tracers_families_rank_as_the_operator_precedence_they_replace():
    """Masked selections before arrays before dynamic numbers before sequences before user
    objects: an operator with an array is the graph's, ``lst * n`` pins ``n``..."""
    ranks = [semantics_of(v).rank for v in (
        MaskedValue.__new__(MaskedValue), ArrayValue.__new__(ArrayValue),
        SymInt.__new__(SymInt), TupleValue([]), UserObject.__new__(UserObject), Const(1),
    )]  # fmt: skip
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == len(ranks)
    assert semantics_of(ListValue([])).rank == semantics_of(TupleValue([])).rank
    assert type(semantics_of(ArrayValue.__new__(ArrayValue))).__mro__[1] is type(
        semantics_of(ScalarValue.__new__(ScalarValue))
    )


class Callee(Num):
    pass


@register(Callee)
class _CalleeSemantics(Semantics):
    def call(self, tx, fn, args, kwargs):
        return Const((fn.value, [a.constant() for a in args], sorted(kwargs)))


class Translator:
    """What the protocol's default call asks of a translator: its state."""

    state = State()


def test_a_call_asks_the_callees_family():
    got = semantics_of(Callee(7)).call(Translator(), Callee(7), [Const(1)], {"k": Const(2)})
    assert got.constant() == (7, [1], ["k"])


def test_calling_a_value_of_no_family_breaks():
    with pytest.raises(Broke) as broke:
        semantics_of(High(3)).call(Translator(), High(3), [], {})
    assert broke.value.args == ("unsupported_call", "calling num 3")
