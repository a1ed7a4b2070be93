"""GPU: tcompile's triton backend next to NumPy, CuPy and torch.compile on NumPy code.

Run from the repository root::

    python bench/gpu.py                 # on a CUDA GPU, large inputs (2^24-2^26 elements)
    python bench/gpu.py --small         # a quick look on a GPU (2^20 elements)
    TRITON_INTERPRET=1 python bench/gpu.py --smoke   # tiny inputs on the CPU (Triton's
                                        # interpreter, torch CPU tensors): checks, not speed

The corpus is ``gpu_kernels.py`` (plain NumPy functions, ``np`` a module global). For each
function, warm calls of, side by side in one run:

* numpy:          the plain function on the CPU (NumPy's own threads and BLAS);
* cupy:           the same code with ``np`` rebound to ``cupy``, CuPy arrays on the device;
* torch.compile:  ``torch.compile(torch.compiler.wrap_numpy(fn))`` on CUDA tensors (the first
                  call, the compile, is limited to ``--compile-timeout`` seconds);
* tc np-io:       ``tc.compile(fn, backend="triton")`` with NumPy arrays in and out (the host
                  copies included);
* tc resident:    the same with arrays resident on the device (torch tensors, or CuPy arrays),
                  when the backend accepts them: a one-line probe decides, else the column is
                  skipped and the reason printed.

Every optional library (cupy, torch, triton) is imported lazily; a missing one skips its column
with the reason. Times are medians of interleaved batches (the variants of a function take
turns, the order rotated every round), each batch about 20 ms of warm calls between two device
synchronisations; "x" is NumPy's time / the variant's time (higher is faster). Each variant's
first call, on fresh copies of the inputs, is checked against NumPy's: dtype, shape, allclose
(float64 rtol 1e-7, float32 1e-4, integers exact, both with an absolute tolerance scaled by
the largest value), and every array argument afterwards (in-place updates must be visible to
the caller). Timed calls then reuse one set of inputs per variant (in-place kernels keep
updating it).

Then: the device-to-device copy bandwidth (bytes read + written / time of a large copy), and
for memory-bound functions the % of it reached (a function's bytes: its array inputs read, its
outputs and in-place updated inputs written); host overhead of compiled calls on tiny inputs
against 30 µs + 10 µs per kernel launched; host<->device copies through the backend's path;
geometric means and the targets.
"""

from __future__ import annotations

import argparse
import copy
import gc
import glob
import math
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_kernels  # noqa: E402

COLUMNS = ("numpy", "cupy", "torch.compile", "tc np-io", "tc resident")
GPU_COLUMNS = COLUMNS[1:]
BATCH_S = 0.02  # a timed batch lasts about this long
SLOW_S = 0.25  # a variant slower than this per call gets at most SLOW_SAMPLES batches
SLOW_SAMPLES = 3
TARGET_BW = 0.80  # memory-bound fused kernels: fraction of the measured copy bandwidth
TARGET_D2H_GBS = 20.0
TARGET_H2D_OF_PAGEABLE = 0.9  # "at the pageable limit": within 10% of the best pageable H2D
OVERHEAD_BASE_US, OVERHEAD_PER_KERNEL_US = 30.0, 10.0


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


# -- the environment: which columns can run, and on what ---------------------------------------


@dataclass
class Env:
    mode: str  # "cuda" (a GPU) or "cpu" (torch CPU tensors, Triton's interpreter)
    torch: object = None
    cupy: object = None
    tc: object = None
    torch_device: str = "cpu"
    resident: str = ""  # "torch" or "cupy": what the tc resident column passes
    skipped: dict = field(default_factory=dict)  # column -> why
    notes: list = field(default_factory=list)

    def sync(self) -> None:
        if self.mode == "cuda":
            if self.torch is not None:
                self.torch.cuda.synchronize()
            if self.cupy is not None:
                self.cupy.cuda.Device().synchronize()


