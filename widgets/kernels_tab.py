"""The Kernels tab: what a backend made of each compiled graph (its kernels, their kinds, the
user lines they compute and what was fused into them, the extern steps NumPy runs, the plan of a
call, every fusion decision), and the one-line count the summary and the text report give."""

from __future__ import annotations

from collections import Counter
from html import escape

from tcompile.tracer.ir.compiled_graph import (
    GENERATED_KINDS,
    CompiledGraph,
    FusionDecision,
    KernelInfo,
)
from tcompile.tracer.report import CompileReport

from . import blocks
from .model import CellRun, CellSource

KIND_BADGES = {  # a kernel's kind -> its badge; an extern step is no kernel: NumPy runs it
    "pointwise": "pointwise",
    "reduction": "reduction",
    "scatter": "scatter: atomic adds, repeated indices add up",
    "compaction": "compaction: the selected elements, in order",
    "library": "library: the array library's kernel",
    "extern": "extern: NumPy on the host",
    "loop": "loop: its body's kernels, per iteration",
    "cond": "cond: the side its predicate picks",
    "native loop": "loop: machine code, no Python between iterations",
    "python loop": "loop: runs as Python",
    "chunk kernel": "chunk kernel: one Dask task per chunk",
    "dask": "dask: dask.array's own tasks",
}

# else: fusions
NOTES_HEADS = {"extern": "Runs in NumPy because:", "loop": "How it runs:", "cond": "How it runs:",
               "compaction": "How it runs:",
               "native loop": "How it runs:", "python loop": "Runs as Python because:",
               "chunk kernel": "How it runs:", "dask": "How it runs:"}  # fmt: skip
NOT_KERNELS = ("extern", "dask")  # steps the array library runs as it is

EAGER_NOTE = (
    "The eager backend runs the graph's Python as shown in the Graphs and Code tabs: no kernels."
)


def compiled_reports(run: CellRun) -> list[CompileReport]:
    """The compiles whose graph a backend compiled."""
    return [r for r in run.reports if r.compiled is not None]


def _kernel_details(compiled: CompiledGraph) -> tuple[list[KernelInfo], list[FusionDecision]]:
    kernels = [d for d in compiled.details if isinstance(d, KernelInfo)]
    return kernels, [d for d in compiled.details if isinstance(d, FusionDecision)]


def kernel_counts(compiled: CompiledGraph) -> str:
    """What a backend made of a graph, in one line, e.g.
    ``2 (1 fused reduction, 1 pointwise), 1 extern; fusions: 1 made, 1 refused``."""
    kernels, decisions = _kernel_details(compiled)
    if compiled.backend == "eager":
        return "none (the graph's Python runs as shown)"
    if not kernels and not decisions:
        return "none reported"
    launched = [k for k in kernels if k.kind not in NOT_KERNELS]
    # a generated kernel's notes are what was fused into it
    kinds = Counter(f"{'fused ' if k.notes and k.kind in GENERATED_KINDS else ''}{k.kind}"
                    for k in launched)  # fmt: skip
    text = str(len(launched))
    if kinds:
        text += " (" + ", ".join(_kind_count(n, kind) for kind, n in kinds.items()) + ")"
    steps = Counter(k.kind for k in kernels if k.kind in NOT_KERNELS)
    if steps["extern"]:
        text += f", {steps['extern']} extern"
    if steps["dask"]:
        text += f", {steps['dask']} run by dask.array"
    if decisions:
        made = sum(d.fused for d in decisions)
        text += f"; fusions: {made} made, {len(decisions) - made} refused"
    return text


def _kind_count(n: int, kind: str) -> str:
    return f"{n} {kind}s" if n != 1 and kind.endswith("reduction") else f"{n} {kind}"


def _kernels_body(run: CellRun) -> str:
    entries = compiled_reports(run)
    if not entries:
        return blocks.empty("No kernels: no frame of this cell compiled a graph.")
    return "".join(_kernels_entry(r, run.source) for r in entries)


