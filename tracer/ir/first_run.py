"""Runs on the trace's examples, kept for the graph's first call: a loop's, and the whole
graph's.

A loop node is captured by tracing its body once; the trace then runs the whole loop on the
examples, so that it goes on with the loop's real results. The examples of graph inputs are
the caller's arrays, and every value the graph computes from them before the loop is computed
by the trace too: on the graph's first call (right after the trace) the loop gets the same
values again, and running it a second time would double the first call of a long loop.
`FirstRun` keeps that run's results; the first call takes them when every argument has the
same bits as the trace's (a backend that computes differently, like a GPU's, simply misses).

Kept only when replaying is exact: NumPy bodies are deterministic (``np.random`` breaks the
graph), the run showed no warning and met no floating-point error that eager code would not
ignore (those belong to the real run, which must show or raise them), and each result is an
array of its own with the layout eager code gives it, or one of the loop's arguments given
back (its writes are put into the caller's argument). Whatever is not sure runs the loop
again.
"""

from __future__ import annotations

import struct
from collections.abc import MutableMapping

import numpy as np

from . import quiet

MAX_BYTES = 1 << 30  # copies of arguments and results a first run may keep


class FirstRun:
    """The loop's results on arguments equal to ``before``, and what it wrote into them."""

    def __init__(self, before: list, written: dict, results: list):
        self.before = before  # the arguments' kinds and contents as the run began
        self.written = written  # argument position -> its contents after the run
        self.results = results  # a value, or `_Same`: an argument or earlier result again

    def replay(self, args: tuple) -> tuple | None:
        """The kept results when ``args`` are the arguments the trace ran on (their writes
        put into them); None otherwise."""
        if len(args) != len(self.before) or not all(map(_same, args, self.before)):
            return None
        for position, contents in self.written.items():
            np.copyto(args[position], contents)
        results: list = []
        for r in self.results:
            results.append(r.pick(args, results) if isinstance(r, _Same) else r)
        return tuple(results)


def replay_first_calls(functions: MutableMapping, kept: dict) -> None:
    """Each loop function ``functions[name]`` gets, for its first call only, the `FirstRun` kept
    under ``name``: the kept results when its arguments are the trace's, else the loop."""
    for name, first_run in kept.items():
        functions[name] = _first_call(functions, name, functions[name], first_run)


def _first_call(functions: MutableMapping, name: str, loop, first_run: FirstRun):
    def first_call(*args):
        functions[name] = loop  # every later call runs the loop
        results = first_run.replay(args)
        return loop(*args) if results is None else results

    return first_call


def first_call_from_trace(namespace: MutableMapping, name: str, graph_fn, inputs: list,
                          results: tuple) -> None:  # fmt: skip
    """The graph function ``namespace[name]`` gives back, at its first call, ``results``: the
    trace's own values of its outputs, computed by the very operations the graph runs, when
    its arguments are ``inputs``, the trace's examples (the caller's arrays themselves, and
    numbers of the same bits). A first call of a long graph on large arrays then costs one
    run of its operations (the trace's), not two. Every later call runs ``graph_fn``."""
    kept = [a if isinstance(a, np.ndarray) else _frozen(a) for a in inputs]

    def first_call(*args):
        namespace[name] = graph_fn
        if len(args) == len(kept) and all(map(_traced_with, args, kept)):
            return results
        return graph_fn(*args)

    namespace[name] = first_call


def _traced_with(arg, kept) -> bool:
    if isinstance(kept, np.ndarray):
        return arg is kept
    return kept is not None and _same(arg, kept)


class _Same:
    """A result that is the loop's argument (given back, maybe written) or an earlier result
    at ``position``: the same object again."""

    def __init__(self, of_args: bool, position: int):
        self.of_args, self.position = of_args, position

    def pick(self, args: tuple, results: list):
        return (args if self.of_args else results)[self.position]


def run_keeping(run, args: tuple, fp_ignored: frozenset[str],
                uninitialized: frozenset[int] = frozenset()) -> tuple[tuple, FirstRun | None]:  # fmt: skip
    """``run(*args)`` on the trace's examples, quiet (its warnings belong to the real run),
    and the `FirstRun` to replay on the first call, if exact. ``fp_ignored``: the kinds of
    fp error eager code ignores at the loop; ``uninitialized``: the positions of arrays made
    by ``np.empty``, whose contents are whatever the memory held (other bits in the trace and
    at run time: only their dtype and shape must match, and they get the run's contents)."""
    before = [_frozen(a, i not in uninitialized) for i, a in enumerate(args)]
    with quiet.noting(fp_ignored) as noted:
        results = run(*args)
    if noted or any(b is None for b in before):
        return results, None
    # A read-only argument whose bits changed views memory the loop wrote through a writeable
    # one, whose contents the replay puts back: it is not written itself (it cannot be).
    written = {
        i: np.array(a, copy=True)
        for i, (a, b) in enumerate(zip(args, before, strict=True))
        if isinstance(a, np.ndarray)
        and a.flags.writeable
        and (i in uninitialized or not _same(a, b))
    }
    kept = [_kept(r, args, results[:j]) for j, r in enumerate(results)]
    kept_arrays = [v for _, v in before] + [*written.values(), *kept]
    size = sum(v.nbytes for v in kept_arrays if isinstance(v, np.ndarray))
    if any(k is None for k in kept) or size > MAX_BYTES:
        return results, None
    return results, FirstRun(before, written, kept)


def _frozen(value, contents: bool = True) -> tuple | None:
    """An argument's kind and a copy of its contents (or only its dtype and shape); None when
    it cannot be compared bit for bit."""
    if isinstance(value, np.ndarray | np.generic):
        if value.dtype.hasobject:
            return None
        return (type(value), np.array(value, copy=True) if contents else _Layout(value))
    if type(value) in (bool, int, float):
        return (type(value), value)
    return None


def _same(value, frozen: tuple) -> bool:
    kind, kept = frozen
    if type(value) is not kind:
        return False
    if kind is float:
        return struct.pack("<d", value) == struct.pack("<d", kept)  # -0.0, NaN's sign and payload
    if isinstance(kept, _Layout):
        return (value.dtype, value.shape) == (kept.dtype, kept.shape)
    if not isinstance(kept, np.ndarray):
        return value == kept
    value = np.asarray(value)
    return (
        value.dtype == kept.dtype
        and value.shape == kept.shape
        and np.array_equal(_bytes(value), _bytes(kept))
    )


class _Layout:
    """The dtype and shape of an array whose contents do not count."""

    def __init__(self, array: np.ndarray):
        self.dtype, self.shape = array.dtype, array.shape


def _bytes(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def _kept(result, args: tuple, earlier: tuple):
    """What the first call gives back for ``result``: a copy (the trace goes on writing into
    its examples), `_Same` for an argument or earlier result given back again; None when
    neither is exact (a view of another array: a copy would not share its memory)."""
    if not isinstance(result, np.ndarray):
        return result if isinstance(result, np.generic | bool | int | float) else None
    for of_args, others in ((True, args), (False, earlier)):
        for position, other in enumerate(others):
            if isinstance(other, np.ndarray) and np.may_share_memory(result, other):
                return _Same(of_args, position) if result is other else None
    copy = result.copy(order="K")
    if copy.strides != result.strides or copy.flags.writeable != result.flags.writeable:
        return None
    return copy
