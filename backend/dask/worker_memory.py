"""A Dask worker's resident memory once its chunk kernels are built: LLVM's pages given back.

A Dask worker counts its process's resident memory (RSS) against its memory limit: that is
where it spills, pauses and is restarted. The cpu backend's kernels are machine code that numba
builds with LLVM, a shared library (llvmlite's) of about 100 MB. Compiling a kernel, or linking
one from the disk cache, touches 60-70 MiB of that library's code and constants, and those
pages stay resident for the worker's life, though no task needs them again: a chunk kernel runs
the machine code it was built into. On a 64 MiB chunk that is more than fusion saves (a column
sum of ``sqrt(abs(x)) * 2 + 1``: one chunk of temporaries).

So, after a task during which LLVM ran, a worker drops those pages (`settle`): the clean pages
of the library's read-only mappings, ``madvise(MADV_DONTNEED)``, which the OS maps again from
the page cache if LLVM runs again (a new kernel: a few ms more). A mapping the process wrote to
(the relocations the loader made) is left alone: dropping it would lose them. Where there is no
``/proc/self/smaps`` (not Linux) nothing is dropped.
"""

from __future__ import annotations

import ctypes
import mmap
import sys

COMPILER_LIBRARY = "libllvmlite"  # the shared library numba's LLVM lives in

_llvm = None  # the listener to numba's LLVM events, once numba is imported in this process


def settle() -> None:
    """In a Dask worker, after a task: drop LLVM's pages if LLVM ran since the last time."""
    if _in_worker() and _llvm_ran():
        release_compiler_pages()


def release_compiler_pages() -> int:
    """Drop this process's resident pages of LLVM's read-only, unwritten mappings; the bytes
    of mappings dropped (0 where ``/proc/self/smaps`` is missing)."""
    try:
        mappings = _clean_compiler_mappings()
    except OSError:  # no /proc: not Linux (nor mmap.MADV_DONTNEED)
        return 0
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return sum(stop - start for start, stop in mappings
               if madvise(start, stop - start, mmap.MADV_DONTNEED) == 0)  # fmt: skip


def compiler_resident_bytes() -> int:
    """How much of LLVM's library is resident in this process (what `release_compiler_pages`
    can drop, and the written pages it keeps)."""
    return sum(kib * 1024 for _, _, _, kib, _ in _compiler_mappings())


def _clean_compiler_mappings() -> list[tuple[int, int]]:
    """(start, stop) of each read-only mapping of LLVM's library that holds no written page."""
    return [(start, stop) for start, stop, perms, _, written in _compiler_mappings()
            if perms in ("r-xp", "r--p") and written == 0]  # fmt: skip


def _compiler_mappings() -> list[tuple[int, int, str, int, int]]:
    """(start, stop, permissions, resident KiB, written KiB) of each mapping of LLVM's
    library in ``/proc/self/smaps``."""
    found: list[list] = []
    current = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            key, _, rest = line.partition(" ")
            if not key.endswith(":"):  # a mapping's first line: "start-stop perms ... path"
                fields = rest.split()
                current = None
                if len(fields) >= 5 and COMPILER_LIBRARY in fields[4].rsplit("/", 1)[-1]:
                    start, stop = (int(v, 16) for v in key.split("-"))
                    current = [start, stop, fields[0], 0, 0]
                    found.append(current)
            elif current is not None and key in ("Rss:", "Anonymous:"):
                current[3 if key == "Rss:" else 4] = int(rest.split()[0])
    return [tuple(m) for m in found]


def _llvm_ran() -> bool:
    """Whether LLVM ran in this process since the last call (numba's ``numba:llvm_lock``
    events; until numba is imported, never; at the first call after its import, it may
    have)."""
    global _llvm
    numba = sys.modules.get("numba")
    if numba is None or _importing(numba):
        return False
    if _llvm is None:
        _llvm = _listen_to_llvm()
        return True
    ran, _llvm.ran = _llvm.ran, False
    return ran


def _importing(module) -> bool:
    """Whether ``module`` is still being imported, by another thread maybe (a worker's other
    task): importing from it now could deadlock with that import, which the import system then
    breaks by handing one of the two a module half made. CPython marks it on the spec."""
    return getattr(getattr(module, "__spec__", None), "_initializing", False)


def _listen_to_llvm():
    from numba.core import event

    class LLVMRuns(event.Listener):
        ran = False

        def on_start(self, event):
            pass

        def on_end(self, event):  # LLVM's pages are touched by now (a release in between too)
            self.ran = True

    listener = LLVMRuns()
    event.register("numba:llvm_lock", listener)
    return listener


def _in_worker() -> bool:
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        distributed.get_worker()
    except ValueError:
        return False
    return True
