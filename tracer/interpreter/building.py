"""Building values: tuples, lists, dicts, sets, slices and strings, unpacking, formatting.

Mixed into `Translator`; ``self`` is the translator of the frame.
"""

from __future__ import annotations

from ..bytecode.reader import Instruction
from ..errors import UserErrorInTrace
from ..semantics import folding, numbers
from ..semantics import operations as ops
from ..semantics.builtins_impl import text
from ..values.containers import DictValue, ListValue, SetValue, SliceValue, TupleValue
from ..values.core import Const, Value


class BuildingMixin:
    def BUILD_TUPLE(self, inst: Instruction) -> None:
        self.push(TupleValue(self.popn(inst.arg)))

    def BUILD_LIST(self, inst: Instruction) -> None:
        self.push(ListValue(self.popn(inst.arg)))

    def BUILD_MAP(self, inst: Instruction) -> None:
        flat = self.popn(2 * inst.arg)
        self.push(DictValue({k.constant(): v for k, v in zip(flat[::2], flat[1::2])}))

    def BUILD_CONST_KEY_MAP(self, inst: Instruction) -> None:
        keys = self.pop().constant()
        self.push(DictValue(dict(zip(keys, self.popn(inst.arg)))))

    def BUILD_SET(self, inst: Instruction) -> None:
        self.push(SetValue({v.constant() for v in self.popn(inst.arg)}))

    def SET_ADD(self, inst: Instruction) -> None:
        value = self.pop().constant()
        self._mutate_built(self.stack[-inst.arg])
        self.stack[-inst.arg].values.add(value)

    def SET_UPDATE(self, inst: Instruction) -> None:
        # update from the real iterable, as CPython does: a set's iteration order depends on
        # how it was filled (``{*frozenset}`` copies the table, a list adds one by one)
        source = self.pop()
        values = source.constant() if source.is_constant() else [
            v.constant() for v in ops.iterate(self.state, source)]  # fmt: skip
        self._mutate_built(self.stack[-inst.arg])
        self.stack[-inst.arg].values.update(values)

    def BUILD_SLICE(self, inst: Instruction) -> None:
        parts = self.popn(inst.arg) + [Const(None)] * (3 - inst.arg)
        if all(p.is_constant() for p in parts):
            self.push(Const(slice(*(p.constant() for p in parts))))
        else:
            self.push(SliceValue(*parts))

    def BUILD_STRING(self, inst: Instruction) -> None:
        self.push(numbers.concatenate(self.state, self.popn(inst.arg)))

    def _mutate_built(self, target: Value) -> None:
        """A container being built on the stack changes: one made before the trace started (a
        comprehension's, handed to a resume function or a split loop's body) has its new
        contents replayed after the graph (a list's or a dict's); adding to a set made so breaks
        (replayed, its iteration order could differ from eager's)."""
        if target.source is not None and not isinstance(target, (ListValue, DictValue)):
            raise self.state.graph_break(
                "unsupported_mutation", f"adding to {target.describe()}, made before the trace"
            )
        folding.mutate_list(self.state, target)

    def LIST_APPEND(self, inst: Instruction) -> None:
        value = self.pop()
        target = self.stack[-inst.arg]
        folding.mutate_list(self.state, target)
        target.items.append(value)

    def LIST_EXTEND(self, inst: Instruction) -> None:
        items = ops.iterate(self.state, self.pop())
        target = self.stack[-inst.arg]
        folding.mutate_list(self.state, target)
        target.items.extend(items)

    def LIST_TO_TUPLE(self, inst: Instruction) -> None:
        self.push(TupleValue(list(self.pop().items)))

    def MAP_ADD(self, inst: Instruction) -> None:
        value, key = self.pop(), self.pop()
        self._mutate_built(self.stack[-inst.arg])
        self.stack[-inst.arg].items[key.constant()] = value

    def DICT_UPDATE(self, inst: Instruction) -> None:
        other = self.pop()
        if not isinstance(other, DictValue):
            raise self.state.graph_break(
                "unsupported_object", f"dict update from {other.describe()}"
            )
        self._mutate_built(self.stack[-inst.arg])
        self.stack[-inst.arg].items.update(other.items)

    DICT_MERGE = DICT_UPDATE

    def UNPACK_SEQUENCE(self, inst: Instruction) -> None:
        items = ops.iterate(self.state, self.pop())
        if len(items) != inst.arg:
            raise UserErrorInTrace(
                ValueError(f"expected {inst.arg} values to unpack, got {len(items)}")
            )
        self.stack.extend(reversed(items))

    def UNPACK_EX(self, inst: Instruction) -> None:
        before, after = inst.arg & 0xFF, inst.arg >> 8
        items = ops.iterate(self.state, self.pop())
        if len(items) < before + after:
            raise UserErrorInTrace(ValueError("not enough values to unpack"))
        middle = ListValue(items[before : len(items) - after])
        self.stack.extend(reversed(items[:before] + [middle] + items[len(items) - after :]))

    def FORMAT_VALUE(self, inst: Instruction) -> None:
        conversion, has_spec = inst.arg
        spec = self.pop() if has_spec else Const("")
        value = self.pop()
        if conversion:
            value = self._convert(value, conversion)
        self.push(text(self, format, [value, Const(spec.constant())], {}))

    def CONVERT_VALUE(self, inst: Instruction) -> None:
        self.push(self._convert(self.pop(), inst.arg))

    def _convert(self, value: Value, conversion: int) -> Value:
        return text(self, {1: str, 2: repr, 3: ascii}[conversion], [value], {})