def setup(args) -> Env:
    has_gpu = bool(glob.glob("/dev/nvidia[0-9]*"))
    if args.smoke and not has_gpu and os.environ.get("TRITON_INTERPRET") is None:
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
        print("note: no GPU here; set TRITON_INTERPRET=1 for the tcompile columns")
    env = Env(mode="cpu")
    try:
        import torch

        env.torch = torch
        if torch.cuda.is_available():
            env.mode, env.torch_device = "cuda", "cuda"
    except Exception as e:  # noqa: BLE001 - a broken install is a skipped column too
        env.skipped["torch.compile"] = f"torch not importable ({first_line(e)})"
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        cupy.zeros(1)
        env.cupy = cupy
        env.mode = "cuda"
    except Exception as e:  # noqa: BLE001 - ImportError, or no device / driver
        env.skipped["cupy"] = f"cupy not usable here ({first_line(e)})"
    if env.mode == "cuda" and env.torch is not None and not env.torch.cuda.is_available():
        env.skipped["torch.compile"] = "torch sees no CUDA device (a CPU-only torch?)"
    if env.mode == "cpu" and not args.smoke:
        env.notes.append("no GPU: the device columns run on the CPU; --smoke is the sensible run")
    for column in args.skip:
        env.skipped[column] = "--skip"
    try:
        import tcompile as tc
        from tcompile.backend import triton as tc_triton

        reason = tc_triton.unavailable()
        if reason:
            env.skipped["tc np-io"] = env.skipped["tc resident"] = reason
        else:
            env.tc = tc
    except Exception as e:  # noqa: BLE001
        env.skipped["tc np-io"] = env.skipped["tc resident"] = f"tcompile: {first_line(e)}"
    if env.tc is not None and "tc resident" not in env.skipped:
        probe_resident(env, args.resident)
    return env


def device_array(env: Env, kind: str, value):
    """``value`` (a NumPy array, else passed as is) as a fresh device array of ``kind``."""
    if not isinstance(value, np.ndarray):
        return value
    if kind == "cupy":
        return env.cupy.asarray(value)
    if kind == "torch":
        return env.torch.from_numpy(value.copy()).to(tc_torch_device(env))
    return value.copy()


def tc_torch_device(env: Env):
    """Where the triton backend keeps tensors (cuda:0, or the CPU under the interpreter)."""
    if env.tc is not None:
        from tcompile.backend.triton import device

        return device.current_device().torch_device
    return env.torch_device


def probe_resident(env: Env, wanted: str) -> None:
    """Whether tc.compile(backend="triton") takes device arrays: one small fullgraph function."""
    kinds = ["torch", "cupy"] if wanted == "auto" else [wanted]
    reasons = []
    for kind in kinds:
        lib = env.torch if kind == "torch" else env.cupy
        if lib is None:
            reasons.append(f"{kind}: not available")
            continue

        def probe(x):
            return np.sin(x) * 2.0 + 1.0

        x = np.linspace(0.0, 1.0, 64)
        try:
            got = env.tc.compile(probe, backend="triton", fullgraph=True)(
                device_array(env, kind, x)
            )
            if kind == "torch" and not isinstance(got, env.torch.Tensor):
                raise TypeError(f"torch tensor in, {type(got).__name__} out")
            if kind == "cupy" and not isinstance(got, env.cupy.ndarray):
                raise TypeError(f"cupy array in, {type(got).__name__} out")
            if not np.allclose(to_numpy(got), probe(x)):
                raise ValueError("wrong values")
        except Exception as e:  # noqa: BLE001
            reasons.append(f"{kind} arrays not accepted yet ({first_line(e)})")
            continue
        env.resident = kind
        env.notes.append(f"tc resident: {kind} arrays on the device")
        return
    env.skipped["tc resident"] = "; ".join(reasons)


def to_numpy(value):
    """A column's result or argument as NumPy (from CuPy, torch, NumPy scalars)."""
    if isinstance(value, np.ndarray):
        return value
    module = type(value).__module__.partition(".")[0]
    if module == "torch":
        return value.detach().cpu().numpy()
    if module == "cupy":
        return value.get()
    return np.asarray(value)


# -- correctness ---------------------------------------------------------------------------------


