"""Runs a split loop (`loops.split_loop`): its compiled body once per iteration, or the whole
loop as plain Python where compiling the body does not pay.

Each iteration of a split loop calls the body function through its frame cache (guards, glue,
graph, and the resume functions of the body's own breaks), a few µs; a body with little NumPy
work per iteration (``if v > 0: n += 1`` over an array's values, a CRC's bit loop) is then many
times slower than the plain loop. So the driver measures: on the first iterations it times
chunks of iterations run through the compiled body (only chunks that compiled nothing) against
chunks of the same loop run plainly (`bytecode.loop_function`, budgeted: it hands the state
back after so many iterations), alternating once the body is warm (a compiled chunk compiled
nothing), from one iterator and state. When the compiled chunks are slower
(`PayCheck.SLOWER`), or when the body is compiled anew on iteration after iteration (it
specialises on what changes every time, as ``x[:i + 1]``), the loop runs as plain Python from
then on, for this call and the next ones, and a report says so
(``tc.explain``'s "Loops:", the widget). Either way the iterations run in order, each once, as
Python runs them: the plain loop is the frame's own code, so results, prints and exceptions
stay eager's.
"""

from __future__ import annotations

import operator
import statistics
import time
import types
from types import CodeType

from .. import report
from ..bytecode import analysis
from ..bytecode.body_function import CONTINUE, RETURNED, BodySpec
from ..bytecode.loop_function import EXHAUSTED, LoopSpec, loop_code
from ..bytecode.resume import ResumeSpec
from ..config import config
from .loop_record import LoopRecord


class _Missing:
    def __repr__(self) -> str:
        return "<unbound local>"


MISSING = _Missing()  # the value of a state local that no iteration has set yet
_END = object()  # what next() gives for an exhausted iterator


