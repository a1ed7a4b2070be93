"""Block sizes and warps for a kernel launch: a few candidates per kind of kernel, the fastest
measured at a kernel's first launch at a size, remembered in the process and on disk.

Block size alone moved a float64 haversine from 29% to 70% of the copy bandwidth on an H100
(shared/recipes/triton_gpu_facts.md), so sizes are measured, not guessed. A kernel that writes
memory it also reads (``x += 1``) runs more than once while it is measured: its written
buffers are put back before each run and after the last.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ..source_files import cache_dir


@dataclass(frozen=True)
class Config:
    """One launch configuration: ``XBLOCK`` rows or elements per program, ``RBLOCK`` elements of
    a row per step (reductions), ``num_warps``."""

    XBLOCK: int
    RBLOCK: int | None = None
    num_warps: int = 4

    def launch_options(self) -> dict:
        options = {"XBLOCK": self.XBLOCK, "num_warps": self.num_warps}
        if self.RBLOCK is not None:
            options["RBLOCK"] = self.RBLOCK
        return options


def candidates(xnumel: int, rnumel: int, *, reduction: bool, persistent: bool,
               interpreting: bool) -> list[Config]:  # fmt: skip
    """The configurations worth trying for a kernel of this size. Under Triton's interpreter
    one (each program is one NumPy evaluation: the largest blocks are fastest), unless
    ``TCOMPILE_AUTOTUNE=1`` asks for the GPU's set (tests of the tuner itself)."""
    if interpreting and os.environ.get("TCOMPILE_AUTOTUNE") != "1":
        return [_interpreter_config(xnumel, rnumel, reduction, persistent)]
    x = _pow2(xnumel)
    if not reduction:
        sizes = [b for b in (256, 512, 1024, 2048) if b <= max(x, 256)]
        return [Config(b, None, 4 if b <= 512 else 8) for b in sizes]
    if persistent:
        row = _pow2(rnumel)
        rows = [b for b in (1, 2, 4, 8, 16) if b <= x and b * row <= 16384] or [1]
        return [Config(b, row, 4 if b * row <= 2048 else 8) for b in rows]
    return [Config(b, r, 8) for b in (1, 4) for r in (512, 2048) if b <= x]


def compaction_config(xnumel: int, *, interpreting: bool) -> Config:
    """A compaction's one configuration: its two launches must cut the space alike, and its
    block's prefix sum is a scan of the whole block (not measured: the count launch's
    result decides the write launch's)."""
    if interpreting:
        return Config(min(_pow2(xnumel), 8192))
    return Config(1024, None, 4)


def _interpreter_config(xnumel: int, rnumel: int, reduction: bool, persistent: bool) -> Config:
    if not reduction:
        return Config(min(_pow2(xnumel), 8192))
    row = _pow2(rnumel) if persistent else 1024
    return Config(max(1, min(_pow2(xnumel), 16384 // row, 64)), row)


def _pow2(n: int) -> int:
    return 1 << max(0, (max(n, 1) - 1).bit_length())


_CHOSEN: dict[str, Config] = {}


def choose(key: str, configs: list[Config], run: Callable[[Config], None],
           synchronize: Callable[[], None], restore: Callable[[], None]) -> Config:  # fmt: skip
    """The fastest of ``configs`` for ``key`` (a kernel's source digest, its sizes, the device),
    measured by ``run`` unless known; ``restore`` puts written buffers back between runs."""
    if len(configs) == 1:
        return configs[0]
    if key in _CHOSEN or _load(key):
        return _CHOSEN[key]
    timings = []
    for config in configs:
        best = float("inf")
        for _ in range(2):  # the first run of a configuration compiles it
            restore()
            synchronize()
            start = time.perf_counter()
            run(config)
            synchronize()
            best = min(best, time.perf_counter() - start)
        timings.append((best, config))
    restore()
    chosen = min(timings, key=lambda t: t[0])[1]
    _CHOSEN[key] = chosen
    _save(key, chosen)
    return chosen


def _path():
    return cache_dir("triton") / "autotune.json"


def _load(key: str) -> bool:
    try:
        known = json.loads(_path().read_text())
    except (OSError, ValueError):
        return False
    if key in known:
        _CHOSEN[key] = Config(**known[key])
        return True
    return False


def _save(key: str, config: Config) -> None:
    path = _path()
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError):
        known = {}
    known[key] = asdict(config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: the choice stays in this process
