"""Errors and graph breaks: one registry of break kinds, one structured break record.

Every way tracing can stop is a `BreakKind` from `BREAK_KINDS`; the tracer raises a
`GraphBreak` carrying a `BreakRecord` (kind, explanation, user stack, hints), and `explain`,
the logs, `Unsupported` messages and the widgets all render that one record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ir.node import FrameLoc

# The three strategies of the seed document on fullgraph (shared/seeds/002_*).
HINT_ESCAPE = (
    "If the function is pure, wrap it with tc.nonstrict_trace (NumPy ops inside are traced) "
    "or tc.custom_op (an opaque op) so it stays in the graph."
)
HINT_MOVE_OUT = "Move the code out of the compiled region, e.g. into a function called outside it."
HINT_FULLGRAPH_OFF = "Use fullgraph=False to let tcompile break the graph here and run it eagerly."


class TCompileError(Exception):
    """Base class of every error tcompile raises about the user's code or its API use."""


class Unsupported(TCompileError):
    """A graph break where breaks are not allowed (``fullgraph=True``).

    Example::

        @tc.compile(fullgraph=True)
        def f(x):
            print(x)          # Unsupported: call to print() ... File "...", line 3
            return x + 1

    Fix: remove the break (move ``print`` outside ``f``), or compile with ``fullgraph=False``.
    """

    def __init__(self, record: BreakRecord):
        super().__init__(record.render(extra_hints=(HINT_FULLGRAPH_OFF,)))
        self.record = record


@dataclass(frozen=True)
class BreakKind:
    """A stable kind of graph break with its default hints."""

    id: str
    title: str
    hints: tuple[str, ...]


def _kind(id: str, title: str, *hints: str) -> BreakKind:
    return BreakKind(id, title, hints)


BREAK_KINDS: dict[str, BreakKind] = {
    k.id: k
    for k in (
        _kind("graph_break", "explicit tc.graph_break()", HINT_MOVE_OUT, HINT_ESCAPE),
        _kind("skip_frame", "explicit tc.skip_frame()", HINT_MOVE_OUT),
        _kind(
            "unsupported_call",
            "call to a function tcompile cannot trace",
            HINT_ESCAPE,
            HINT_MOVE_OUT,
        ),
        _kind("io_call", "I/O or printing inside the compiled region", HINT_MOVE_OUT),
        _kind(
            "impure_numpy",
            "NumPy function with hidden state or side effects",
            HINT_MOVE_OUT,
            HINT_ESCAPE,
        ),
        _kind("data_dependent_branch", "branch on an array's value", HINT_MOVE_OUT),
        _kind(
            "iteration_branch",
            "branch on an int that changes on every iteration of a split loop",
            "Move the graph break that splits the loop out of it: the loop then traces as one "
            "loop node, where such branches stay in the graph.",
        ),
        _kind(
            "data_dependent_value",
            "array value leaves the graph as a Python value",
            "Keep it a NumPy value inside the compiled function (x.sum() rather than "
            "float(x.sum()), np.where rather than an if on it), or compute it before calling the "
            "compiled function and pass it in.",
            HINT_MOVE_OUT,
        ),
        _kind(
            "dynamic_trip_count",
            "a loop over a dynamic size that cannot be one loop node",
            "The loop runs in Python, its body compiled per iteration (or the loop plainly "
            "where that is faster), so a new length does not recompile; a body that traces "
            "the same way on every iteration becomes one loop node instead.",
        ),
        _kind(
            "dask_size",
            "a Dask array's size used as a Python number",
            "Use the size in array arithmetic (x / x.shape[0] stays in the graph), or pass it "
            "to the compiled function as an argument; code that needs it as a Python int (a "
            "range, a branch, a new array's shape) runs as plain Dask code.",
        ),
        _kind(
            "data_dependent_shape",
            "NumPy op whose output shape depends on data",
            "Keep shapes fixed: np.where(mask, x, 0) or a masked reduction such as "
            "np.sum(x, where=mask) instead of x[mask] or np.nonzero.",
            HINT_ESCAPE,
        ),
        _kind(
            "unsupported_numpy", "NumPy feature tcompile does not trace", HINT_ESCAPE, HINT_MOVE_OUT
        ),
        _kind(
            "unsupported_opcode",
            "Python feature (bytecode) tcompile does not trace",
            "Move the construct named above into a helper function that runs outside the "
            "compiled region (decorate it with @tc.disable), and call it from there.",
            HINT_MOVE_OUT,
        ),
        _kind(
            "unsupported_object",
            "object tcompile cannot model",
            "Pass the arrays and numbers the code needs from that object to the compiled function "
            "instead of the object itself.",
            HINT_MOVE_OUT,
        ),
        _kind(
            "unsupported_mutation",
            "mutation tcompile cannot replay",
            "Return the new value from the compiled function and make the change outside it.",
            HINT_MOVE_OUT,
        ),
        _kind("try_block", "code inside try/except/finally", HINT_MOVE_OUT),
        _kind("context_manager", "with-block of an unsupported context manager", HINT_MOVE_OUT),
        _kind(
            "generator",
            "generator or coroutine",
            "Build a list (a list comprehension) instead of a generator or a yield in the "
            "compiled function.",
            HINT_MOVE_OUT,
        ),
        _kind(
            "dynamic_code",
            "exec/eval/locals() and similar frame introspection",
            "Write the code out instead of exec or eval, and name the variables instead of "
            "reading them through locals() or globals().",
            HINT_MOVE_OUT,
        ),
        _kind(
            "recursion_limit",
            "inlining too deep",
            "Write the recursion as a loop, or decorate the recursive helper with @tc.disable "
            "so it runs as plain Python.",
        ),
        _kind(
            "cache_limit",
            "a split loop's body recompiled up to config.cache_size_limit",
            "Keep ints that change on every iteration from being used as Python values in the "
            "loop (sizes, range bounds), or move the graph break out of the loop.",
        ),
        _kind(
            "trace_budget",
            "the trace outgrew its budget (usually a long loop being unrolled)",
            "Raise tc.config.trace_max_ops or tc.config.trace_max_seconds to trace it anyway.",
            HINT_ESCAPE,
        ),
        _kind(
            "internal_error",
            "tcompile could not trace this (a gap in tcompile; please report it)",
            HINT_MOVE_OUT,
            HINT_ESCAPE,
        ),
    )
}