def _kernels_entry(report: CompileReport, source: CellSource) -> str:
    compiled = report.compiled
    title = blocks.report_title(report, source, f" · {compiled.backend} backend")
    kernels, decisions = _kernel_details(compiled)
    plan = compiled.sources.get("plan", "")
    if compiled.backend == "eager":
        body = f'<div class="tc-note">{escape(EAGER_NOTE)}</div>'
    elif not (kernels or decisions or plan):
        # a backend's word on kernels still to come (the cpu backend's while numba starts)
        why = compiled.sources.get("kernels", "")
        why = why[2:] + ". " if why.startswith("# ") and "\n" not in why else ""
        body = blocks.empty(
            f"The {compiled.backend} backend reported no kernels{': ' if why else ''}{why}"
            f"{'Its' if why else '; its'} code, if any, is in the Code tab."
        )
    else:
        parts = [f'<div class="tc-note">Kernels: {escape(kernel_counts(compiled))}</div>']
        parts += [_kernel_block(k) for k in kernels]
        if plan:
            parts.append(blocks.title("Plan", "the steps one call runs") + blocks.pre(plan))
        if decisions:
            made = sum(d.fused for d in decisions)
            muted = f"{made} made, {len(decisions) - made} refused"
            parts.append(blocks.title("Fusion decisions", muted) + _decisions_table(decisions))
        body = "".join(parts)
    return f'<div class="tc-entry tc-kernels">{title}{body}</div>'


def _kernel_block(kernel: KernelInfo) -> str:
    """A kernel's name and kind badge, the user lines it computes, its notes and (collapsed)
    its source; an extern step says why NumPy runs it."""
    # a kind of a backend's own gets a plain badge (its name is text, not a class name)
    kind = f" tc-kind-{kernel.kind.replace(' ', '-')}" if kernel.kind in KIND_BADGES else ""
    label = escape(KIND_BADGES.get(kernel.kind, kernel.kind))
    parts = [
        f'<div class="tc-title"><code>{escape(kernel.name)}</code> '
        f'<span class="tc-badge{kind}">{label}</span></div>'
    ]
    if kernel.lines:
        lines = "\n".join(kernel.lines)
        parts.append(f"<div>Computes:</div>{blocks.pre(lines)}")
    if kernel.notes:
        head = NOTES_HEADS.get(kernel.kind, "Fused into it:")
        parts.append(f"<div>{head}</div>{blocks.bullets(kernel.notes)}")
    if kernel.source:
        summary_text = f"source ({blocks.plural(len(kernel.source.splitlines()), 'line')})"
        parts.append(
            f"<details><summary>{summary_text}</summary>{blocks.pre(kernel.source)}</details>"
        )
    if kernel.parts is not None:
        inner = kernel.parts()
        whose = "Its sides'" if kernel.kind == "cond" else "Its body's"  # a cond: two programs
        if inner:
            parts.append(f"<div>{whose} kernels:</div>")
            parts += [_kernel_block(k) for k in inner]
        else:
            parts.append(f'<div class="tc-note">{whose} kernels are made at its first run.</div>')
    return f'<div class="tc-kernel{kind}">{"".join(parts)}</div>'


def _decisions_table(decisions: list[FusionDecision]) -> str:
    """One row per pair of kernels considered for fusion; a refusal's reason is marked."""
    head = "".join(f"<th>{h}</th>" for h in ("first", "second", "fused", "reason"))
    rows = "".join(
        f"<tr><td>{escape(d.first)}</td><td>{escape(d.second)}</td>"
        + ('<td class="tc-fused">fused</td>' if d.fused else '<td class="tc-refused">refused</td>')
        + f"<td>{escape(d.reason)}</td></tr>"
        for d in decisions
    )
    return f'<table class="tc-table tc-decisions"><tr>{head}</tr>{rows}</table>'


def kernels_html(run: CellRun) -> str:
    """Per compiled graph, what its backend made of it: each kernel (kind, the user lines it
    computes, what was fused into it, its source), each extern step and why NumPy runs it, the
    plan of a call and every fusion decision with a refusal's reason."""
    return blocks.page(_kernels_body(run))
