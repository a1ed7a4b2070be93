"""Compiled functions on Dask arrays against plain ``dask.array``, on a LocalCluster of worker
processes with a memory limit, on arrays larger than one worker's limit: side by side in one
run, warm medians.

    python bench/dask_cluster.py                 # 1.5 GiB arrays, 2 workers of 1 GiB
    python bench/dask_cluster.py --quick         # 128 MiB arrays (a check that it all runs)
    python bench/dask_cluster.py --only soft     # the workloads whose names start so
    python bench/dask_cluster.py --from-file     # the input read from a file, not made
    python bench/dask_cluster.py --chunk-rows 2048  # chunks of 128 MiB (Dask's default size)

Each workload runs three ways on the same lazily generated input (its chunks made by the
workers from a seed, so no array crosses from this process; with ``--from-file`` read from a
file of the same values, written once, as large data lives on disk): the plain function on Dask arrays
(Dask's own operations), and ``tc.compile(fn, backend=B)`` with B = eager (NumPy chunk kernels)
and cpu (numba chunk kernels, one thread each: the workers have one thread each). Columns: wall
time of ``.compute()`` of a reduction of the result (max |result|, so results stay on the
workers), its ratio to plain Dask's, tasks after Dask's optimizer, the peak resident memory
of the fuller worker over the timed runs (its VmHWM, reset before them; each column runs on
a cluster of its own, a compiled one after its first calls), and max |compiled - plain| (0 is
bitwise).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # the workers inherit it: one thread per task

import dask  # noqa: E402
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

import tcompile as tc  # noqa: E402
from tcompile.backend.dask.runner import task_count  # noqa: E402


def transcendental_chain(x):
    return np.sqrt(np.sin(x) ** 2 + np.cos(x) ** 2 * 0.5) + np.arctan2(x, 1.5)


def stencil_steps(u):
    for _ in range(4):  # periodic heat: rows cut into chunks (a halo), columns whole
        lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
        u = u + 0.1 * (lap - 4 * u)
    return u


def slice_stencil(u):
    for _ in range(
        4
    ):  # a diffusion step by slices: each step a row and a column shorter at both ends
        inner = u[1:-1, 1:-1]
        u = inner + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * inner)
    return u


def column_reduction(x):
    return np.sum(np.sqrt(np.abs(x)) * 2.0 + 1.0, axis=0)


def softmax_rows(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


WORKLOADS = {
    "chain": transcendental_chain,
    "stencil": stencil_steps,
    "slices": slice_stencil,
    "reduction": column_reduction,
    "softmax": softmax_rows,
}


def _input(rows: int, cols: int, chunk_rows: int, path: Path | None = None):
    """The input: made by the workers from a seed, or with ``path`` read from a file of raw
    float64 (the same values), each chunk's rows by one task, as large data lives on disk."""
    if path is None:
        # uniform: made 4x faster than standard_normal, so the workloads take the time
        rng = da.random.default_rng(0)
        return rng.uniform(-4.0, 4.0, (rows, cols), chunks=(chunk_rows, cols))
    chunks = ((chunk_rows,) * (rows // chunk_rows), (cols,))
    return da.map_blocks(_read_rows, dtype=np.float64, chunks=chunks, path=str(path), cols=cols)


def _read_rows(path: str, cols: int, block_info=None):
    (start, stop), _ = block_info[None]["array-location"]
    count = (stop - start) * cols
    return np.fromfile(path, np.float64, count, offset=start * cols * 8).reshape(-1, cols)


def _renamed(x):
    """``x`` under keys of its own (the same values): the check's graph then shares no key with
    the timed runs', whose tasks Dask's optimizer fused otherwise (the scheduler warns of a key
    whose task changed between two graphs)."""
    return x.map_blocks(_same, dtype=x.dtype, name=f"check-{x.name}")


def _same(block):
    return block


def _input_file(client, rows: int, cols: int, chunk_rows: int) -> Path:
    """The seeded input written once to a file (kept for later runs)."""
    path = Path(tempfile.gettempdir()) / f"tcompile_dask_input_{rows}x{cols}.f64"
    if not path.exists() or path.stat().st_size != rows * cols * 8:
        generated = _input(rows, cols, chunk_rows)
        with open(path, "wb") as out:
            for block in range(rows // chunk_rows):
                client.compute(generated.blocks[block], sync=True).tofile(out)
    return path


def _reset_peak() -> None:
    """A worker's peak resident memory starts again from what it holds now (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _peak_mib() -> float:
    """A worker's peak resident memory since `_reset_peak` (VmHWM), in MiB."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _timed(client, result, repeat: int, limit: float, peaks: list | None = None):
    """Median seconds of computing max |result| (one run, when it took over a minute), or
    None where a run did not finish within ``limit`` seconds. ``peaks`` gets the fuller
    worker's peak resident memory over the runs (MiB)."""
    summary = abs(result).max()
    times = []
    client.run(_reset_peak)
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            future = client.compute(summary)
            try:
                future.result(timeout=limit)
            except TimeoutError:
                client.cancel(future)
                return None
            times.append(time.perf_counter() - start)
            if times[-1] > 60:
                break
    finally:
        if peaks is not None:
            peaks.append(max(client.run(_peak_mib).values()))
    return statistics.median(times)


@contextlib.contextmanager
def _cluster(limit: str):
    """A client of a fresh LocalCluster: 2 worker processes of one thread and ``limit`` memory
    each. (Each column gets its own: restarting one cluster's workers between columns lost
    both now and then, their nannies starting no new process.)"""
    # (its closing logs the workers' heartbeats cut short: not news)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=limit,
                      dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:  # fmt: skip
        yield client


def _column(fn, x, backend: str, args, limit: str, check: bool) -> tuple:
    """A workload's column on fresh workers: (median seconds or None, the fuller worker's peak
    MiB, tasks, max |compiled - plain| as text where ``check``)."""
    with _cluster(limit) as client:
        peaks: list[float] = []
        if backend == "plain":
            seconds = _timed(client, fn(x), args.repeat, args.limit, peaks)
            return seconds, peaks[0], task_count((fn(x),)), ""
        compiled = tc.compile(fn, backend=backend)
        for _ in range(2):  # plan, kernels built; the cpu tiers' timed trials on each
            client.compute(abs(compiled(x)).max(), sync=True)  # worker (7 chunks) run out
        seconds = _timed(client, compiled(x), args.repeat, args.limit, peaks)
        diff = "-"
        if check:
            checked = _renamed(x)
            found = client.compute(abs(compiled(checked) - fn(checked)).max(), sync=True)
            diff = f"{float(found):.1e}"
        return seconds, peaks[0], task_count((compiled(x),)), diff


def _seconds(t) -> str:
    return "did not finish" if t is None else f"{t:.2f}"


def _ratio(t, plain) -> str:
    if t is None:
        return "-"
    return f"{t / plain:.2f}x" if plain is not None else "finished"


def _past(t, plain, making) -> str:
    """``t``'s ratio to ``plain`` with the input's making (``making``) taken off both."""
    if None in (t, plain, making) or plain <= making:
        return "-"
    return f"{max(t - making, 0) / (plain - making):.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="128 MiB arrays")
    parser.add_argument("--only", default="", help="comma-separated name prefixes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=180, help="seconds a run may take")
    parser.add_argument("--from-file", action="store_true",
                        help="read the input from a file (written once) instead of making it")  # fmt: skip
    parser.add_argument("--chunk-rows", type=int, default=0,
                        help="rows per chunk (default 1024: 64 MiB; 2048 is Dask's default "
                        "chunk size, 128 MiB)")  # fmt: skip
    args = parser.parse_args()
    rows, cols, chunk_rows, limit = (24576, 8192, 1024, "1GiB")
    if args.quick:
        rows, cols, chunk_rows, limit = (4096, 4096, 512, "512MiB")
    chunk_rows = args.chunk_rows or chunk_rows
    prefixes = [p for p in args.only.split(",") if p]
    names = [n for n in WORKLOADS if not prefixes or any(n.startswith(p) for p in prefixes)]
    size = rows * cols * 8 / 2**20
    with _cluster(limit) as client:
        path = _input_file(client, rows, cols, chunk_rows) if args.from_file else None
        making = _timed(client, _input(rows, cols, chunk_rows, path), args.repeat, args.limit)
    source = f"read from {path}" if path else "made from a seed by the workers"
    print(f"# 2 worker processes x 1 thread, memory limit {limit} each; input {rows}x{cols} "
          f"float64 ({size:.0f} MiB) in {rows // chunk_rows} chunks of {chunk_rows} rows, "
          f"{source}; dask {dask.__version__}; medians of {args.repeat}")  # fmt: skip
    print(f"# the input made and max |x| computed alone: {_seconds(making)} s (in every column's "
          "time; the last ratio leaves it out of both)")  # fmt: skip
    print(
        "| workload | plain dask s | tc eager s | ratio | tc cpu s | ratio | cpu ratio past the "
        "input | tasks plain / eager / cpu | worker peak MiB plain / eager / cpu | max abs diff eager / "
        "cpu |"
    )
    print("| --- | --: | --: | --: | --: | --: | --: | --- | --- | --- |")
    for name in names:
        fn, x = WORKLOADS[name], _input(rows, cols, chunk_rows, path)
        columns = {"plain": _column(fn, x, "plain", args, limit, check=False)}
        for backend in ("eager", "cpu"):
            columns[backend] = _column(fn, x, backend, args, limit, columns["plain"][0] is not None)
        (plain, *_), (eager, *_, diff_eager), (cpu, *_, diff_cpu) = columns.values()
        tasks = " / ".join(str(c[2]) for c in columns.values())
        peaks = " / ".join(f"{c[1]:.0f}" for c in columns.values())
        print(f"| {name} | {_seconds(plain)} | {_seconds(eager)} | {_ratio(eager, plain)} | "
              f"{_seconds(cpu)} | {_ratio(cpu, plain)} | {_past(cpu, plain, making)} | {tasks} | "
              f"{peaks} | {diff_eager} / {diff_cpu} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
