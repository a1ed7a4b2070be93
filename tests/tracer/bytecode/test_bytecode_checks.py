"""Bytecode analysis and generated code: long functions (EXTENDED_ARG jump targets), resume
functions that jump into with-blocks keep their exception handling, and generated code is
checked before it runs."""

from __future__ import annotations

import dis
import types

import numpy as np
import pytest

import tcompile as tc
from tcompile.tracer.bytecode import analysis
from tcompile.tracer.bytecode.resume import ResumeSpec, check_code, resume_code


def _long_function():
    body = "".join(f"        acc = acc + x[{j % 4}] * {j}\n" for j in range(60))
    src = (
        "def long_fn(x):\n    acc = 0.0\n    for i in range(3):\n" + body
        + "        if max(x[0], x[1]) > 0.5:\n            acc = acc + 1\n    return acc\n"
    )  # fmt: skip
    namespace: dict = {"np": np}
    exec(compile(src, "<long_fn>", "exec"), namespace)
    return namespace["long_fn"]


def test_jump_targets_behind_extended_arg_are_found():
    fn = _long_function()
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(fn))
    for ins in dis.get_instructions(fn):
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            analysis.next_offset(fn.__code__, ins.offset)  # no KeyError
    offset = next(i.offset for i in dis.get_instructions(fn) if i.argval == "max")
    assert analysis.in_loop(fn.__code__, offset)


def test_a_break_in_a_loop_of_a_long_function_runs_it_eagerly_and_right():
    fn = _long_function()
    for x in (np.arange(4.0), np.arange(4.0) / 10):
        assert tc.compile(fn)(x) == fn(x)


def _in_errstate(x):
    with np.errstate(divide="raise"):
        x = x + 1
        tc.graph_break()
        return x / np.zeros(3)


def test_resume_inside_a_with_block_keeps_the_handlers_depth():
    break_call = next(i for i in dis.get_instructions(_in_errstate) if i.argval == "graph_break")
    offset = next(
        i.offset
        for i in dis.get_instructions(_in_errstate)
        if i.offset > break_call.offset and i.opname == "POP_TOP"
    )
    info = resume_code(ResumeSpec(_in_errstate.__code__, offset, ("context", "value"), ("x",)))
    resumed = types.FunctionType(info.code, _in_errstate.__globals__)
    with pytest.raises(FloatingPointError):  # the handler exits the errstate: no crash
        resumed(np.errstate(divide="raise"), None, np.ones(3))
    assert np.geterr()["divide"] != "raise"


def test_a_graph_that_raises_inside_a_resumed_with_block_reruns_eagerly():
    with pytest.raises(FloatingPointError):
        tc.compile(_in_errstate)(np.ones(3))
    assert np.geterr()["divide"] != "raise"


def test_check_code_refuses_an_exception_depth_beyond_the_stack():
    def f(x, manager):
        with manager:  # the body's handler unwinds to a depth of 1 (the __exit__)
            return x + 1

    assert max(e.depth for e in dis.Bytecode(f).exception_entries) >= 1
    bad = f.__code__.replace(co_stacksize=0)
    with pytest.raises(RuntimeError, match="exceeds the stack size"):
        check_code(bad)