@dataclass(frozen=True)
class BreakRecord:
    """A graph break: what, where (innermost user frame last), and what to try."""

    kind: BreakKind
    explanation: str
    stack: tuple[FrameLoc, ...] = ()
    hints: tuple[str, ...] = field(default=())

    @property
    def location(self) -> FrameLoc | None:
        return self.stack[-1] if self.stack else None

    @property
    def reason(self) -> str:
        return f"{self.kind.title}: {self.explanation}"

    def all_hints(self) -> tuple[str, ...]:
        return self.hints + tuple(h for h in self.kind.hints if h not in self.hints)

    def render(self, extra_hints: tuple[str, ...] = ()) -> str:
        lines = [f"Graph break [{self.kind.id}] {self.reason}"]
        if self.stack:
            lines.append("User code (innermost last):" if len(self.stack) > 1 else "User code:")
            lines.extend(loc.render() for loc in self.stack)
        lines.append("Try:")
        lines.extend(f"  - {h}" for h in self.all_hints() + extra_hints)
        return "\n".join(lines)


class GraphBreak(Exception):
    """Internal: the tracer cannot go on here. The protocol between the translator (which
    raises it and fills in where), the resume planner (`glue.continuation.plan`) and the frame
    compiler (`compile_frame`):

    ``record``                what broke and where, as the user sees it
    ``error_on_graph_break``  the setting in force where it happened: raise `Unsupported`
                              instead of breaking (a ``fullgraph`` function inlined, a block)
    ``root_index``            the root frame's instruction it happened at (None: before the first)
    ``root_blocked``          it happened inside a try block or a user with-block of the root
                              frame, where no resume function can start
    ``state``                 the trace up to the break: an eager entry keeps its guards
    """

    def __init__(self, record: BreakRecord, *, error_on_graph_break: bool = False):
        super().__init__(record.reason)
        self.record = record
        self.error_on_graph_break = error_on_graph_break
        self.root_index: int | None = None
        self.root_blocked = False
        self.state = None


class UserErrorInTrace(Exception):
    """Internal: the traced code itself raises (e.g. a shape mismatch, NameError).

    The frame then runs eagerly, which raises the user's own error with its own traceback.
    """

    def __init__(self, error: BaseException):
        super().__init__(repr(error))
        self.error = error
        self.stack: tuple[FrameLoc, ...] = ()  # where the traced code raises, innermost last
        self.state = None  # the trace up to there: the eager entry keeps its guards

    def reason(self) -> str:
        where = f" at line {self.stack[-1].lineno}" if self.stack else ""
        return (f"the traced code raises {type(self.error).__name__}: {self.error}{where}; "
                "the frame runs eagerly, and raises there")  # fmt: skip


class StopTrace(Exception):
    """Internal: a translator reached the instruction it must stop before: the root frame's
    known break, or the head of a loop whose body is being captured (``tx``: that translator)."""

    def __init__(self, tx):
        super().__init__("stop")
        self.tx = tx


class RestartTrace(Exception):
    """Internal: tracing must start over with different frame settings (e.g. static shapes)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
