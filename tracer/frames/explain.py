"""``tc.explain``: compile a function on one call and report graphs, breaks and guards."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .. import report
from ..errors import BreakRecord
from ..ir.cond_nodes import BODY_OPS, Cond
from ..state import data_sizes
from .entry import compile_function, reset_all


@dataclass
class ExplainOutput:
    """What compiling one call produced. ``str()`` is a readable report."""

    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[BreakRecord] = field(default_factory=list)
    ops_per_graph: list[list[str]] = field(default_factory=list)
    out_guards: list = field(default_factory=list)
    compile_time: float = 0.0
    compiled_frames: list[str] = field(default_factory=list)  # qualnames (resume functions too)
    skipped_frames: list[str] = field(default_factory=list)  # frames that ran eagerly
    skip_reasons: list[str] = field(default_factory=list)  # why, one per skipped frame
    loops: list = field(default_factory=list)  # loops.LoopRecord: loop nodes, or why unrolled
    conds: list = field(default_factory=list)  # loops.conds.CondRecord: branches made cond nodes
    data_sizes: list = field(default_factory=list)  # data_sizes.DataSize: sizes from data
    result: object = None
    reports: list = field(default_factory=list)  # the CompileReports this is made from

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {sum(len(ops) for ops in self.ops_per_graph)}"]  # fmt: skip
        if self.break_reasons:
            lines.append("Break Reasons:")
            for i, record in enumerate(self.break_reasons, 1):
                lines.append(f"  Break Reason {i}:")
                lines.append(f"    Reason: {record.reason}")
                for loc in record.stack:
                    lines.append("    " + loc.render().replace("\n", "\n    "))
        if self.ops_per_graph:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph, 1):
                lines.append(f"  Ops {i}:")
                lines.extend(f"    {line}" for op in ops for line in op.splitlines())
        if self.loops:
            lines.append("Loops:")
            lines.extend(f"  {loop.describe()}" for loop in self.loops)
        if self.conds:
            lines.append("Branches:")
            lines.extend(f"  {cond.describe()}" for cond in self.conds)
        if self.data_sizes:
            lines.append("Sizes from data:")
            lines.extend(f"  {size.describe()}" for size in self.data_sizes)
        if self.out_guards:
            lines.append("Out Guards:")
            lines.extend(f"  {g.describe()}" for g in self.out_guards)
        if self.compiled_frames or self.skipped_frames:
            lines.append(f"Compiled frames: {', '.join(self.compiled_frames) or '-'}")
            lines.append(f"Skipped frames (ran eagerly): {'' if self.skipped_frames else '-'}")
            lines.extend(
                f"  {name}: {why}" for name, why in zip(self.skipped_frames, self.skip_reasons)
            )
        lines.append(f"Compile Time: {self.compile_time * 1e3:.2f} ms")
        return "\n".join(lines)


def explain(fn, rebuild, *, backend, dynamic=None):
    """``tc.explain(fn)(*args, **kwargs)`` -> `ExplainOutput`, e.g. ``explain(f, lambda c: c,
    backend=eager)(np.ones(3))``. ``fn`` is a Python function (or a compiled wrapper) and
    ``rebuild(compiled)`` wraps its compiled version like the callable the user passed (binds
    ``self``...: ``tcompile._api._resolve``); ``backend`` is a backend callable."""

    @functools.wraps(fn, updated=())  # not __dict__: run is no compiled wrapper (__tc_compiled__)
    def run(*args, **kwargs):
        reset_all()  # as torch._dynamo.explain: every frame this call reaches compiles anew
        compiled = rebuild(compile_function(fn, fullgraph=False, backend=backend, dynamic=dynamic))
        with report.collecting() as reports:
            result = compiled(*args, **kwargs)
        out = ExplainOutput(result=result, reports=reports)
        for rep in reports:
            if rep.outcome == report.EAGER:
                out.skipped_frames.append(rep.function)
                out.skip_reasons.append(rep.eager_reason)
            elif rep.outcome != report.PLAIN:  # a loop's verdict, no compile of a frame
                out.compiled_frames.append(rep.function)
            out.graphs.extend(g for g in rep.graphs if g.op_count())
            out.break_reasons.extend(rep.breaks)
            out.loops.extend(rep.loops)
            out.conds.extend(rep.conds)
            out.out_guards.extend(rep.guards)
            out.compile_time += rep.compile_time
        out.graph_count = len(out.graphs)
        out.graph_break_count = len(out.break_reasons)
        out.ops_per_graph = [_ops(g) for g in out.graphs]
        out.data_sizes = [size for g in out.graphs for size in data_sizes.made_in(g)]
        return out

    return run


def _ops(graph) -> list[str]:
    """The graph's operations as it prints them; a loop node's with its function, a cond
    node's as its ``if`` statement."""
    within = graph.printed_within_conds()
    return [
        graph.cond_code(n)
        if isinstance(n.target, Cond)
        else f"{graph.loop_code(n)}\n{graph.format_node(n)}"
        if n.op in BODY_OPS
        else graph.format_node(n)
        for n in graph.nodes
        if n.op not in ("input", "output") and n not in within
    ]
