"""A code object's parameters: their text in generated functions, and binding a call to them.

Binding follows the code object itself, exactly as CPython does, never ``inspect.signature``,
which follows ``__wrapped__`` (``functools.wraps``) and ``__signature__`` and so can describe
another function than the one that runs.
"""

from __future__ import annotations

import inspect
import types
from types import CodeType

from .code_cache import CodeCache


def identifier(name: str) -> str:
    """The name generated code uses for a local: itself, or a stand-in for names that are not
    identifiers (pytest's assertion rewriting makes locals like ``@py_assert1``)."""
    if name.isidentifier():
        return name
    return "__tc_l_" + "".join(c if c.isalnum() or c == "_" else f"_{ord(c):x}_" for c in name)


def parameter_names(code: CodeType) -> tuple[str, ...]:
    """Every parameter name in frame order: positional, keyword-only, ``*args``, ``**kwargs``."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


def parameter_text(code: CodeType) -> str:
    """The parameter list of ``code`` without defaults (they are set on the function object)."""
    names = [identifier(n) for n in code.co_varnames]
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    parts = list(names[:nargs])
    if nposonly:
        parts.insert(nposonly, "/")
    position = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        parts.append("*" + names[position])
        position += 1
    elif nkwonly:
        parts.append("*")
    parts.extend(names[nargs : nargs + nkwonly])
    if code.co_flags & inspect.CO_VARKEYWORDS:
        parts.append("**" + names[position])
    return ", ".join(parts)


def forwarding_text(code: CodeType) -> str:
    """Arguments that pass a function's own parameters on to another function of the same
    signature: ``x, y, *args, k=k, **kwargs``."""
    names = [identifier(n) for n in code.co_varnames]
    nargs, nkwonly = code.co_argcount, code.co_kwonlyargcount
    parts = list(names[:nargs])
    position = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        parts.append("*" + names[position])
        position += 1
    parts.extend(f"{k}={k}" for k in names[nargs : nargs + nkwonly])
    if code.co_flags & inspect.CO_VARKEYWORDS:
        parts.append("**" + names[position])
    return ", ".join(parts)


_BINDERS = CodeCache()


def bind(fn: types.FunctionType, args: tuple, kwargs: dict) -> dict:
    """``{parameter: value}`` for the call ``fn(*args, **kwargs)``, defaults applied.

    A wrong call raises the TypeError CPython would raise for ``fn``."""
    code = fn.__code__
    binder_code = _BINDERS.get(code, lambda: _binder_code(code))
    binder = types.FunctionType(binder_code, {}, code.co_name, fn.__defaults__)
    binder.__kwdefaults__ = fn.__kwdefaults__
    return binder(*args, **kwargs)


def _binder_code(code: CodeType) -> CodeType:
    """A function with ``code``'s parameters returning them as a dict (defaults set per call)."""
    name = code.co_name if code.co_name.isidentifier() else "__tc_fn"
    names = parameter_names(code)
    source = f"def {name}({parameter_text(code)}):\n"
    source += f"    return {{{', '.join(f'{n!r}: {identifier(n)}' for n in names)}}}\n"
    namespace: dict = {}
    exec(compile(source, code.co_filename, "exec"), namespace)  # noqa: S102
    return namespace[name].__code__.replace(co_qualname=code.co_qualname)