class PayCheck:
    """Whether a split loop's compiled body pays, from timed chunks of iterations run each way.
    A chunk is compared with the one of the other kind timed right before it (either one
    first, in turn): the cost of an iteration drifts as a loop runs (and other processes come
    and go), such pairs do not. Plain Python wins only if two rounds of pairs say so in a row
    (a burst of other processes during one round keeps the compiled body). ``verdict`` is None
    while it does not know yet, else the reason the loop runs plainly ("" when the compiled
    body pays)."""

    CHUNK = 8  # iterations per timed chunk (fewer where calls run fewer iterations)
    ROUNDS = 7  # pairs of chunks, compiled and plain, timed before deciding (their median)
    # The compiled body is kept unless it is this much slower than plain Python: below, the
    # call stays within 10% of plain, and noise (a few % between chunks) decides nothing.
    SLOWER = 1.08
    RECOMPILED = 5  # iterations in a row that recompiled a frame: it will not stop

    def __init__(self):
        self.pairs: list[tuple[float, float]] = []  # (compiled, plain) ns per iteration
        self.slower_rounds = 0  # rounds of pairs in a row where the compiled body was slower
        self.waiting: tuple[bool, float] | None = None  # the last chunk, if timed: (plain, ns)
        self.recompiled = 0  # iterations in a row that recompiled a frame (a guard failed)
        self.fewest = None  # the fewest iterations a call ran while learning
        self.plain_next = False  # the kind of the next chunk: they alternate
        self.verdict: str | None = None

    def chunk(self) -> int:
        return max(1, min(self.CHUNK, (self.fewest or 2 * self.CHUNK) // 2))

    def iteration(self, recompiled: bool) -> None:
        """One more iteration ran through the compiled body; ``recompiled``: some frame it
        reached failed its guards and compiled anew (frames met for the first time do not
        count: a body's branches and breaks compile as iterations first take them)."""
        self.recompiled = self.recompiled + 1 if recompiled else 0
        if self.recompiled >= self.RECOMPILED:
            self.verdict = (f"its body was compiled again on each of {self.recompiled} iterations "
                            "in a row (it specialises on what changes every iteration)")  # fmt: skip

    def untimed(self) -> None:
        """A chunk ran that could not be timed (it compiled something, or left the loop)."""
        self.waiting = None

    def timed(self, plain: bool, ns: int, count: int) -> None:
        rate, waiting = ns / count, self.waiting
        self.waiting = (plain, rate)
        if waiting is None or waiting[0] == plain:
            return
        self.pairs.append((waiting[1], rate) if plain else (rate, waiting[1]))
        if len(self.pairs) < self.ROUNDS:
            return
        ratio = statistics.median(c / p for c, p in self.pairs)
        if ratio <= self.SLOWER:
            self.verdict = ""
            return
        self.slower_rounds += 1
        if self.slower_rounds < 2:
            self.pairs.clear()  # a second round, to be sure
            return
        compiled, plain_ns = (statistics.median(side) for side in zip(*self.pairs))
        self.verdict = (f"its compiled body took {compiled / 1e3:.3g} µs per iteration, the plain "
                        f"loop {plain_ns / 1e3:.3g} µs: too little work per iteration for "
                        "compiling to pay")  # fmt: skip

    def call_ran(self, iterations: int) -> None:
        self.fewest = iterations if self.fewest is None else min(self.fewest, iterations)


class LoopDriver:
    """Called by the glue with the frame's cells, a for loop's iterable, the loop's state and
    the values under the loop on the stack; returns what the frame returns. ``body`` is the
    compiled body function, ``after`` what follows an exhausted for loop (None: a while loop,
    whose exits are inside the body), ``spec`` the loop (`BodySpec`), ``line`` its line."""

    def __init__(self, body, after: AfterLoop | None, spec: BodySpec, f_globals: dict, line: int):
        self.body, self.after = body, after
        self.spec, self.f_globals, self.line = spec, f_globals, line
        self.check = PayCheck()
        # budgeted or not -> the plain loop (its code, when each call gives it its cells)
        self.made: dict[bool, types.FunctionType | CodeType] = {}
        self.plain: bool | None = None  # decided: the loop runs plainly (True) or compiled

    def __call__(self, cells, *args):
        if self.after is None:
            (state, under), it = args, None
        else:
            iterable, state, under = args
            it = iter(iterable)
        if self.plain is None and self.body.frame.specialises:  # known from another entry
            self.plain = True
            self._publish(self.body.frame.specialises)
        if self.plain is None:
            return self._learn(cells, it, state, under)
        if self.plain:
            return self._run_plain(cells, it, state, under)
        return self._run_compiled(cells, it, state, under)

    def _run_compiled(self, cells, it, state: tuple, under: tuple):
        body = self.body
        if it is None:
            while True:
                out = body(cells, *state, *under)
                if out[0]:
                    return out[1]
                state = out[1:]
        for item in it:
            out = body(cells, *state, *under, item)
            if out[0]:
                return out[1]
            state = out[1:]
        return self.after(cells, state, under)

    def _run_plain(self, cells, it, state: tuple, under: tuple):
        loop = self._function(False, cells)
        out = loop(*state, *under) if it is None else loop(*state, *under, it)
        if out[0] == RETURNED:
            return out[1]
        return self.after(cells, out[1:], under)  # EXHAUSTED

    def _function(self, budgeted: bool, cells):
        """The plain loop (`bytecode.loop_function`), with the frame's cells (a frame without
        cells: one function for every call)."""
        made = self.made.get(budgeted)
        if made is None:
            spec = self.spec
            code = loop_code(LoopSpec(spec.code, spec.head, spec.start, spec.state, spec.under,
                                      budgeted))  # fmt: skip
            made = self.made[budgeted] = (
                code if code.co_freevars else types.FunctionType(code, self.f_globals)
            )
        if isinstance(made, CodeType):
            return types.FunctionType(made, self.f_globals, made.co_name, None, cells)
        return made

    def _learn(self, cells, it, state: tuple, under: tuple):
        """Run the loop in timed chunks, compiled and plain in turn, until `PayCheck` decides
        (over as many calls as that takes); then the rest of the loop the way it chose."""
        check, ran = self.check, 0
        while check.verdict is None:
            if check.plain_next:
                out, count = self._plain_chunk(cells, it, state, under)
                check.plain_next = False
            else:
                out, count = self._compiled_chunk(cells, it, state, under)
                # Plain chunks come only after compiled ones that compiled nothing: the body's
                # entries are made by the calls that first reach their states, compiled (a
                # state first met in a plain chunk would be compiled on a later call instead).
                check.plain_next = check.waiting is not None and config.split_loop_pay_check
            ran += count
            if out[0] == RETURNED:
                check.call_ran(ran)
                return out[1]
            if out[0] == EXHAUSTED:
                check.call_ran(ran)
                return self.after(cells, out[1:], under)
            state = out[1:]
        self.plain = bool(check.verdict)
        if check.recompiled >= check.RECOMPILED:  # the body's code does it, whoever runs it
            self.body.frame.specialises = check.verdict
        if self.plain:
            self._publish(check.verdict)
            return self._run_plain(cells, it, state, under)
        return self._run_compiled(cells, it, state, under)

    def _compiled_chunk(self, cells, it, state: tuple, under: tuple) -> tuple[tuple, int]:
        """Up to a chunk of iterations through the compiled body, timed if none of them
        compiled anything: (the body's last result, or EXHAUSTED and the state; iterations)."""
        check, body, counters = self.check, self.body, report.recorder.counters
        count, warm = check.chunk(), True
        out = (CONTINUE, *state)
        start = time.perf_counter_ns()
        for done in range(count):
            misses, recompiles = counters["cache_misses"], counters["recompiles"]
            if it is None:
                out = body(cells, *state, *under)
            else:
                item = next(it, _END)
                if item is _END:
                    out = (EXHAUSTED, *state)
                    count = done
                    break
                out = body(cells, *state, *under, item)
            warm = warm and counters["cache_misses"] == misses
            check.iteration(counters["recompiles"] != recompiles)
            if out[0] == RETURNED or check.verdict is not None:
                check.untimed()
                return out, done + 1
            state = out[1:]
        if warm and count:
            check.timed(False, time.perf_counter_ns() - start, count)
        else:
            check.untimed()
        return out, count

    def _plain_chunk(self, cells, it, state: tuple, under: tuple) -> tuple[tuple, int]:
        """Up to a chunk of iterations of the plain loop, timed: (its result, iterations)."""
        check = self.check
        count = check.chunk()
        known = -1 if it is None else operator.length_hint(it, -1)
        if known >= 0:  # the iterator knows how many items are left: the chunk may use them up
            count = min(count, known)
        if count < 1:  # nothing left (as far as the iterator knows): the compiled body sees
            return self._compiled_chunk(cells, it, state, under)
        loop = self._function(True, cells)
        start = time.perf_counter_ns()
        out = loop(*state, *under, count) if it is None else loop(*state, *under, it, count)
        elapsed = time.perf_counter_ns() - start
        if out[0] == CONTINUE or (out[0] == EXHAUSTED and known == count):
            check.timed(True, elapsed, count)  # every iteration ran: none left the loop
        else:
            check.untimed()
        return out, count

    def _publish(self, reason: str) -> None:
        code = self.spec.code
        frame = self.body.frame
        record = LoopRecord(code.co_filename, self.line, 0, False, reason=reason,
                            kind="for" if self.spec.is_for else "while", plain=True)  # fmt: skip
        report.recorder.publish(report.CompileReport(
            f"[{frame.frame_id}/{len(frame.entries)}]", f"{code.co_qualname} (loop at line "
            f"{self.line})", code.co_filename, self.line, report.PLAIN, loops=(record,),
        ))  # fmt: skip


class AfterLoop:
    """What follows an exhausted for loop: a resume function per set of bound locals (a local
    the loop would have set stays unbound when it ran no iteration)."""

    def __init__(self, code: CodeType, exit_offset: int, state: tuple[str, ...],
                 under: tuple[str, ...], make_resume):  # fmt: skip
        self.code, self.exit, self.under = code, exit_offset, under
        live = analysis.live_locals_at(code, exit_offset)
        self.names = [(n, name) for n, name in enumerate(state) if name in live]
        self.make_resume = make_resume
        self.made: dict[tuple, object] = {}
        self.all_set = None  # the resume function when every live local is set (the usual case)

    def __call__(self, cells, state: tuple, under: tuple):
        if self.all_set is not None and not under and not any(v is MISSING for v in state):
            return self.all_set(cells, *[state[n] for n, _ in self.names])
        names = tuple(name for n, name in self.names if state[n] is not MISSING)
        made = self.made.get(names)
        if made is None:
            spec = ResumeSpec(self.code, self.exit, self.under, names)
            made = self.made[names] = (spec, self.make_resume(spec))
            if len(names) == len(self.names):
                self.all_set = made[1]
        spec, resume = made
        values = tuple(state[n] for n, _ in self.names if state[n] is not MISSING)
        return resume(cells, *spec.arrange(under, values))
