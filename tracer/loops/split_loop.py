"""A graph break inside a loop: the loop stays Python, and its body becomes a function of its
own, compiled like any frame, so tracing resumes at the next iteration.

TorchDynamo skips the whole frame at a break inside a loop: a resume function that starts
inside the loop meets the same break again on the next iteration, and would stack one frame
per iteration. tcompile instead ends the frame's graph where the outermost loop around the
break starts (`find`: the loop's ``GET_ITER``, or a while loop's first instruction) and the
glue runs that loop in Python (`loop_driver.LoopDriver`): ``iter`` of the real iterable, then
the body function (`bytecode.body_function`) once per iteration with the loop's state, the
locals live at its head; where compiling the body does not pay, the driver runs the loop as
plain Python instead (`bytecode.loop_function`). The body function has no way back to the
loop's head, so a break inside it resumes as in straight-line code; its compiled entries serve
every iteration (guards on the state: an int loop variable becomes dynamic at its second
value), and its inner loops are loop nodes or split in turn. When the loop is exhausted, a
resume function continues after it.

A local that is unbound when the loop starts travels as `MISSING` until an iteration sets it;
the loop is split only if no iteration can read such a local before setting it (checked on the
bytecode), and what follows the loop gets it unbound again (`AfterLoop`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CodeType

from ..bytecode import analysis
from ..bytecode.body_function import BodySpec
from ..bytecode.code_cache import CodeCache
from ..bytecode.resume import STACK_NULL, STACK_VALUE
from ..values.core import NULL
from ..values.functions import ContextExit
from .loop_driver import MISSING, AfterLoop, LoopDriver


@dataclass(frozen=True)
class Split:
    head: int  # original offset of the loop's first instruction
    stop_index: int  # the frame's instruction (normalised) where its trace stops
    line: int | None  # the loop's line

    def explain(self, explanation: str) -> str:
        """A break's explanation, for the frame whose loop it splits."""
        return (f"{explanation}; the loop at line {self.line} runs in Python, its body compiled "
                "as a function of its own (tracing resumes at the next iteration)")  # fmt: skip


def find(code: CodeType, offset: int, frame_code: CodeType, instrs, registry: CodeCache):
    """Where the frame's trace stops so that the loop around the break at ``offset`` (of the
    original ``code``) runs split: a `Split`, or why it cannot (a string)."""
    head = analysis.outermost_loop_head(code, offset)
    info = registry.lookup(frame_code)
    if info is not None:  # a resume function: find the head among its copied instructions
        head_here = next((k for k, v in info.original_offset.items() if v == head), None)
    else:
        head_here = head
    at = next((n for n, ins in enumerate(instrs) if ins.offset == head_here), None)
    if at is None:
        return "the loop starts before the code this frame runs"
    if instrs[at].opname == "FOR_ITER" and at and instrs[at - 1].opname == "GET_ITER":
        at -= 1  # the iterable is easier to pass on than the iterator the trace made of it
    return Split(head, at, instrs[at].line)


def write(cont, split: Split) -> None:
    """The glue after the trace stopped at the loop: run it with `LoopDriver`, return what the
    frame returns. Raises a graph break (the frame then runs eagerly) when the loop's state
    cannot be handed over."""
    code, tx = cont.code, cont.tx
    at_iter = tx.instrs[tx.ip].opname == "GET_ITER"
    for_iter = tx.ip + at_iter  # the FOR_ITER, if a for loop
    is_for = tx.instrs[for_iter].opname == "FOR_ITER"
    iterable = cont.pop() if is_for else None
    if any(isinstance(v, ContextExit) for v in cont.stack):
        raise _cannot(tx, "it is inside a with-block")
    under = tuple(STACK_NULL if v is NULL else STACK_VALUE for v in cont.stack)
    state = analysis.in_argument_order(code, analysis.live_locals_at(code, split.head))
    deleted = analysis.deleted_locals(code) & set(state)
    if deleted:
        raise _cannot(tx, f"its state includes a local that `del` unbinds ({min(deleted)})")
    bound = cont.bound_locals()
    start = cont.original_offset(for_iter + 1) if is_for else split.head
    unbound = {name for name in state if name not in bound}
    early = analysis.read_before_written(code, start, unbound, barrier=split.head)
    if early:
        raise _cannot(tx, f"an iteration may read {min(early)} before setting it")
    spec = BodySpec(code, split.head, start, state, under)
    body = cont.make_resume(spec)
    after = None
    if is_for:  # where an exhausted FOR_ITER continues
        exit_offset = cont.original_offset(tx.instrs[for_iter].target)
        after = AfterLoop(code, exit_offset, state, under, cont.make_resume)
    driver = cont.values.bind(LoopDriver(body, after, spec, tx.f_globals, cont.line))
    values = "".join(
        f"{cont.local_text(name) if name in bound else cont.values.bind(MISSING)}, "
        for name in state
    )
    fixed = "".join(f"{cont.value(v)}, " for v in cont.stack if v is not NULL)
    cont.glue.resumes.append(f"{driver}: the loop at line {cont.line} runs in Python, its body as "
                             f"{body.frame.display_name}; state ({', '.join(state)})")  # fmt: skip
    cells = cont.cells_text(spec.cell_names)
    items = f"{cont.value(iterable)}, " if is_for else ""
    cont.glue.emit(f"return {driver}({cells}, {items}({values}), ({fixed}))", cont.line)


def _cannot(tx, why: str):
    return tx.state.graph_break("unsupported_opcode", f"the loop cannot run split: {why}")
