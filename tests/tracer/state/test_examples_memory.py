"""`examples.ExampleMemory`: writes at trace time reach every view of the written memory, and
never the caller's arrays; the block copy keeps offsets, strides and flags."""

from __future__ import annotations

import numpy as np
import pytest

from tcompile.tracer.errors import UserErrorInTrace
from tcompile.tracer.state.examples import ExampleMemory, run_with_stand_ins, value_dependent_shape
from tcompile.tracer.values.arrays import ArrayValue, ScalarValue
from tcompile.tracer.values.core import Const


class Example:
    """Stands in for an ArrayValue: the memory only reads and re-points ``.example``."""

    def __init__(self, example):
        self.example = example


def test_write_goes_to_a_private_copy_seen_by_all_views():
    caller = np.arange(10.0)
    memory = ExampleMemory()
    x = Example(caller)
    memory.add_input(x)
    reversed_view = Example(caller[::-2])
    middle = Example(caller[2:5])
    memory.add(reversed_view)
    memory.add(middle)
    block = memory.prepare_write(middle)
    middle.example += 100
    assert np.array_equal(caller, np.arange(10.0))  # the caller's array is untouched
    assert x.example[3] == 103 and reversed_view.example[3] == 103.0  # caller[9 - 2 * 3]
    assert reversed_view.example.strides == (-16,)
    assert block.inputs[0][0] is x


def test_inputs_read_after_a_write_see_the_written_values():
    caller = np.zeros(4)
    memory = ExampleMemory()
    first = Example(caller)
    memory.add_input(first)
    memory.prepare_write(first)
    first.example[1] = 7.0
    later = Example(caller[1:3])  # e.g. the same array read through another name
    memory.add_input(later)
    assert later.example[0] == 7.0 and caller[1] == 0.0


def test_read_only_inputs_stay_read_only_in_the_copy():
    caller = np.ones(3)
    caller.flags.writeable = False
    memory = ExampleMemory()
    x = Example(caller)
    memory.add_input(x)
    block = memory.prepare_write(x)
    assert not x.example.flags.writeable  # writing raises at trace time, as eager code does
    assert block.inputs == [(x, False)]


def test_identical_examples_stay_identical_after_the_copy():
    caller = np.ones(3)
    memory = ExampleMemory()
    a, b = Example(caller), Example(caller)
    memory.add_input(a)
    memory.add_input(b)
    memory.prepare_write(a)
    assert a.example is b.example


def test_graph_made_arrays_are_written_in_place():
    memory = ExampleMemory()
    made = Example(np.zeros(3))
    memory.add(made)
    assert memory.prepare_write(made) is None


def _array(example):
    return ArrayValue(None, example)


def test_stand_ins_let_value_dependent_failures_trace():
    singular = _array(np.zeros((2, 2)))
    result = run_with_stand_ins("call", np.linalg.inv, (singular,), {}, [])
    assert result.shape == (2, 2)  # from an identity stand-in
    with pytest.raises(UserErrorInTrace):  # a shape error fails for every value
        run_with_stand_ins("call", np.add, (_array(np.ones(2)), _array(np.ones(3))), {}, [])


@pytest.mark.parametrize(
    "fn, args, depends",
    [
        (np.arange, (ScalarValue(None, np.int64(4)),), True),
        (np.zeros, ((ScalarValue(None, np.int64(2)), Const(3)),), True),
        (np.zeros, ((Const(2), Const(3)),), False),
        (np.repeat, (_array(np.ones(3)), _array(np.array([1, 2, 0]))), True),
        (np.sum, (_array(np.arange(4)),), False),
        (np.array_split, (_array(np.ones(6)), ScalarValue(None, np.int64(2))), True),
    ],
)
def test_value_dependent_shapes_are_found_by_nudging(fn, args, depends):
    from tcompile.tracer.state.examples import as_example, traced_leaves

    result = fn(*as_example(args))
    leaves = traced_leaves(args)
    assert value_dependent_shape("call", fn, args, {}, result, leaves) is (depends and bool(leaves))
