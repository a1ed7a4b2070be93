"""Caches of what tcompile derives from code objects: bounded, forgettable, cleared by reset.

Normalised instructions, flow analyses, routed copies, binders, resume functions and the frames
compiled for them are kept per code object. Code objects cannot be referenced weakly, so every
such cache holds its code objects alive: each one is bounded (the least recently used entries
go first), `forget` drops what was derived from given code objects (a notebook cell run again
replaces its functions), and `clear_all` empties them all (``tc.reset()``). Entries are keyed by
identity: equal bytecode from two files compares equal but keeps its own file and lines.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from types import CodeType

_CACHES: list[CodeCache] = []


class CodeCache:
    """``code -> value``; ``origin(code, value)`` is the user code an entry came from (the code
    itself, or for a resume code, the code it resumes)."""

    def __init__(self, limit: int = 2048, origin: Callable | None = None):
        self._entries: OrderedDict[int, tuple[CodeType, object]] = OrderedDict()
        self._limit = limit
        self._origin = origin or (lambda code, value: code)
        _CACHES.append(self)

    def get(self, code: CodeType, make: Callable[[], object]):
        """The value for ``code``, made by ``make()`` on the first request."""
        entry = self._entries.get(id(code))
        if entry is not None and entry[0] is code:
            self._entries.move_to_end(id(code))
            return entry[1]
        value = make()
        self._entries[id(code)] = (code, value)
        if len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return value

    def lookup(self, code: CodeType):
        """The value for ``code`` if there is one, else None (nothing is made)."""
        entry = self._entries.get(id(code))
        return entry[1] if entry is not None and entry[0] is code else None

    def derived_from(self, codes: set[int]) -> set[int]:
        """The code objects here made from these (resume codes from their original code)."""
        return {key for key, (code, value) in self._entries.items()
                if id(self._origin(code, value)) in codes}  # fmt: skip

    def forget(self, codes: set[int]) -> None:
        for key in [key for key in self._entries if key in codes]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


def code_objects(code: CodeType) -> Iterable[CodeType]:
    """``code`` and every code object nested in it (functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from code_objects(const)


def forget(codes: Iterable[CodeType]) -> None:
    """Drop everything derived from these code objects, in every cache."""
    ids = {id(c) for code in codes for c in code_objects(code)}
    for cache in _CACHES:
        ids |= cache.derived_from(ids)  # resume codes of these, and what was derived from them
    for cache in _CACHES:
        cache.forget(ids)


def clear_all() -> None:
    for cache in _CACHES:
        cache._entries.clear()


def size() -> int:
    """How many entries all caches hold (tests check it stays bounded)."""
    return sum(len(cache) for cache in _CACHES)
