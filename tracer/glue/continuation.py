"""After a graph break: run the breaking instruction eagerly and continue in resume functions.

`plan` decides whether a break can be resumed (it cannot inside a try block, an unsupported
with-block, after ``tc.skip_frame()``, or at an instruction with no eager form; inside a loop,
the loop is split: `split_loop`); `Continuation.write` adds to the glue the eager instruction,
written as the Python it stands for, and the call(s) of the resume function(s) with the live
stack values and locals.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from types import CodeType

import numpy as np

from .. import hatches
from ..bytecode import analysis
from ..bytecode.code_cache import CodeCache
from ..bytecode.resume import STACK_CONTEXT, STACK_NULL, STACK_VALUE, ResumeSpec, original_location
from ..bytecode.signature import identifier
from ..ir import operators
from ..loops import split_loop, strategy
from ..state.contexts import errstate_settings
from ..values.core import NULL, UNBOUND, Const, Obj, Value
from ..values.functions import Cell, ContextExit, ContextManager
from .function import GlueFunction

_CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION_EX"}
_JUMPS = {"POP_JUMP_IF_TRUE": True, "POP_JUMP_IF_FALSE": False}
_BINARY = {"BINARY_SUBSCR": "{0}[{1}]", "COMPARE_OP": "{0} {op} {1}", "CONTAINS_OP": "{0} {op} {1}",
           "IS_OP": "{0} {op} {1}"}  # fmt: skip
_UNARY = {"UNARY_NOT": "not {0}", "UNARY_NEGATIVE": "-{0}", "UNARY_INVERT": "~{0}", "UNARY_POSITIVE": "+{0}",
          "GET_LEN": "__tc_len({0})"}  # fmt: skip
_SKIP_KINDS = {"skip_frame", "try_block", "context_manager", "generator", "dynamic_code",
               "unsupported_opcode", "recursion_limit", "trace_budget", "internal_error"}  # fmt: skip
_LOOP_OPS = {"GET_ITER", "FOR_ITER"}
RESUMABLE_OPS = _CALLS | set(_JUMPS) | set(_BINARY) | set(_UNARY) | {
    "BINARY_OP", "STORE_SUBSCR", "STORE_ATTR", "LOAD_ATTR", "FORMAT_VALUE", "UNPACK_SEQUENCE",
}  # fmt: skip


@dataclass
class Plan:
    code: CodeType  # the original code the frame runs
    offset: int  # original offset of the breaking instruction
    skip_reason: str | None  # why the frame cannot resume (it runs eagerly), or None
    split: split_loop.Split | None = None  # the break is inside this loop, which runs split


def plan(brk, frame_code: CodeType, instrs, registry: CodeCache) -> Plan:
    index = brk.root_index
    if index is None:
        return Plan(frame_code, 0, "the break happened before its first instruction")
    inst = instrs[index]
    code, offset = original_location(frame_code, inst.offset, registry)
    kind = brk.record.kind.id
    if len(brk.record.stack) > 1 and inst.opname in _CALLS:
        kind = "bubbled"  # the break is the callee's: this frame resumes after the call
    if offset < 0:
        return Plan(code, offset, "the break happened while re-entering a resume function's state")
    if brk.root_blocked:
        return Plan(code, offset, "it cannot resume inside a try block or a with-block")
    if kind in _SKIP_KINDS:
        return Plan(code, offset, "it cannot resume after this kind of break")
    loop_at = offset
    if inst.opname == "GET_ITER" and instrs[index + 1].opname == "FOR_ITER":
        # a for loop over an iterable the trace cannot go through: the loop runs split, its
        # driver iterating over the real one
        loop_at = original_location(frame_code, instrs[index + 1].offset, registry)[1]
    in_loop = analysis.in_loop(code, loop_at)
    # A loop's own FOR_ITER (and GET_ITER) runs in the split loop's driver, not in its body.
    if inst.opname not in RESUMABLE_OPS and not (in_loop and inst.opname in _LOOP_OPS):
        return Plan(code, offset, f"there is no eager form for {inst.opname}")
    if inst.opname == "LOAD_ATTR" and inst.push_null:
        return Plan(code, offset, "the break is on a method load")
    if in_loop:
        split = strategy.at_break(code, loop_at, frame_code, instrs, registry)
        if isinstance(split, str):
            return Plan(code, offset, f"the break is inside a loop, and {split}")
        return Plan(code, offset, None, split)
    return Plan(code, offset, None)


class Continuation:
    """Writes the tail of ``glue`` for one stopped root translator ``tx``."""

    def __init__(self, glue: GlueFunction, tx, registry: CodeCache, make_resume,
                 split: split_loop.Split | None = None):  # fmt: skip
        self.glue, self.tx, self.values = glue, tx, glue.values
        self.registry = registry
        self.make_resume = make_resume  # ResumeSpec or BodySpec -> callable(cells, *args)
        self.code, self.offset = original_location(tx.code, tx.instrs[tx.ip].offset, registry)
        self.stack = list(tx.stack)
        self.line = tx.instrs[tx.ip].line
        self.split = split  # the trace stopped at this loop, which runs split

    def original_offset(self, index: int) -> int:
        """The original offset of the frame's (normalised) instruction ``index``."""
        return original_location(self.tx.code, self.tx.instrs[index].offset, self.registry)[1]

    # -- values --------------------------------------------------------------------------------
    def value(self, v: Value) -> str:
        """A name holding ``v``, computed now: nothing is rebuilt after the eager instruction."""
        text = self.values.expr(v)
        if text.isidentifier() or _is_literal(text):
            return text
        return self.values.temp(text)  # graph outputs too: the glue drops the rest (see write)

    def fresh_manager(self, manager: Value) -> str:
        """A new context manager like ``manager`` (np.errstate objects cannot be re-entered)."""
        cls, args, kwargs = manager_arguments(manager)
        parts = [self.value(a) for a in args] + [f"{k}={self.value(v)}" for k, v in kwargs.items()]
        return self.values.temp(f"{self.values.bind(cls)}({', '.join(parts)})")

    def pop(self) -> Value:
        return self.stack.pop()

    def popn(self, n: int) -> list[Value]:
        items = self.stack[len(self.stack) - n :] if n else []
        del self.stack[len(self.stack) - n :]
        return items

    # -- the eager instruction -----------------------------------------------------------------
    def write(self) -> None:
        # Graph outputs the continuation needs are copied out first; the others are released
        # before the eager instruction, so the glue keeps no array alive that eager code would not.
        self._emit("__tc_o = None")
        inst = self.tx.instrs[self.tx.ip]
        op = inst.opname
        if self.split is not None:
            split_loop.write(self, self.split)
        elif op in _CALLS:
            self._call(inst)
        elif op in _JUMPS:
            self._jump(inst)
        else:
            self._simple(inst)

    def _emit(self, statement: str) -> None:
        self.glue.emit(statement, self.line)

    def _emit_eager(self, statement: str) -> None:
        """The breaking instruction, inside the supported with-blocks active at the break."""
        managers = [self.fresh_manager(exit_value.manager) for exit_value in self.tx.state.contexts]
        self._emit(f"with {', '.join(managers)}: {statement}" if managers else statement)

    def _call(self, inst) -> None:
        keywords: list[str] = []  # ``k=v``, ``*a``, ``**kw``: after the positional arguments
        if inst.opname == "CALL_KW":
            names = self.pop().constant()
            values = self.popn(inst.arg)
            args, kwvalues = values[: len(values) - len(names)], values[len(values) - len(names) :]
            keywords = [f"{k}={self.value(v)}" for k, v in zip(names, kwvalues)]
        elif inst.opname == "CALL_FUNCTION_EX":
            kwargs = self.pop() if inst.arg & 1 else None
            keywords = [f"*{self.value(self.pop())}"]
            if kwargs is not None:
                keywords.append(f"**{self.value(kwargs)}")
            args = []
        else:
            args = self.popn(inst.arg)
        b, a = self.pop(), self.pop()
        fn, args = (b, args) if a is NULL else (a, args) if b is NULL else (a, [b, *args])
        fn_text = self.value(fn)
        parts = [self.value(v) for v in args] + keywords
        if _compiles_nothing(fn):  # a builtin function or class: the router would pass it on
            call = f"{fn_text}({', '.join(parts)})"
        else:
            call = f"__tc_call({', '.join([fn_text, *parts])})"
        self._emit_eager(f"__tc_r = {call}")
        self._resume_with_result(inst)

    def _resume_with_result(self, inst, results: int = 1) -> None:
        target = analysis.next_offset(self.code, self.offset)
        self._emit("return " + self._resume_call(target, extra=["__tc_r"] * results))

    def _jump(self, inst) -> None:
        """``if cond:`` eagerly, then the resume function of the branch taken. A jump that
        normalised 3.11's JUMP_IF_*_OR_POP keeps the value when it jumps; when it falls
        through, the POP_TOP of the same original instruction drops it."""
        cond = self.value(self.pop())
        if_true = _JUMPS[inst.opname]
        jump_code, jump_offset = original_location(self.tx.code, inst.offset, self.registry)
        target_inst = self.tx.instrs[inst.target]
        _, taken = original_location(self.tx.code, target_inst.offset, self.registry)
        test = cond if if_true else f"not {cond}"
        self._emit(f"if {test}: return {self._resume_call(taken)}")
        after = self.tx.instrs[self.tx.ip + 1]
        if after.opname == "POP_TOP" and after.offset == inst.offset:
            self.pop()
        fallthrough = analysis.next_offset(jump_code, jump_offset)
        self._emit(f"return {self._resume_call(fallthrough)}")

    def _simple(self, inst) -> None:
        op = inst.opname
        if op in _UNARY:
            self._emit_eager(f"__tc_r = {_UNARY[op].format(self.value(self.pop()))}")
        elif op in _BINARY:
            b, a = self.pop(), self.pop()
            if op == "CONTAINS_OP":  # `item in container`: the container is on top
                text = f"{self.value(a)} {'not in' if inst.arg else 'in'} {self.value(b)}"
            elif op == "IS_OP":
                text = f"{self.value(a)} {'is not' if inst.arg else 'is'} {self.value(b)}"
            else:
                text = _BINARY[op].format(self.value(a), self.value(b), op=inst.arg)
            self._emit_eager(f"__tc_r = {text}")
        elif op == "BINARY_OP":
            b, a = self.pop(), self.pop()
            fn = self.values.bind(_binary_function(inst.arg))
            self._emit_eager(f"__tc_r = {fn}({self.value(a)}, {self.value(b)})")
        elif op == "STORE_SUBSCR":
            index, obj, value = self.pop(), self.pop(), self.pop()
            self._emit_eager(f"{self.value(obj)}[{self.value(index)}] = {self.value(value)}")
            self._emit("return " + self._resume_call(analysis.next_offset(self.code, self.offset)))
            return
        elif op == "STORE_ATTR":
            obj, value = self.pop(), self.pop()
            self._emit_eager(f"{self.value(obj)}.{inst.arg} = {self.value(value)}")
            self._emit("return " + self._resume_call(analysis.next_offset(self.code, self.offset)))
            return
        elif op == "LOAD_ATTR":
            self._emit_eager(f"__tc_r = {self.value(self.pop())}.{inst.arg}")
        elif op == "FORMAT_VALUE":
            conversion, has_spec = inst.arg
            spec = self.value(self.pop()) if has_spec else "''"
            value = self.value(self.pop())
            converted = {0: value, 1: f"__tc_str({value})", 2: f"__tc_repr({value})",
                         3: f"__tc_ascii({value})"}[conversion]  # fmt: skip
            self._emit_eager(f"__tc_r = __tc_format({converted}, {spec})")
        elif op == "UNPACK_SEQUENCE":
            names = [f"__tc_u{i}" for i in range(inst.arg)]
            self._emit_eager(f"{', '.join(names)}, = {self.value(self.pop())}")
            target = analysis.next_offset(self.code, self.offset)
            self._emit("return " + self._resume_call(target, extra=list(reversed(names))))
            return
        self._resume_with_result(inst)

    # -- the resume call -----------------------------------------------------------------------
    def _resume_call(self, target_offset: int, extra: list[str] = ()) -> str:
        kinds, args = [], []
        for v in self.stack:
            if v is NULL:
                kinds.append(STACK_NULL)
            elif isinstance(v, ContextExit):
                kinds.append(STACK_CONTEXT)  # the resume function re-enters the with-block
                args.append(self.fresh_manager(v.manager))
            else:
                kinds.append(STACK_VALUE)
                args.append(self.value(v))
        kinds += [STACK_VALUE] * len(extra)
        args += list(extra)
        live = analysis.in_argument_order(
            self.code, analysis.live_locals_at(self.code, target_offset) & self.bound_locals()
        )
        spec = ResumeSpec(self.code, target_offset, tuple(kinds), live)
        args = spec.arrange(tuple(args), tuple(self.local_text(name) for name in live))
        made = self.make_resume(spec)
        resume = self.values.bind(made)
        self.glue.resumes.append(f"{resume}: {made.frame.display_name}, stack [{', '.join(kinds)}],"
                                 f" live locals ({', '.join(live)})")  # fmt: skip
        return f"{resume}({self.cells_text(spec.cell_names)}{''.join(', ' + a for a in args)})"

    def cells_text(self, names: tuple[str, ...]) -> str:
        """The frame's cells, for a resume function's closure."""
        return "(" + "".join(f"{self._cell(name)}, " for name in names) + ")"

    def bound_locals(self) -> set[str]:
        bound = {name for name, v in self.tx.locals.items() if v is not UNBOUND and v is not NULL}
        return bound | set(self.tx.lazy_locals)

    def local_text(self, name: str) -> str:
        if name in self.tx.lazy_locals:
            return identifier(name)  # never read by the trace: still the glue's own parameter
        return self.value(self.tx.locals[name])

    def _cell(self, name: str) -> str:
        cell = self.tx.cells.get(name)
        if isinstance(cell, Cell):
            return self.values.cell(cell)
        return f"__tc_cl[{self.tx.code.co_freevars.index(name)}]"


def _compiles_nothing(fn: Value) -> bool:
    """``fn`` is a builtin function or a class, guarded by identity: a call through the router
    (``__tc_call``) would run it as it is."""
    return isinstance(fn, Obj) and type(fn.value) in (types.BuiltinFunctionType, type)


def manager_arguments(manager: Value) -> tuple[type, list, dict]:
    """(class, args, kwargs) that make a manager like ``manager`` (made in the trace or real)."""
    if isinstance(manager, ContextManager):
        return manager.cls, manager.args, manager.kwargs
    real = manager.value
    if isinstance(real, np.errstate):
        return np.errstate, [], {k: Const(v) for k, v in errstate_settings(manager).items()}
    if isinstance(real, hatches.error_on_graph_break):
        return hatches.error_on_graph_break, [Const(real.flag)], {}
    return type(real), [], {}  # contextlib.nullcontext: its enter_result is not needed again


def _is_literal(text: str) -> bool:
    return (
        text in ("None", "True", "False")
        or text.lstrip("-").replace(".", "", 1).isdigit()
        or (text[:1] in "'\"" and text[-1:] == text[:1])
    )


def _binary_function(op_text: str):
    op, inplace = operators.of_symbol(op_text)
    return op.inplace if inplace else op.fn
