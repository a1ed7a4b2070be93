"""State of one frame's trace, and the four calls every opcode handler makes on it.

A trace has six parts, each in its own module: the graph being built (`graph`), the values
that entered it from sources and the graph inputs among them (`wrapping.Inputs`), the guards
those values need (`guard_list.GuardList`), the writes to pre-existing Python state to replay
after the graph (`side_effects.SideEffects`), the supported with-blocks open now
(`contexts.OpenContexts`), and what a break does here (`break_policy.BreakPolicy`). Handlers
call `wrap` (a value read from a source), `graph_call` (an operation into the graph, see
`graph_calls`), `graph_break` (a located break to raise) and `guards.add`.
"""

from __future__ import annotations

from ..errors import GraphBreak
from ..ir.graph import Graph
from ..ir.node import FrameLoc, follows_any
from ..report import Phases
from ..values.core import Value
from ..values.source import Source
from . import graph_calls
from .break_policy import BreakPolicy
from .contexts import OpenContexts
from .examples import ExampleMemory
from .guard_list import GuardList
from .side_effects import SideEffects
from .trace_budget import TraceBudget
from .wrapping import DynamicPolicy, Inputs


class TraceState:
    def __init__(self, graph_name: str, dynamic: DynamicPolicy, root_globals: dict,
                 error_on_graph_break: bool = False, array_kinds: frozenset = frozenset(),
                 loop_nodes: bool = False, per_iteration: bool = False,
                 phases: Phases | None = None):  # fmt: skip
        # where operations go (a loop body's, while it is traced)
        self.graph = Graph(graph_name, module=root_globals.get("__name__"))
        self.root_graph = self.graph  # the frame's graph: its inputs are the frame's
        self.root_globals = root_globals
        self.guards = GuardList()
        self.inputs = Inputs(self, dynamic, self.guards, array_kinds)
        self.effects = SideEffects()
        self.breaks = BreakPolicy(error_on_graph_break)
        self.contexts = OpenContexts(self.breaks)
        self.memory = ExampleMemory()  # the examples of array values, and the caller's memory
        self.named_nodes: set[int] = set()  # nodes already named after a user variable
        self.tx = None  # the innermost translator running (for locations)
        self.budget = TraceBudget()  # how far this trace may still go
        self.cell_models: dict[int, object] = {}  # id(real cell) -> its Cell model
        self.keep_alive: list = []  # the real cells behind cell_models (ids stay unique)
        self.loop_watch = None  # while a loop body is captured: told what the body changes
        self.loop_nodes = loop_nodes  # the backend runs loop nodes (else loops are unrolled)
        self.loops: list = []  # a `loops.LoopRecord` per loop met: captured, or why unrolled
        self.conds: list = []  # a `loops.conds.CondRecord` per branch on data made a cond node
        # loop nodes whose trip count changes from call to call: which of their results is an
        # input itself, and their layouts, follow the count (not the traced run)
        self.counted_loops: list = []
        # loop node -> its run on the examples, for the graph's first call (`first_run`)
        self.first_runs: dict = {}
        # why the examples are not what the graph gives on the first call, if they are not: a
        # warning or fp error came (the real run must show it), a stand-in or a function of
        # its own made an example (`first_run.trace_results_for_first_call`)
        self.examples_differ: list[str] = []
        # the frame is a split loop's body: comparisons of its dynamic ints stay in the graph
        # (a branch on one breaks; a value guard would recompile every iteration)
        self.per_iteration = per_iteration
        # tracing the `b` of a loop condition's `a and b`: comparisons of the graph's ints stay
        # in the graph as bools (`loops.conds`), whose truth would pin them
        self.comparisons_in_graph = False
        # the conditional jumps (by id) of the `a and b` condition of the while loop whose body
        # is traced: a comparison of the graph's ints they test is a bool of the graph, and a
        # cond node computes the condition (`loops.while_loops.graph_test`)
        self.graph_tests: frozenset[int] = frozenset()
        self.phases = phases if phases is not None else Phases()  # the compile's phase times

    def wrap(self, obj: object, source: Source) -> Value:
        """The symbolic value for ``obj`` read from ``source``, guarding what the trace assumes."""
        return self.inputs.wrap(obj, source)

    def graph_call(self, op: str, target, args: tuple, kwargs: dict, *, name: str,
                   writes: list | None = None, example_fn=None, data_shape: bool = False) -> Value:  # fmt: skip
        """Add ``target(*args, **kwargs)`` (or a method/attr/getitem) and return its value."""
        return graph_calls.graph_call(self, op, target, args, kwargs, name=name, writes=writes,
                                      example_fn=example_fn, data_shape=data_shape)  # fmt: skip

    def graph_break(self, kind: str, explanation: str, *hints: str) -> GraphBreak:
        """Build (the caller raises) a break located at the current instruction."""
        return self.breaks.make(kind, explanation, self.user_stack(), hints)

    def note_mutation(self, value: Value) -> None:
        """A container, object, iterator or cell model is about to change."""
        if self.loop_watch is not None:
            self.loop_watch.mutation(value)

    def note_global_write(self, name: str) -> None:
        """A global is about to be written (a loop body may not: replayed once per call)."""
        if self.loop_watch is not None:
            self.loop_watch.global_write(name)

    def loop_fact(self, value: Value, what: str) -> GraphBreak | None:
        """A break (for the caller to raise) if ``what`` of ``value`` (its identity, its
        layout) follows the trip count of a loop node that computed it: the traced run saw
        one count, a later call may run another (a while loop none at all)."""
        node = getattr(value, "node", None)
        loop = follows_any(node, self.counted_loops) if self.counted_loops else None
        if loop is None:
            return None
        return self.graph_break(
            "data_dependent_value",
            f"the {what} of {value.describe()} follows how many times the loop node {loop.name} "
            "runs, which changes from call to call",
            "Read it before the loop, or make the loop's trip count a constant.",
        )

    def note_layout_read(self) -> None:
        """The trace reads strides or flags (a loop body's carried values have the layout of
        their first iteration only)."""
        if self.loop_watch is not None:
            self.loop_watch.layout_read()

    def note_write(self, example) -> None:
        """An example array is about to be written (a loop body puts it back if not captured)."""
        if self.loop_watch is not None:
            self.loop_watch.before_write(example)

    def user_stack(self) -> tuple[FrameLoc, ...]:
        return self.tx.user_stack() if self.tx is not None else ()
