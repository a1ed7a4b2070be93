"""Call routing: a copy of a frame's code whose calls go through tcompile's compile cache.

A skipped frame runs as plain Python, but "the functions it calls are still compiled when
they are called" (PyTorch gets this from PEP 523). This module rewrites a code object so that
before every call the callable is passed through ``route(callable)``, which returns the
compiled wrapper of plain user functions and anything else unchanged:

    ... <callable> [self|NULL] <args>  CALL n
 -> ... <callable> [self|NULL] <args>  SWAP k; <route the top>; SWAP k; CALL n

where k is the callable's depth. The stack layouts differ between Python versions
(`features`).
"""

from __future__ import annotations

import threading
import types

from bytecode import Bytecode, Instr

from .code_cache import CodeCache
from .features import HAS_PRECALL, METHOD_LOADS_PUSH_SELF, NULL_FIRST
from .resume import assemble

_tls = threading.local()


def route(fn):
    """The callable to call instead of ``fn`` (its compiled wrapper, for user functions)."""
    router = getattr(_tls, "router", None)
    return fn if router is None else router.wrapper_for(fn)


def routed_copy(fn: types.FunctionType, router):
    """A function running ``fn``'s code with its calls routed through ``router``."""
    code = routed_code(fn.__code__)
    routed = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    routed.__kwdefaults__ = fn.__kwdefaults__

    def run(*args, **kwargs):
        previous, _tls.router = getattr(_tls, "router", None), router
        try:
            return routed(*args, **kwargs)
        finally:
            _tls.router = previous

    return run


def _call(location, count: int) -> list[Instr]:
    prefix = [Instr("PRECALL", count, location=location)] if HAS_PRECALL else []
    return [*prefix, Instr("CALL", count, location=location)]


def _route_top(location) -> list[Instr]:
    """[..., x] -> [..., route(x)]"""
    if NULL_FIRST:
        load = [Instr("PUSH_NULL", location=location), Instr("SWAP", 2, location=location),
                Instr("LOAD_CONST", route, location=location), Instr("SWAP", 2, location=location)]  # fmt: skip
    else:
        load = [Instr("LOAD_CONST", route, location=location), Instr("SWAP", 2, location=location),
                Instr("PUSH_NULL", location=location), Instr("SWAP", 2, location=location)]  # fmt: skip
    return load + _call(location, 1)


def _routing(depth: int, location) -> list[Instr]:
    swap = Instr("SWAP", depth, location=location)
    return [swap, *_route_top(location), Instr("SWAP", depth, location=location)]


def _plain_method_load(ins: Instr) -> list[Instr] | None:
    """3.11/3.12 method loads push [method, self]; make them [NULL, bound method]."""
    loc = ins.location
    if ins.name == "LOAD_METHOD":
        attr = Instr("LOAD_ATTR", ins.arg, location=loc)
    elif ins.name == "LOAD_ATTR" and isinstance(ins.arg, tuple) and ins.arg[0]:
        attr = Instr("LOAD_ATTR", (False, ins.arg[1]), location=loc)
    else:
        return None
    return [attr, Instr("PUSH_NULL", location=loc), Instr("SWAP", 2, location=loc)]


_ROUTED = CodeCache()


def routed_code(code: types.CodeType) -> types.CodeType:
    """The routed copy of ``code`` (memoised per code object)."""
    return _ROUTED.get(code, lambda: _rewrite(code))


def _rewrite(code: types.CodeType) -> types.CodeType:
    bc = Bytecode.from_code(code, conserve_exception_block_stackdepth=True)
    out: list = []
    pending: list = []  # KW_NAMES / PRECALL waiting for their CALL
    for item in bc:
        if not isinstance(item, Instr):
            out.append(item)
            continue
        if METHOD_LOADS_PUSH_SELF:
            plain = _plain_method_load(item)
            if plain is not None:
                out += plain
                continue
        if item.name in ("KW_NAMES", "PRECALL"):
            pending.append(item)
            continue
        if item.name in ("CALL", "CALL_KW"):
            depth = item.arg + (1 if NULL_FIRST else 2) + (1 if item.name == "CALL_KW" else 0)
            out += _routing(depth, item.location)
        elif item.name == "CALL_FUNCTION_EX":
            depth = (2 if NULL_FIRST else 3) + (item.arg & 1)
            out += _routing(depth, item.location)
        out += pending
        pending = []
        out.append(item)
    bc[:] = out
    return assemble(bc, code, extra_stack=3)  # routing pushes the router and a NULL
