"""The guards one trace collects: each assumption the trace made about a value read from a
source, in the order it made them (`guards.Guard` writes and explains each one)."""

from __future__ import annotations

from ..values.source import Source
from .guards import Guard


class GuardList:
    def __init__(self):
        self.items: list[Guard] = []

    def __iter__(self):
        return iter(self.items)

    def add(self, source: Source | None, kind: str, expected: object) -> None:
        """Guard ``source``; values with no source (made in the trace) need no guard."""
        if source is not None:
            self.items.append(Guard(source, kind, expected))

    def drop_last(self) -> None:
        """Take back the last guard, for one the caller replaces with a weaker one."""
        self.items.pop()

    def specialize_dim(self, source_name: str, dim: int, size: int) -> None:
        """A dynamic input dim was used as a Python int: guard its exact size from now on."""
        for i, guard in enumerate(self.items):
            if (
                guard.kind == "shape"
                and guard.source.name() == source_name
                and guard.expected[dim] is None
            ):
                dims = tuple(size if d == dim else e for d, e in enumerate(guard.expected))
                self.items[i] = Guard(guard.source, "shape", dims)
