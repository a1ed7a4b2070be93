"""Loads and stores: the frame's locals, cells, globals, attributes and imports.

Mixed into `Translator`; ``self`` is the translator of the frame.
"""

from __future__ import annotations

import sys
from types import CodeType

from .. import user_text
from ..bytecode.reader import Instruction
from ..errors import UserErrorInTrace
from ..semantics import folding, objects, user_objects
from ..semantics import operations as ops
from ..state import graph_calls
from ..values.core import NULL, UNBOUND, Const, Obj, Value
from ..values.functions import Cell
from ..values.objects import SuperValue, UserObject
from ..values.source import (
    AttrSource,
    BuiltinSource,
    GlobalsDictSource,
    ItemSource,
    LocalSource,
    Source,
    builtins_of,
)


def _cell_is_set(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - only asks whether the cell is empty
        return True
    except ValueError:
        return False


class NamesMixin:
    def LOAD_CONST(self, inst: Instruction) -> None:
        arg = inst.arg
        self.push(Const(arg) if isinstance(arg, CodeType) else folding.const_to_value(arg))

    def load_lazy(self, name: str) -> Value:
        source = LocalSource(name)
        if name.startswith("___stack"):  # a resume function's value: named by its expression
            source = LocalSource(name, user_text.stack_name(self.code, name))
        return self.state.wrap(self.lazy_locals.pop(name), source)

    def LOAD_FAST(self, inst: Instruction) -> None:
        name = inst.arg
        value = self.locals.get(name)
        if value is None and name in self.lazy_locals:
            value = self.locals[name] = self.load_lazy(name)
        if value is None or value is UNBOUND:
            raise UserErrorInTrace(UnboundLocalError(f"cannot access local variable {name!r}"))
        self.push(value)

    def LOAD_FAST_AND_CLEAR(self, inst: Instruction) -> None:
        name = inst.arg
        if name in self.lazy_locals:
            self.locals[name] = self.load_lazy(name)
        value = self.locals.pop(name, None)
        self.push(NULL if value is None or value is UNBOUND else value)

    def STORE_FAST(self, inst: Instruction) -> None:
        value = self.pop()
        self.lazy_locals.pop(inst.arg, None)
        if value is NULL:
            self.locals.pop(inst.arg, None)
            return
        graph_calls.name_value(self.state, value, inst.arg)
        self.locals[inst.arg] = value

    def DELETE_FAST(self, inst: Instruction) -> None:
        self.lazy_locals.pop(inst.arg, None)
        self.locals[inst.arg] = UNBOUND

    def _cell(self, name: str) -> Cell:
        cell = self.cells[name]
        if isinstance(cell, Cell):
            return cell
        # A pre-existing cell: one model per real cell object for the whole trace (the same
        # cell may be reached from this frame and from functions it calls), read once.
        real, source = self.closure[cell], self.cell_source(cell, name)
        model = self.state.cell_models.get(id(real))
        if model is None:
            try:
                contents = real.cell_contents
            except ValueError:
                contents = None
            if contents is None and not _cell_is_set(real):
                value = None
            elif source is None:
                value = folding.wrap_unguarded(self.state, contents)
            else:
                value = self.state.wrap(contents, AttrSource(source, "cell_contents"))
            model = Cell(value, preexisting=source, real=True)
            self.state.cell_models[id(real)] = model
            self.state.keep_alive.append(real)
        self.cells[name] = model
        return model

    def LOAD_DEREF(self, inst: Instruction) -> None:
        cell = self._cell(inst.arg)
        if cell.contents is None:
            raise UserErrorInTrace(
                NameError(f"free variable {inst.arg!r} referenced before assignment")
            )
        self.push(cell.contents)

    def STORE_DEREF(self, inst: Instruction) -> None:
        value = self.pop()
        cell = self._cell(inst.arg)
        if cell.real:
            if cell.preexisting is None:
                raise self.state.graph_break(
                    "unsupported_mutation", "write to a closure cell tcompile cannot address"
                )
            self.state.note_mutation(cell)
            self.state.effects.write_cell(cell)
        else:
            self.state.note_mutation(cell)
        graph_calls.name_value(self.state, value, inst.arg)
        cell.contents = value

    def DELETE_DEREF(self, inst: Instruction) -> None:
        raise self.state.graph_break(
            "unsupported_mutation", f"del of closure variable {inst.arg!r}"
        )

    def LOAD_CLOSURE(self, inst: Instruction) -> None:
        self.push(self._cell(inst.arg))

    def LOAD_GLOBAL(self, inst: Instruction) -> None:
        if inst.push_null == "before":
            self.push(NULL)
        self.push(self.load_global(inst.arg))
        if inst.push_null == "after":
            self.push(NULL)

    def load_global(self, name: str) -> Value:
        overlay = self.state.effects.global_value(self.f_globals, name)
        if overlay is not None:
            return overlay
        if name in self.f_globals:
            return self.state.wrap(self.f_globals[name], self.global_source(name))
        builtins = builtins_of(self.f_globals)
        if name in builtins:
            # Guarded not to be shadowed by a global later, and to stay the same object
            # (``builtins.len`` can be patched); only where the guards can reach both dicts.
            dict_source = self._globals_dict_source()
            if dict_source is None or builtins is not builtins_of(self.state.root_globals):
                return folding.wrap_unguarded(self.state, builtins[name])
            self.state.guards.add(dict_source, "not_global", name)
            return self.state.wrap(builtins[name], BuiltinSource(name))
        raise UserErrorInTrace(NameError(f"name {name!r} is not defined"))

    def _globals_dict_source(self) -> Source | None:
        if self.f_globals is self.state.root_globals:
            return GlobalsDictSource()
        item = self.global_source("_") if self.global_source is not None else None
        return item.base if isinstance(item, ItemSource) else None

    def STORE_GLOBAL(self, inst: Instruction) -> None:
        value = self.pop()
        if self.f_globals is not self.state.root_globals:
            raise self.state.graph_break(
                "unsupported_mutation", f"write to global {inst.arg!r} of another module"
            )
        self.state.note_global_write(inst.arg)
        self.state.effects.write_global(self.f_globals, inst.arg, value)

    def LOAD_ATTR(self, inst: Instruction) -> None:
        obj = self.pop()
        if inst.push_null == "before":
            self.push(NULL)
        self.push(self.get_attr(obj, inst.arg))
        if inst.push_null == "after":
            self.push(NULL)

    def LOAD_SUPER_ATTR(self, inst: Instruction) -> None:
        self_value, cls, _super = self.pop(), self.pop(), self.pop()
        if inst.push_null == "before":
            self.push(NULL)
        self.push(objects.super_attr(self.state, SuperValue(cls.constant(), self_value), inst.arg))
        if inst.push_null == "after":
            self.push(NULL)

    def zero_arg_super(self) -> Value:
        """``super()`` with no arguments: the method's ``__class__`` cell and first argument."""
        cls = self._cell("__class__").contents
        first = self.locals.get(self.code.co_varnames[0]) if self.code.co_argcount else None
        if cls is None or first is None:
            raise UserErrorInTrace(RuntimeError("super(): no arguments"))
        if isinstance(first, Cell):
            first = first.contents
        return SuperValue(cls.constant(), first)

    def STORE_ATTR(self, inst: Instruction) -> None:
        obj, value = self.pop(), self.pop()
        if isinstance(obj, UserObject):
            user_objects.store_attr(self, obj, inst.arg, value)
        else:
            ops.store_attr(self.state, obj, inst.arg, value)

    def DELETE_ATTR(self, inst: Instruction) -> None:
        raise self.state.graph_break("unsupported_mutation", f"del of attribute {inst.arg!r}")

    def IMPORT_NAME(self, inst: Instruction) -> None:
        fromlist, level = self.pop(), self.pop()
        name = inst.arg
        module = sys.modules.get(name)
        if level.constant() != 0 or module is None:
            raise self.state.graph_break(
                "unsupported_call", f"import of {name!r} (not yet imported)"
            )
        if not fromlist.constant():
            module = sys.modules.get(name.partition(".")[0])
        self.push(Obj(module))

    def IMPORT_FROM(self, inst: Instruction) -> None:
        module = self.stack[-1]
        self.push(folding.wrap_unguarded(self.state, getattr(module.value, inst.arg)))
