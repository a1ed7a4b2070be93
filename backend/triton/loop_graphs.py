"""A counted loop's iterations as one CUDA graph: recorded once, replayed by later calls.

A loop node runs its body's program once per iteration, and on a GPU each iteration costs
40-120 µs of host work (finding the body's program, its launches), far more than its kernels
take. A ``for`` loop whose body runs on the device alone is recorded whole (its launches for
every iteration) into a CUDA graph (``torch.cuda.CUDAGraph``) by the second call that has the
same key; that call and later ones copy their arrays into the graph's own, replay it, and copy
them back: the host's work per call no longer grows with the trip count.

What makes a replay equal to a run: everything the host decided while recording is decided the
same way (the key: the loop's host arguments by value, every array argument's dtype, shape and
strides), and nothing reads device values on the host (CUDA refuses such a read while it
records: the loop then runs as before, and that key is never tried again). Kept out: while
loops (their trip count is a device value), array arguments that share memory (the graph's own
copies would not), bodies with host steps (NumPy calls, uploads) in any of their programs.
``TCOMPILE_CUDA_GRAPHS=0`` turns recording off (to measure without it).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field

import numpy as np

from . import device

MAX_RECORDINGS = 4  # per loop: keys beyond these run as before


@dataclass
class Recording:
    graph: object  # torch.cuda.CUDAGraph
    inputs: list  # the graph's own tensors, one per array argument, in order
    outputs: tuple  # what the loop returned while recording (tensors the replay refills)
    error: object  # the graph's own error flag


@dataclass
class LoopGraphs:
    """The recordings of one loop step (a `fused.plan.DeviceLoop`) of a program, by key; the
    step's runner (`fused.target.Target.loop_runner`): ``graphs(call, body, args)``."""

    step: object = None
    recordings: dict = field(default_factory=dict)
    seen: set = field(default_factory=set)  # keys run once: the next call records
    refused: set = field(default_factory=set)  # keys CUDA would not record

    def __call__(self, call, body, args: list):
        """A replay's outputs where the loop may be recorded, else None."""
        if not recordable(self.step, body, call.device):
            return None
        return self.run(self.step.node.target, body, args, call.error, call.device)

    def run(self, runner, body, args: list, error, dev):
        """The loop's outputs from a replay, or None: the caller runs the loop itself."""
        key = _key(args)
        if key is None or key in self.refused or int(args[1]) < 1:  # args: first, count, ...
            return None
        recording = self.recordings.get(key)
        if recording is None:
            if key not in self.seen or len(self.recordings) >= MAX_RECORDINGS:
                self.seen.add(key)  # its programs are made and tuned by this plain run
                return None
            recording = self._record(key, runner, body, args, dev)
            if recording is None:
                return None
        return _replay(recording, args, error)

    def _record(self, key, runner, body, args: list, dev) -> Recording | None:
        torch = dev._torch
        own = [_own_copy(a, torch) if _is_tensor(a) else a for a in args]
        flag = dev.empty((1,), np.dtype(np.int32))
        flag.zero_()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                outputs = runner.drive(functools.partial(body, error=flag), *own)
        except Exception:  # a host read of a device value, an allocation CUDA refused...
            self.refused.add(key)
            return None
        recording = Recording(graph, [a for a in own if _is_tensor(a)], tuple(outputs), flag)
        self.recordings[key] = recording
        return recording


def recordable(step, body, dev) -> bool:
    """Whether a loop step may be recorded: a ``for`` loop on a CUDA device whose body's
    programs launch kernels and library calls only."""
    if dev.kind != "cuda" or os.environ.get("TCOMPILE_CUDA_GRAPHS", "1") == "0":
        return False
    if step.node.op != "loop" or not body.programs:
        return False
    return all(program is not None and all(s.device_only for s in program.steps)
               for program in body.programs.values())  # fmt: skip


def _replay(recording: Recording, args: list, error):
    tensors = [a for a in args if _is_tensor(a)]
    for own, tensor in zip(recording.inputs, tensors, strict=True):
        own.copy_(tensor)
    recording.error.zero_()
    recording.graph.replay()
    for own, tensor in zip(recording.inputs, tensors):
        tensor.copy_(own)  # what the body wrote in place, in this call's buffers
    error.copy_(error.maximum(recording.error))
    return recording.outputs


def _key(args: list) -> tuple | None:
    """What the host decides the recorded launches by; None: not recordable (an argument of
    another kind, or arrays that share memory)."""
    key, storages = [], set()
    for arg in args:
        if _is_tensor(arg):
            storage = arg.untyped_storage().data_ptr()
            if storage in storages:
                return None
            storages.add(storage)
            key.append(("tensor", arg.dtype, tuple(arg.shape), arg.stride()))
        elif arg is None or isinstance(arg, bool | int | float | complex | str | np.generic):
            key.append((type(arg), arg))
        else:
            return None
    return tuple(key)


def _is_tensor(value) -> bool:
    return device.array_kind(value) == "torch"


def _own_copy(tensor, torch):
    own = torch.empty_strided(tuple(tensor.shape), tensor.stride(), dtype=tensor.dtype,
                              device=tensor.device)  # fmt: skip
    own.copy_(tensor)
    return own
