"""Writes a trace makes to Python state that existed before the call (globals, closure cells,
attributes of the user's objects, lists and dicts it was given). The graph cannot hold them:
the glue replays them, in order, after the graph runs."""

from __future__ import annotations

from dataclasses import dataclass

from ..values.core import Value


@dataclass(frozen=True)
class Write:
    """One written target: ``kind`` is "global" (``name``), "cell" (``target`` a Cell model),
    "attr" (``target`` a UserObject, ``name``) or "container" (``target`` a list/dict value)."""

    kind: str
    target: object = None
    name: str = ""

    def key(self) -> tuple:
        return (self.kind, id(self.target), self.name)

    def describe(self) -> str:
        if self.kind == "global":
            return f"global {self.name}"
        if self.kind == "cell":
            return "a closure variable"
        if self.kind == "attr":
            return f"attribute {self.name} of {self.target.describe()}"
        return self.target.describe()


class SideEffects:
    def __init__(self):
        self.writes: list[Write] = []
        self._globals: dict[tuple[int, str], Value] = {}  # (id(globals dict), name) -> value

    def write_global(self, f_globals: dict, name: str, value: Value) -> None:
        self._globals[(id(f_globals), name)] = value
        self.writes.append(Write("global", name=name))

    def global_value(self, f_globals: dict, name: str) -> Value | None:
        """The value the trace stored in a global, which later reads in the trace see."""
        return self._globals.get((id(f_globals), name))

    def write_cell(self, cell) -> None:
        self.writes.append(Write("cell", cell))

    def write_attr(self, obj: Value, name: str) -> None:
        self.writes.append(Write("attr", obj, name))

    def mutate(self, container: Value) -> None:
        if not any(w.kind == "container" and w.target is container for w in self.writes):
            self.writes.append(Write("container", container))
        container.mutated = True

    def last_writes(self) -> list[Write]:
        """The writes to replay: the last write of each target, in the order they happened."""
        seen: set = set()
        last: list[Write] = []
        for write in reversed(self.writes):
            if write.key() not in seen:
                seen.add(write.key())
                last.append(write)
        return list(reversed(last))
