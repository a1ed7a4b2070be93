"""The symbolic bytecode interpreter: one handler per normalised opcode.

A `Translator` runs one frame's normalised instructions (see `bytecode.reader`) over symbolic
values. User functions it calls are inlined by a child translator (``parent`` set); everything
NumPy goes into the shared `TraceState`. A handler that meets something untraceable raises a
located `GraphBreak`; an opcode with no handler is such a break too, never a crash.
Its handlers come in groups: loads and stores (`names`), building values (`building`) and
calls (`calls`) are mixed in; Python's semantics live in `semantics`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator as _operator
import types
from types import CodeType

from .. import user_text
from ..bytecode.instructions import original as original_instructions
from ..bytecode.reader import Instruction, normalize
from ..errors import GraphBreak, RestartTrace, StopTrace, TCompileError, UserErrorInTrace
from ..ir import operators
from ..ir.node import FrameLoc
from ..ir.static_lookup import static_lookup
from ..loops import either_float, strategy
from ..loops.loop_body import NotCaptured
from ..semantics import containers, folding, iteration, user_objects
from ..semantics import operations as ops
from ..state import contexts
from ..state.break_policy import blocked_by
from ..state.trace_state import TraceState
from ..values.arrays import NumpyValue, SymInt
from ..values.containers import DictValue, Iterator, ListValue, SetValue, TupleValue
from ..values.core import NULL, Const, NotConstant, Obj, Value
from ..values.functions import Cell, ContextExit, ContextManager, UserFunction
from ..values.objects import UserObject
from .building import BuildingMixin
from .calls import CallMixin
from .names import NamesMixin

_UNSUPPORTED_KINDS = {
    "BEFORE_ASYNC_WITH": ("generator", "async with"),
    "YIELD_VALUE": ("generator", "yield"),
    "RETURN_GENERATOR": ("generator", "generator function"),
    "GET_AWAITABLE": ("generator", "await"),
    "SEND": ("generator", "yield from / await"),
    "PUSH_EXC_INFO": ("try_block", "exception handler"),
    "CHECK_EXC_MATCH": ("try_block", "except clause"),
    "LOAD_BUILD_CLASS": ("unsupported_opcode", "class definition inside a compiled function"),
    "IMPORT_STAR": ("dynamic_code", "from module import *"),
    "SETUP_ANNOTATIONS": ("unsupported_opcode", "variable annotations at class/module level"),
    "DELETE_GLOBAL": ("unsupported_mutation", "del of a global"),
}


def _is_user_context(manager: Value) -> bool:
    cls = manager.python_type() if isinstance(manager, UserObject) else None
    return cls is not None and all(
        isinstance(static_lookup(cls, name), types.FunctionType)
        for name in ("__enter__", "__exit__")
    )


class Translator(NamesMixin, BuildingMixin, CallMixin):
    def __init__(
        self,
        state: TraceState,
        code: CodeType,
        f_globals: dict,
        global_source,  # name -> Source of f_globals[name]
        locals_: dict[str, Value],
        lazy_locals: dict[str, object],
        cell_source,  # (index, name) -> Source of a pre-existing closure cell, or None
        closure: tuple = (),
        parent: Translator | None = None,
        stop_at: int | None = None,
    ):
        self.state = state
        self.code = code
        self.f_globals = f_globals
        self.global_source = global_source
        self.instrs: list[Instruction] = normalize(code).instrs
        self.ip = 0
        self.current: Instruction | None = None
        self.stack: list[Value] = []
        self.locals = locals_
        self.lazy_locals = lazy_locals
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.return_value: Value | None = None
        # stop before any of these instructions is run: the root's break; the end of a loop
        # body or a branch's side being captured (`loops`)
        self.stop_at = frozenset() if stop_at is None else frozenset({stop_at})
        self.user_with_depth = 0  # user-defined with-blocks open in this frame
        # Cells: the frame's own cellvars (new Cells) and its freevars: Cells made earlier in
        # the trace, or pre-existing cells, modelled by a Cell on first use.
        self.cell_source = cell_source
        self.closure = closure
        self.cells: dict[str, Cell | int] = {}
        for name in code.co_cellvars:
            initial = locals_.pop(name, None)
            if initial is None and name in lazy_locals:
                initial = self.load_lazy(name)
            self.cells[name] = Cell(initial)
        for index, name in enumerate(code.co_freevars):
            cell = closure[index] if index < len(closure) else None
            self.cells[name] = cell if isinstance(cell, Cell) else index

    @staticmethod
    def instructions(code: CodeType) -> list[Instruction]:
        return normalize(code).instrs

    # -- running ------------------------------------------------------------------------------
    def run(self) -> Value:
        previous, self.state.tx = self.state.tx, self
        try:
            return self._run()
        finally:
            self.state.tx = previous

    def _run(self) -> Value:
        instrs = self.instrs
        while self.return_value is None:
            if self.ip in self.stop_at:
                raise StopTrace(self)
            index = self.ip
            inst = instrs[index]
            self.current = inst
            self.ip += 1
            over_budget = self.state.budget.spend(self.state.graph)
            if over_budget is not None:
                raise self.state.graph_break("trace_budget", over_budget)
            handler = getattr(self, inst.opname, None)
            if handler is None:
                kind, what = _UNSUPPORTED_KINDS.get(
                    inst.opname, ("unsupported_opcode", "this construct")
                )
                raise self.state.graph_break(kind, f"{what} (bytecode {inst.opname})")
            try:
                handler(inst)
            except GraphBreak as brk:
                # try bodies and user with-blocks are traced; a break inside one cannot resume
                if inst.in_try:
                    brk = blocked_by(brk, "try_block", "inside a try block")
                if self.user_with_depth:
                    brk = blocked_by(brk, "context_manager", "inside a user with-block")
                if (inst.in_try or self.user_with_depth) and self.parent is None:
                    brk.root_blocked = True
                brk = self.state.breaks.in_region(brk)
                if self.parent is None and brk.root_index is None:
                    brk.root_index = index  # the root's instruction the break happened at
                raise brk from None
            except UserErrorInTrace as error:
                if self.state.breaks.region is not None:  # tracing past a with/try is only a probe
                    raise GraphBreak(self.state.breaks.region) from None
                error.stack = error.stack or self.state.user_stack()
                raise
            except (RestartTrace, TCompileError, NotCaptured):
                raise
            except NotConstant as error:
                raise self.state.graph_break(
                    "unsupported_object",
                    f"{inst.opname} needs a Python constant here, got {error.args[0].describe()}",
                ) from None
            except Exception as error:  # a gap in the tracer: never a crash, never a wrong result
                raise self.state.graph_break(
                    "internal_error",
                    f"{inst.opname} failed inside tcompile: {type(error).__name__}: {error}",
                ) from error
        return self.return_value

    def frame_loc(self) -> FrameLoc:
        line = (
            self.current.line
            if self.current is not None and self.current.line
            else self.code.co_firstlineno
        )
        return FrameLoc(self.code.co_filename, line, self.code.co_name)

    def user_stack(self) -> tuple[FrameLoc, ...]:
        frames = []
        tx = self
        while tx is not None:
            frames.append(tx.frame_loc())
            tx = tx.parent
        return tuple(reversed(frames))

    def tested(self) -> user_text.Condition | None:
        """The value the current instruction tests for truth, as the user wrote it: a jump's or
        ``not``'s operand; else the instruction itself (``bool(x)``, ``any(m)``)."""
        inst = self.current
        if inst is None:
            return None
        if inst.opname in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "UNARY_NOT"):
            return user_text.condition(self.code, inst.offset)
        text = self.written()
        return user_text.Condition(text) if text else None

    def written(self) -> str | None:
        """The current instruction's source text (``int(x.sum())`` for its call), or None."""
        inst = self.current
        if inst is None:
            return None
        ins = next((i for i in original_instructions(self.code) if i.offset == inst.offset), None)
        return user_text.source_segment(self.code, ins) if ins is not None else None

    def push(self, v: Value) -> None:
        self.stack.append(v)

    def pop(self) -> Value:
        return self.stack.pop()

    def popn(self, n: int) -> list[Value]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    # -- helpers used by builtins ------------------------------------------------------------
    def truth(self, v: Value) -> bool:
        return ops.truth(self.state, v)

    def get_attr(self, v: Value, name: str) -> Value:
        if isinstance(v, UserObject):
            return user_objects.get_attr(self, v, name)
        return ops.get_attr(self.state, v, name, self)

    # -- stack --------------------------------------------------------------------------------
    def POP_TOP(self, inst: Instruction) -> None:
        self.pop()

    def PUSH_NULL(self, inst: Instruction) -> None:
        self.push(NULL)

    def COPY(self, inst: Instruction) -> None:
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst: Instruction) -> None:
        i = inst.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    def BEFORE_WITH(self, inst: Instruction) -> None:
        manager = self.pop()
        supported = contexts.is_supported(manager)
        if supported or _is_user_context(manager):
            # nullcontext, np.errstate, tc.error_on_graph_break survive breaks; a user-defined
            # manager is traced (__enter__/__exit__ inlined) but a break inside skips the frame.
            exit_value = ContextExit(manager, owner=self if not supported else None)
            entered = Const(None)
            if supported:
                self.state.contexts.enter(exit_value)
                if (
                    isinstance(manager, ContextManager)
                    and manager.cls is contextlib.nullcontext
                    and manager.args
                ):
                    entered = manager.args[0]
            else:
                entered = self.call(self.special_method(manager, "__enter__"), [], {})
                self.user_with_depth += 1
            self.push(exit_value)
            self.push(entered)
            return
        self.state.breaks.enter_region(self.state.graph_break(
            "context_manager",
            f"with-block of {manager.describe()}: only supported context managers are traced",
        ))  # fmt: skip
        self.push(_WITH_EXIT)  # the __exit__ that the block's normal exit calls
        self.push(Const(None))

    # -- operators ----------------------------------------------------------------------------
    def BINARY_OP(self, inst: Instruction) -> None:
        b, a = self.pop(), self.pop()
        op, inplace = operators.of_symbol(inst.arg)
        either_float.check_operator(inst.arg, a, b)
        self.push(ops.binary_op(self.state, op.inplace if inplace else op.fn, a, b, op.name))

    def COMPARE_OP(self, inst: Instruction) -> None:
        b, a = self.pop(), self.pop()
        if not strategy.compares_for_test(self):
            self.push(ops.compare_op(self.state, inst.arg, a, b))
            return
        state = self.state
        saved, state.comparisons_in_graph = state.comparisons_in_graph, True
        try:
            self.push(ops.compare_op(state, inst.arg, a, b))
        finally:
            state.comparisons_in_graph = saved

    def IS_OP(self, inst: Instruction) -> None:
        b, a = self.pop(), self.pop()
        self.push(Const(ops.identity(self.state, a, b) != bool(inst.arg)))

    def CONTAINS_OP(self, inst: Instruction) -> None:
        container, item = self.pop(), self.pop()
        self.push(Const(self.contains(container, item) != bool(inst.arg)))

    def contains(self, container: Value, item: Value) -> bool:
        if isinstance(container, DictValue):
            return item.constant() in container.items
        if isinstance(container, SetValue):
            return item.constant() in container.values
        if isinstance(container, NumpyValue) or isinstance(item, NumpyValue):
            raise self.state.graph_break(
                "data_dependent_value", "`in` on array values gives a Python bool from data"
            )
        if isinstance(item, SymInt):
            item = Const(folding.concretize(self.state, item))
        if isinstance(container, (TupleValue, ListValue)):
            for candidate in container.items:
                if ops.identity(self.state, candidate, item):
                    return True
                if candidate.is_constant() and item.is_constant():
                    if candidate.constant() == item.constant():
                        return True
                elif not candidate.is_constant() or not item.is_constant():
                    raise self.state.graph_break("unsupported_object", "`in` over traced values")
            return False
        known = (container.constant(), item.constant())
        return folding.fold(self.state, _operator.contains, *known).value

    def UNARY_NEGATIVE(self, inst: Instruction) -> None:
        self.push(ops.unary_op(self.state, _operator.neg, self.pop(), "neg"))

    def UNARY_POSITIVE(self, inst: Instruction) -> None:
        self.push(ops.unary_op(self.state, _operator.pos, self.pop(), "pos"))

    def UNARY_INVERT(self, inst: Instruction) -> None:
        self.push(ops.unary_op(self.state, _operator.invert, self.pop(), "invert"))

    def UNARY_NOT(self, inst: Instruction) -> None:
        self.push(ops.logical_not(self.state, self.pop()))

    # -- items --------------------------------------------------------------------------------
    def BINARY_SUBSCR(self, inst: Instruction) -> None:
        index, obj = self.pop(), self.pop()
        self.push(ops.get_item(self.state, obj, index, self))

    def STORE_SUBSCR(self, inst: Instruction) -> None:
        index, obj, value = self.pop(), self.pop(), self.pop()
        either_float.check_store(obj, value)
        ops.set_item(self.state, obj, index, value)

    def DELETE_SUBSCR(self, inst: Instruction) -> None:
        index, obj = self.pop(), self.pop()
        if isinstance(obj, (ListValue, DictValue)) and index.is_constant():
            folding.mutate_list(self.state, obj)
            key = index.constant()
            try:
                del obj.items[key]
            except (IndexError, KeyError) as error:
                raise UserErrorInTrace(error) from error
            return
        raise self.state.graph_break("unsupported_mutation", f"del on items of {obj.describe()}")

    # -- functions ----------------------------------------------------------------------------
    def MAKE_FUNCTION(self, inst: Instruction) -> None:
        code = self.pop().value
        self.push(UserFunction(code=code, globals=self.f_globals, name=code.co_name,
                               source=None, fn=None))  # fmt: skip
        self.stack[-1].global_source = self.global_source

    def SET_FUNCTION_ATTRIBUTE(self, inst: Instruction) -> None:
        fn, value = self.pop(), self.pop()
        if inst.arg == 1:
            fn.defaults = tuple(value.items)
        elif inst.arg == 2:
            fn.kwdefaults = dict(value.items)
        elif inst.arg == 8:
            fn.closure = tuple(value.items)
        self.push(fn)

    # -- control flow -------------------------------------------------------------------------
    def JUMP(self, inst: Instruction) -> None:
        self.ip = inst.target

    def _conditional_jump(test):  # noqa: N805 - makes handlers, in the class body
        """A POP_JUMP_IF_* handler: pop the value, jump when ``test(self, value)`` holds."""

        def handler(self, inst: Instruction) -> None:
            value = strategy.tested_value(self, inst, self.pop())
            hint = ""  # why the jump's loop or branch is no node, where it breaks
            if isinstance(value, NumpyValue):
                loop = strategy.at_array_test(self, inst, value)
                if loop is not None and loop.captured:
                    return  # a while loop's test: the rest of the loop is one node
                if loop is not None:
                    hint = strategy.test_break_hint(loop)
                else:
                    why = strategy.at_array_branch(self, inst, value)
                    if why is None:
                        return  # an if's test: the if is one cond node
                    hint = strategy.branch_break_hint(why) if why else ""
            try:
                jump = test(self, value)
            except GraphBreak as brk:
                if hint:
                    brk.record = dataclasses.replace(brk.record,
                                                     hints=(*brk.record.hints, hint))  # fmt: skip
                raise
            if jump:
                self.ip = inst.target

        return handler

    POP_JUMP_IF_TRUE = _conditional_jump(lambda self, v: self.truth(v))
    POP_JUMP_IF_FALSE = _conditional_jump(lambda self, v: not self.truth(v))
    POP_JUMP_IF_NONE = _conditional_jump(lambda self, v: ops.identity(self.state, v, Const(None)))
    POP_JUMP_IF_NOT_NONE = _conditional_jump(
        lambda self, v: not ops.identity(self.state, v, Const(None))
    )
    del _conditional_jump

    def GET_ITER(self, inst: Instruction) -> None:
        value = self.pop()
        self.push(
            value
            if isinstance(value, Iterator)
            else iteration.iterator(
                self.state,
                iteration.items_of(self.state, value),
                lambda: ops.iterate(self.state, value, loop=True),
            )  # fmt: skip
        )

    def FOR_ITER(self, inst: Instruction) -> None:
        it = self.stack[-1]
        if not isinstance(it, Iterator):  # a real iterator passed in (3.11's comprehensions)
            raise self.state.graph_break(
                "unsupported_object", f"a loop over {it.describe()}, made outside the trace"
            )
        containers.check_untaken(self.state, it)
        if strategy.at_for_iter(self, inst, it):
            return
        if it.position < len(it.items) or it.position < len(it.known_items()):
            self.state.note_mutation(it)
            it.position += 1
            self.push(it.items[it.position - 1])
        else:
            self.pop()
            self.ip = inst.target

    def RETURN_VALUE(self, inst: Instruction) -> None:
        self.return_value = self.pop()

    def RAISE_VARARGS(self, inst: Instruction) -> None:
        raise UserErrorInTrace(RuntimeError("the traced code raises an exception"))

    def RERAISE(self, inst: Instruction) -> None:
        raise self.state.graph_break("try_block", "exception handling")

    def LOAD_ASSERTION_ERROR(self, inst: Instruction) -> None:
        self.push(Obj(AssertionError))

    def GET_LEN(self, inst: Instruction) -> None:
        raise self.state.graph_break("unsupported_opcode", "match statements (bytecode GET_LEN)")

    def CALL(self, inst: Instruction) -> None:
        args = self.popn(inst.arg)
        self.push(self.call_from_stack(args, {}))

    def CALL_KW(self, inst: Instruction) -> None:
        names = self.pop().constant()
        values = self.popn(inst.arg)
        split = len(values) - len(names)
        self.push(self.call_from_stack(values[:split], dict(zip(names, values[split:]))))

    def CALL_FUNCTION_EX(self, inst: Instruction) -> None:
        kwargs = self.pop() if inst.arg & 1 else DictValue({})
        args = self.pop()
        if not isinstance(kwargs, DictValue):
            raise self.state.graph_break("unsupported_object", f"**{kwargs.describe()} in a call")
        self.push(self.call_from_stack(ops.iterate(self.state, args), dict(kwargs.items)))

    def call_from_stack(self, args: list[Value], kwargs: dict) -> Value:
        b, a = self.pop(), self.pop()  # NULL and the callable in either order, or (method, self)
        if a is NULL:
            fn = b
        elif b is NULL:
            fn = a
        else:
            fn, args = a, [b, *args]
        return self.call(fn, args, kwargs)


_WITH_EXIT = Obj(lambda *exc: None)
