"""What became of each loop of a trace (`LoopRecord`), for `explain` and the widgets."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import file_labels


@dataclass(frozen=True)
class LoopRecord:
    """What became of one loop: captured (with its trip count and body size), unrolled, or
    split and run as plain Python (`loops.loop_driver`), and why."""

    filename: str
    lineno: int
    trip_count: int  # at trace time (a while loop's is data: 0)
    captured: bool
    body_ops: int = 0
    reason: str = ""  # why it was unrolled
    body: str = ""  # the body graph's code, for a captured loop
    count_from: str = ""  # what a trip count computed in the graph follows, if any
    kind: str = "for"  # or "while": the condition is computed in the body, read per iteration
    peeled: str = ""  # why the first iteration was unrolled before the rest became a node
    plain: bool = False  # a split loop that runs as plain Python: compiling its body did not pay

    def describe(self) -> str:
        where = f"{file_labels.label(self.filename)}:{self.lineno}"
        if self.plain:
            return f"{where}: split {self.kind} loop runs as plain Python: {self.reason}"
        if self.captured and self.kind == "while":
            return (
                f"{where}: while_loop node (its condition computed in the graph, read once per "
                f"iteration), body of {self.body_ops} ops"
            )
        if self.captured:
            count = f"{self.trip_count} iterations"
            if self.count_from:
                count += f" here, count from {self.count_from}"
            peeled = f" (after its first iteration, unrolled: {self.peeled})" if self.peeled else ""
            return f"{where}: loop node, {count}, body of {self.body_ops} ops{peeled}"
        if self.kind == "while":
            return f"{where}: while loop not captured (a graph break at its test): {self.reason}"
        return f"{where}: unrolled ({self.trip_count} iterations): {self.reason}"