def outputs(result) -> tuple:
    if result is None:
        return ()
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def compare(got, want) -> str:
    """What differs between ``got`` and NumPy's ``want`` ("" when they match)."""
    got, want = to_numpy(got), to_numpy(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if want.dtype.kind not in "fc":
        return "" if np.array_equal(got, want) else f"{np.count_nonzero(got != want)} values differ"
    rtol = 1e-7 if want.dtype.itemsize >= 8 else 1e-4
    finite = want[np.isfinite(want)]
    scale = float(np.max(np.abs(finite))) if finite.size else 1.0
    if np.allclose(got, want, rtol=rtol, atol=rtol * max(scale, 1e-30), equal_nan=True):
        return ""
    with np.errstate(all="ignore"):
        err = np.nanmax(np.abs(got.astype(np.float64) - want) / max(scale, 1e-300))
    return f"max error {err:.1e} of the largest value"


def check(result, args, want, want_args, orig_args) -> str:
    got, wanted = outputs(result), outputs(want)
    if len(got) != len(wanted):
        return f"{len(got)} outputs, NumPy {len(wanted)}"
    for i, (g, w) in enumerate(zip(got, wanted)):
        problem = compare(g, w)
        if problem:
            return f"out{i}: {problem}"
    for i, (a, w, o) in enumerate(zip(args, want_args, orig_args)):
        if not isinstance(w, np.ndarray):
            continue
        problem = compare(a, w)
        if problem:
            updated = not np.array_equal(w, o, equal_nan=True)
            lost = updated and np.array_equal(to_numpy(a), o, equal_nan=True)
            what = (
                "in-place update lost" if lost else ("in-place arg" if updated else "input changed")
            )
            return f"arg{i} ({what}): {problem}"
    return ""


# -- calls and timing ----------------------------------------------------------------------------


class CompileTimeout(Exception):
    pass


def first_call(env: Env, fn, args, limit_s: float):
    """(result, error, seconds): one synchronised call, interrupted after ``limit_s`` (SIGALRM;
    a compile that swallowed the interrupt still counts as timed out)."""
    fired = []

    def on_alarm(signum, frame):
        fired.append(True)
        raise CompileTimeout(f"compile did not finish in {limit_s:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    start = time.perf_counter()
    result = error = None
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, limit_s)
            result = fn(*args)
            env.sync()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Exception as e:  # noqa: BLE001 - every failure is a table cell
        error = e
    finally:
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    if fired:
        error = CompileTimeout(f"compile did not finish in {limit_s:g} s")
    return result, error, seconds


def batch_s(env: Env, fn, args, number: int) -> float:
    """Seconds per call over ``number`` calls between two synchronisations (GC off; NumPy's
    overflow warnings off: in-place kernels such as gemm grow their arrays call after call)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        with np.errstate(all="ignore"):
            env.sync()
            start = time.perf_counter()
            for _ in range(number):
                fn(*args)
            env.sync()
            return (time.perf_counter() - start) / number
    finally:
        if gc_was_on:
            gc.enable()


def median_times(env: Env, variants: dict, repeat: int, batch: float = BATCH_S, errors=None):
    """``{name: median seconds per call}``: batches interleaved, order rotated each round. A
    variant that raises is dropped, its error put in ``errors`` (else raised)."""
    names = list(variants)
    number, limit = {}, {}
    samples: dict = {}
    for name in names:
        fn, args = variants[name]
        try:
            per_call = batch_s(env, fn, args, 1)  # warm, and sizes the batches
        except Exception as e:
            if errors is None:
                raise
            errors[name] = e
            continue
        number[name] = max(1, min(1000, int(batch / max(per_call, 1e-7))))
        limit[name] = SLOW_SAMPLES if per_call > SLOW_S else repeat
        samples[name] = []
    names = list(samples)
    for rnd in range(repeat):
        k = rnd % len(names) if names else 0
        for name in names[k:] + names[:k]:
            if name in samples and len(samples[name]) < limit[name]:
                fn, args = variants[name]
                try:
                    samples[name].append(batch_s(env, fn, args, number[name]))
                except Exception as e:
                    if errors is None:
                        raise
                    errors[name] = e
                    del samples[name]
    return {name: statistics.median(s) for name, s in samples.items()}


def kernel_seconds(env: Env, fn, args) -> float | None:
    """GPU time of the kernels one call launches (copies and memsets left out), by torch's
    profiler: the tc np-io call's device work without its host copies. Median of 3 calls."""
    if env.mode != "cuda" or env.torch is None:
        return None
    from torch.profiler import ProfilerActivity, profile

    totals = []
    for _ in range(3):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(*args)
            env.sync()
        total = 0.0
        for event in prof.events():
            if getattr(event.device_type, "name", "") != "CUDA":
                continue
            if event.name.startswith(("Memcpy", "Memset", "memcpy", "memset")):
                continue
            total += event.time_range.elapsed_us()
        totals.append(total / 1e6)
    return statistics.median(totals)


# -- one function --------------------------------------------------------------------------------


@dataclass
class Cell:
    seconds: float | None = None  # median warm call
    problem: str = ""  # "" ok; else a wrong result or an error, first line
    error: bool = False  # problem is an error (nothing timed), not a mismatch
    compile_s: float | None = None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.seconds is not None and not self.problem


@dataclass
class Row:
    name: str
    bound: str
    cells: dict
    bytes_moved: int
    kernels: int | None = None
    externs: int | None = None
    kernel_s: float | None = None  # profiled tc kernel time (GPU only)

    def speedup(self, column: str) -> float | None:
        base, cell = self.cells["numpy"], self.cells.get(column)
        if cell is None or cell.seconds is None or base.seconds is None:
            return None
        return base.seconds / cell.seconds


def tc_kernel_counts(compiled) -> tuple[int | None, int | None]:
    from tcompile.tracer.ir.compiled_graph import GENERATED_KINDS

    try:
        details = compiled.__tc_compiled__.entries[-1].report.compiled.details
    except Exception:  # noqa: BLE001 - no graph (a break at the start, an eager frame)
        return None, None
    kinds = [getattr(d, "kind", "") for d in details]
    return sum(k in GENERATED_KINDS for k in kinds), kinds.count("extern")


def make_variants(env: Env, fn, args_np, torch_backend: str) -> dict:
    """{column: (callable, argument maker)}, for the columns that can run."""
    variants = {"numpy": (fn, lambda: copy.deepcopy(args_np))}
    if "cupy" not in env.skipped:
        variants["cupy"] = (gpu_kernels.rebind(env.cupy)[fn.__name__],
                            lambda: tuple(device_array(env, "cupy", a) for a in args_np))  # fmt: skip
    if "torch.compile" not in env.skipped:
        torch = env.torch
        torch._dynamo.reset()
        compiled = torch.compile(
            torch.compiler.wrap_numpy(fn), backend=torch_backend, dynamic=False
        )
        dev = env.torch_device

        def torch_args():
            return tuple(torch.from_numpy(a.copy()).to(dev) if isinstance(a, np.ndarray) else a
                         for a in args_np)  # fmt: skip

        variants["torch.compile"] = (compiled, torch_args)
    if "tc np-io" not in env.skipped:
        variants["tc np-io"] = (env.tc.compile(fn, backend="triton", dynamic=False),
                                lambda: copy.deepcopy(args_np))  # fmt: skip
    if "tc resident" not in env.skipped:
        variants["tc resident"] = (env.tc.compile(fn, backend="triton", dynamic=False),
                                   lambda: tuple(device_array(env, env.resident, a) for a in args_np))  # fmt: skip
    return variants


def graph_breaks(env: Env, column: str) -> int:
    if column.startswith("tc"):
        return env.tc.counters()["graph_breaks"]
    if column == "torch.compile":
        try:
            from torch._dynamo.utils import counters

            return sum(counters["graph_break"].values())
        except Exception:  # noqa: BLE001
            return 0
    return 0


def measure(env: Env, case, size: str, opts) -> Row:
    fn = case.fn
    args_np = case.make(np.random.default_rng(0), size)
    orig = copy.deepcopy(args_np)
    want_args = copy.deepcopy(args_np)
    want = fn(*want_args)
    written = sum(a.nbytes for a, o in zip(want_args, orig)
                  if isinstance(a, np.ndarray) and not np.array_equal(a, o, equal_nan=True))  # fmt: skip
    moved = (sum(a.nbytes for a in orig if isinstance(a, np.ndarray)) + written
             + sum(to_numpy(o).nbytes for o in outputs(want)))  # fmt: skip
    row = Row(fn.__name__, case.bound, {}, moved)
    variants = make_variants(env, fn, args_np, opts.torch_backend)
    timed = {}
    for column, (call, make_args) in variants.items():
        cell = row.cells[column] = Cell()
        try:
            args = make_args()
        except Exception as e:  # noqa: BLE001 - e.g. out of device memory
            cell.problem, cell.error = f"inputs: {first_line(e)}", True
            continue
        breaks = graph_breaks(env, column)
        limit = (
            opts.compile_timeout if column in ("torch.compile", "tc np-io", "tc resident") else 1e6
        )
        result, error, seconds = first_call(env, call, args, limit)
        if column != "numpy":
            cell.compile_s = seconds
        if error is not None:
            cell.problem, cell.error = first_line(error), True
            if isinstance(error, CompileTimeout) and env.torch is not None:
                env.torch._dynamo.reset()
            continue
        breaks = graph_breaks(env, column) - breaks
        if breaks:
            cell.note = f"{breaks} graph break{'s' * (breaks > 1)}"
        cell.problem = check(result, args, want, want_args, orig)
        if column == "tc np-io":
            row.kernels, row.externs = tc_kernel_counts(call)
        del result, args
        timed[column] = (call, make_args())
    errors: dict = {}
    times = median_times(env, timed, opts.repeat, errors=errors)
    for column, seconds in times.items():
        row.cells[column].seconds = seconds
    for column, error in errors.items():
        cell = row.cells[column]
        cell.problem, cell.error = f"a timed call: {first_line(error)}", True
    if "tc np-io" in timed and not row.cells["tc np-io"].error:
        try:
            row.kernel_s = kernel_seconds(env, *timed["tc np-io"])
        except Exception as e:  # noqa: BLE001
            env.notes.append(f"profiling {row.name}: {first_line(e)}")
    del timed, variants
    free(env)
    return row


def free(env: Env) -> None:
    gc.collect()
    if env.mode == "cuda":
        if env.torch is not None:
            env.torch.cuda.empty_cache()
        if env.cupy is not None:
            env.cupy.get_default_memory_pool().free_all_blocks()


# -- device-wide measurements --------------------------------------------------------------------


def copy_bandwidth(env: Env, nbytes: int) -> float | None:
    """Device-to-device copy, GB/s counting bytes read + written: a large torch (else CuPy) copy."""
    n = nbytes // 8
    if env.torch is not None and (env.mode == "cpu" or env.torch.cuda.is_available()):
        src = env.torch.rand(n, dtype=env.torch.float64, device=env.torch_device)
        dst = env.torch.empty_like(src)

        def run():
            dst.copy_(src)
    elif env.cupy is not None:
        src = env.cupy.random.random(n)
        dst = env.cupy.empty_like(src)

        def run():
            dst[...] = src
    else:
        return None
    seconds = median_times(env, {"copy": (run, ())}, 9, batch=0.05)["copy"]
    return 2 * nbytes / seconds / 1e9


def host_copies(env: Env, nbytes: int) -> list[tuple[str, float]]:
    """GB/s of host<->device copies: the backend's own path (``Device.from_host``/``to_host``),
    and torch/CuPy's pageable copies for reference."""
    results = []
    host = np.random.default_rng(1).random(nbytes // 8)

    def gbs(label, run, repeat=5):
        try:
            run()
            env.sync()
            samples = []
            for _ in range(repeat):
                env.sync()
                start = time.perf_counter()
                value = run()
                env.sync()
                samples.append(time.perf_counter() - start)
                del value
            results.append((label, nbytes / statistics.median(samples) / 1e9))
        except Exception as e:  # noqa: BLE001
            results.append((f"{label}: {first_line(e)}", float("nan")))

    if env.tc is not None:
        from tcompile.backend.triton import device

        dev = device.current_device()
        tensor = dev.from_host(host)
        gbs("tc H2D  Device.from_host (pageable NumPy in)", lambda: dev.from_host(host))
        gbs("tc D2H  Device.to_host (what a NumPy-out result costs)",
            lambda: dev.to_host(tensor, scalar=False))  # fmt: skip
        del tensor
    if env.torch is not None and env.mode == "cuda" and env.torch.cuda.is_available():
        torch = env.torch
        gbs("torch H2D pageable (torch.from_numpy(a).to('cuda'))",
            lambda: torch.from_numpy(host).to("cuda"))  # fmt: skip
        tensor = torch.from_numpy(host).to("cuda")
        gbs("torch D2H into fresh pageable (.cpu().numpy())", lambda: tensor.cpu().numpy())
    if env.cupy is not None:
        cupy = env.cupy
        gbs("cupy H2D pageable (cupy.asarray(a))", lambda: cupy.asarray(host))
        array = cupy.asarray(host)
        gbs("cupy D2H (array.get())", lambda: array.get())
    free(env)
    return results


def overhead_table(env: Env, opts) -> list[tuple]:
    """Per-call wall time of compiled calls on tiny inputs (the "smoke" sizes): on a GPU, host
    overhead (the kernels take a few µs); rows (name, kernels, externs, numpy µs, np-io µs,
    resident µs)."""
    rows = []
    for case in selected(opts):
        args_np = case.make(np.random.default_rng(0), "smoke")
        variants = {"numpy": (case.fn, copy.deepcopy(args_np))}
        compiled = None
        for column in ("tc np-io", "tc resident"):
            if column in env.skipped:
                continue
            call = env.tc.compile(case.fn, backend="triton", dynamic=False)
            kind = "numpy" if column == "tc np-io" else env.resident
            args = tuple(device_array(env, kind, a) for a in args_np)
            _, error, _ = first_call(env, call, args, opts.compile_timeout)
            if error is None:
                variants[column] = (call, args)
                compiled = compiled or call
        kernels, externs = tc_kernel_counts(compiled) if compiled else (None, None)
        times = median_times(env, variants, max(5, opts.repeat), errors={})
        rows.append((case.fn.__name__, kernels, externs,
                     *(times.get(c, float("nan")) * 1e6 for c in ("numpy", "tc np-io", "tc resident"))))  # fmt: skip
    return rows


# -- printing ------------------------------------------------------------------------------------


def fmt_time(cell: Cell | None, speedup: float | None) -> str:
    if cell is None:
        return "skip"
    if cell.seconds is None:
        return "TIMEOUT" if cell.problem.startswith("CompileTimeout") else "FAIL"
    text = f"{cell.seconds * 1e3:.4g}"
    if speedup is not None:
        text += f" {speedup:.3g}x" if speedup < 1000 else f" {speedup:.0f}x"
    return text + ("!" if cell.problem else "")


def print_tables(env: Env, rows: list[Row], copy_gbs: float | None) -> None:
    columns = [c for c in COLUMNS if c not in env.skipped]
    width = max(14, max(len(r.name) for r in rows) + 1)
    head = f"{'function':<{width}}{'bound':<11}" + "".join(f"{c + ' ms':>19}" for c in columns)
    print("times: median ms per warm call, 'Nx' = NumPy's time / this (higher is faster); "
          "'!' = wrong result")  # fmt: skip
    print(head)
    print("-" * len(head))
    for r in rows:
        cells = "".join(f"{fmt_time(r.cells.get(c), r.speedup(c) if c != 'numpy' else None):>19}"
                        for c in columns)  # fmt: skip
        print(f"{r.name:<{width}}{r.bound:<11}{cells}")

    check_cols = [c for c in columns if c != "numpy"]
    print("\ncorrectness against NumPy (dtype, shape, allclose, in-place updates); "
          "first call's seconds (compile + run) in brackets")  # fmt: skip
    table, failures = [], []
    for r in rows:
        texts = []
        for c in check_cols:
            cell = r.cells[c]
            status = "ok" if not cell.problem else ("TIMEOUT" if cell.problem.startswith("CompileTimeout")
                                                     else "ERROR" if cell.error else "WRONG")  # fmt: skip
            if cell.problem:
                failures.append((r.name, c, status, cell.problem))
            seconds = f" [{cell.compile_s:.1f}s]" if cell.compile_s is not None else ""
            texts.append(status + (f" ({cell.note})" if cell.note else "") + seconds)
        kernels = "" if r.kernels is None else f"{r.kernels} kernels, {r.externs} externs"
        table.append((r.name, texts, kernels))
    cw = max([len(c) for c in check_cols] + [len(t) for _, texts, _ in table for t in texts]) + 3
    head = f"{'function':<{width}}" + "".join(f"{c:>{cw}}" for c in check_cols) + "   tc kernels"
    print(head)
    print("-" * len(head))
    for name, texts, kernels in table:
        print(f"{name:<{width}}" + "".join(f"{t:>{cw}}" for t in texts) + f"   {kernels}")
    if failures:
        print("\nfailures and mismatches (first line):")
        for name, column, status, problem in failures:
            print(f"  {name:<{width}} {column:<14} {status:<8} {problem[:160]}")

    if copy_gbs is None:
        return
    bw_cols = [c for c in ("cupy", "torch.compile", "tc resident") if c in columns]
    profiled = any(r.kernel_s for r in rows)
    if profiled:
        bw_cols.append("tc kernels")
    print(f"\n% of the measured copy bandwidth ({copy_gbs:.0f} GB/s, bytes read + written) "
          "reached by memory-bound functions ('*' = needs several passes, not in the target)"
          + ("; tc kernels: GPU time of the kernels of a tc np-io call, by torch's profiler "
             "(host copies and externs left out)" if profiled else ""))  # fmt: skip
    head = f"{'function':<{width}}{'MB moved':>10}" + "".join(f"{c + ' %':>17}" for c in bw_cols)
    print(head)
    print("-" * len(head))
    for r in rows:
        if r.bound not in ("memory", "multi-pass"):
            continue
        texts = []
        for c in bw_cols:
            if c == "tc kernels":
                seconds = r.kernel_s
            else:
                seconds = r.cells[c].seconds if r.cells[c].ok else None
            texts.append(f"{percent(r, seconds, copy_gbs):.0f}" if seconds else "-")
        name = r.name + ("*" if r.bound == "multi-pass" else "")
        print(f"{name:<{width}}{r.bytes_moved / 1e6:>10.4g}" + "".join(f"{t:>17}" for t in texts))


def us(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f}"


def percent(row: Row, seconds: float | None, copy_gbs: float) -> float:
    if not seconds:
        return float("nan")
    return 100 * row.bytes_moved / seconds / 1e9 / copy_gbs


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else float("nan")


def print_targets(env: Env, rows, copy_gbs, copies, overhead) -> None:  # noqa: C901 - one report of every target, in order
    print(
        "\ngeometric means of the speedup over NumPy, on the functions each column ran correctly:"
    )
    for c in COLUMNS[1:]:
        if c in env.skipped:
            print(f"  {c:<14} skipped: {env.skipped[c]}")
            continue
        ok = [r for r in rows if r.cells[c].ok]
        value = f"{geomean([r.speedup(c) for r in ok]):8.3g}x" if ok else "     n/a"
        print(f"  {c:<14} {value}  ({len(ok)} of {len(rows)} functions)")

    def ratio(a: str, b: str):
        both = [
            r for r in rows if a in r.cells and b in r.cells and r.cells[a].ok and r.cells[b].ok
        ]
        return geomean([r.cells[b].seconds / r.cells[a].seconds for r in both]), len(both)

    checks = []
    resident = "tc resident" if "tc resident" not in env.skipped else None
    for other in ("torch.compile", "cupy"):
        for mine in ("tc resident", "tc np-io"):
            if mine in env.skipped or other in env.skipped:
                continue
            value, n = ratio(mine, other)
            if not n:
                print(f"  {mine} vs {other}: n/a (no function both ran correctly)")
                continue
            print(f"  {mine} vs {other}: {value:.3g}x ({other}'s time / {mine}'s, geomean over "
                  f"the {n} functions both ran correctly; > 1: {mine} is faster)")  # fmt: skip
    profiled = [r for r in rows if r.kernel_s and "torch.compile" in r.cells and r.cells["torch.compile"].ok
                and r.cells["tc np-io"].ok]  # fmt: skip
    if profiled:
        value = geomean([r.cells["torch.compile"].seconds / r.kernel_s for r in profiled])
        print(f"  tc kernels (profiled, no host work) vs torch.compile: {value:.3g}x over "
              f"{len(profiled)} functions: a bound on what device-resident calls can reach")  # fmt: skip
    print("\ntargets:")
    if resident and "torch.compile" not in env.skipped:
        value, n = ratio(resident, "torch.compile")
        checks.append((f"device-resident geomean >= torch.compile's: {value:.3g}x over {n} functions"
                       if n else "device-resident geomean >= torch.compile's: no function both ran correctly",
                       value >= 1.0 if n else None))  # fmt: skip
    else:
        why = env.skipped.get("tc resident") or env.skipped.get("torch.compile")
        checks.append((f"device-resident geomean >= torch.compile's: not measured ({why})", None))
    fused = [r for r in rows if r.bound == "memory"]
    if copy_gbs and env.mode == "cuda":
        source = "tc resident" if resident else "tc kernels (profiled, np-io call)"
        pcts = []
        for r in fused:
            seconds = (
                r.cells[resident].seconds
                if resident and r.cells[resident].ok
                else (None if resident else r.kernel_s)
            )
            if seconds:
                pcts.append((r.name, percent(r, seconds, copy_gbs)))
        low = [f"{n} {p:.0f}%" for n, p in pcts if p < 100 * TARGET_BW]
        checks.append((f"memory-bound fused kernels >= {TARGET_BW:.0%} of copy bandwidth ({source}, "
                       f"{len(pcts)} of {len(fused)} measured){': below: ' + ', '.join(low) if low else ''}",
                       (not low) if pcts else None))  # fmt: skip
    else:
        checks.append((f"memory-bound fused kernels >= {TARGET_BW:.0%} of copy bandwidth: not measured "
                       f"(no GPU)", None))  # fmt: skip
    gbs = dict(copies)
    d2h = next((v for k, v in gbs.items() if k.startswith("tc D2H")), None)
    h2d = next((v for k, v in gbs.items() if k.startswith("tc H2D")), None)
    pageable = [v for k, v in gbs.items() if "H2D pageable" in k and not math.isnan(v)]
    if env.mode == "cuda" and d2h is not None:
        checks.append(
            (f"NumPy-out D2H >= {TARGET_D2H_GBS:.0f} GB/s: {d2h:.1f} GB/s", d2h >= TARGET_D2H_GBS)
        )
        if pageable and h2d is not None:
            best = max(pageable)
            checks.append((f"NumPy-in H2D at the pageable limit (>= {TARGET_H2D_OF_PAGEABLE:.0%} of the "
                           f"best pageable H2D here, {best:.1f} GB/s): {h2d:.1f} GB/s",
                           h2d >= TARGET_H2D_OF_PAGEABLE * best))  # fmt: skip
    else:
        checks.append(("host<->device copies: not measured (no GPU)", None))
    if env.mode == "cuda" and overhead:
        over = []
        measured = 0
        for name, kernels, _, _, npio, res in overhead:
            value = res if resident else npio
            if kernels is None or math.isnan(value):
                continue
            measured += 1
            budget = OVERHEAD_BASE_US + OVERHEAD_PER_KERNEL_US * kernels
            if value > budget:
                over.append(f"{name} {value:.0f}>{budget:.0f}")
        label = "tc resident" if resident else "tc np-io"
        checks.append((f"host overhead <= {OVERHEAD_BASE_US:.0f} µs + {OVERHEAD_PER_KERNEL_US:.0f} µs/kernel "
                       f"({label}, tiny inputs, {measured} functions){': over: ' + ', '.join(over) if over else ''}",
                       (not over) if measured else None))  # fmt: skip
    else:
        checks.append(("host overhead per compiled call: not measured (no GPU)", None))
    for text, met in checks:
        print(f"  {text} -> {'met' if met else 'NOT MET' if met is False else 'n/a'}")


def selected(opts) -> list:
    if not opts.only:
        return gpu_kernels.CASES
    names = set(opts.only.split(","))
    return [c for c in gpu_kernels.CASES if c.name in names]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="2^20 elements: a quick look on a GPU")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny inputs, every column that can run here (CPU: Triton's interpreter)",
    )
    parser.add_argument("--only", default="", help="comma-separated function names")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=GPU_COLUMNS,
        help="leave a column out (repeatable)",
    )
    parser.add_argument("--repeat", type=int, default=None, help="batches per variant (7; smoke 3)")
    parser.add_argument(
        "--compile-timeout",
        type=float,
        default=None,
        help="seconds for a first (compiling) call (120; smoke 60)",
    )
    parser.add_argument(
        "--torch-backend",
        default=None,
        help="torch.compile backend (inductor on a GPU, eager on the CPU)",
    )
    parser.add_argument("--time-limit", type=float, default=None,
                        help="seconds after which no further function is measured (the report "
                        "still follows): for a time-limited run on a lent GPU")  # fmt: skip
    parser.add_argument("--resident", default="auto", choices=("auto", "torch", "cupy"),
                        help="device arrays for the tc resident column")  # fmt: skip
    opts = parser.parse_args(argv)
    size = "smoke" if opts.smoke else "small" if opts.small else "large"
    opts.repeat = opts.repeat or (3 if opts.smoke else 7)
    opts.compile_timeout = opts.compile_timeout or (60.0 if opts.smoke else 120.0)

    env = setup(opts)
    if opts.torch_backend is None:
        # inductor on the CPU compiles C++ (about 20 s a function on 2 cores): too slow for --smoke
        opts.torch_backend = "inductor" if env.mode == "cuda" else "eager"
    versions = [f"numpy {np.__version__}"]
    for name in ("cupy", "torch", "triton"):
        module = sys.modules.get(name)
        versions.append(f"{name} {module.__version__}" if module else f"{name} -")
    where = "CUDA" if env.mode == "cuda" else "CPU"
    if env.mode == "cuda" and env.torch is not None and env.torch.cuda.is_available():
        where = env.torch.cuda.get_device_name()
    print(
        f"device: {where}; {', '.join(versions)}; TRITON_INTERPRET={os.environ.get('TRITON_INTERPRET', '')}"
    )
    print(f"sizes: {size} (largest array {gpu_kernels.ELEMENTS[size]} elements); {opts.repeat} "
          f"batches a variant; torch.compile backend {opts.torch_backend!r}, first call limited to "
          f"{opts.compile_timeout:g} s")  # fmt: skip
    for column, why in env.skipped.items():
        print(f"column {column} skipped: {why}")
    for note in env.notes:
        print(f"note: {note}")
    print()

    copy_bytes = {"large": 512, "small": 256, "smoke": 8}[size] * 2**20
    copy_gbs = copy_bandwidth(env, copy_bytes) if env.torch or env.cupy else None
    rows = []
    cases = selected(opts)
    started = time.perf_counter()
    for case in cases:
        if opts.time_limit and time.perf_counter() - started > opts.time_limit:
            print(f"time limit: {len(rows)} of {len(cases)} functions measured; not measured: "
                  f"{', '.join(c.name for c in cases[len(rows):])}\n")  # fmt: skip
            break
        rows.append(measure(env, case, size, opts))
        print(f"  measured {case.name}", file=sys.stderr, flush=True)
    print_tables(env, rows, copy_gbs)

    print("\nhost overhead: µs per warm call on tiny inputs (the smoke sizes)"
          + ("" if env.mode == "cuda" else "; on the CPU interpreter these are not GPU numbers"))  # fmt: skip
    overhead = overhead_table(env, opts) if env.tc is not None else []
    if overhead:
        print(
            f"{'function':<16}{'kernels':>8}{'externs':>8}{'budget':>8}{'numpy':>9}{'tc np-io':>10}{'tc resident':>12}"
        )
        for name, kernels, externs, np_us, npio, res in overhead:
            budget = (
                "-"
                if kernels is None
                else f"{OVERHEAD_BASE_US + OVERHEAD_PER_KERNEL_US * kernels:.0f}"
            )
            print(f"{name:<16}{'-' if kernels is None else kernels:>8}{'-' if externs is None else externs:>8}"
                  f"{budget:>8}{us(np_us):>9}{us(npio):>10}{us(res):>12}")  # fmt: skip
    else:
        print("  skipped: " + env.skipped.get("tc np-io", ""))

    copies = host_copies(env, copy_bytes)
    print(f"\nhost<->device copies, {copy_bytes // 2**20} MiB float64, GB/s (median of 5)"
          + ("" if env.mode == "cuda" else "; interpreter: the 'device' is host memory (zero-copy)"))  # fmt: skip
    for label, gbs in copies:
        print(f"  {label:<60} {gbs:8.1f}")
    if copy_gbs is not None:
        print(f"  {'device-to-device copy (bytes read + written)':<60} {copy_gbs:8.1f}")
    print_targets(env, rows, copy_gbs, copies, overhead)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
