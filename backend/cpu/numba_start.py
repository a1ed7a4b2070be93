"""numba's start, on a thread of its own while the user goes on.

A process whose kernels all sit in the disk cache still pays numba's start at its first call:
importing numba (0.15-0.25 s here) and, at the first machine code it loads, filling its typing
and target registries (0.2-0.35 s), beside 0.15 s of ours. A function compiled for the cpu
backend starts both in the background (`start`), so that its first call, in a notebook a cell
or more later, finds numba ready; a call that comes sooner waits for them as it would have
anyway (the import lock, numba's compiler lock) and takes no longer. A fork waits for them.

A graph compiled before the start is over runs its NumPy code at its first call, which does not
wait for it (`while_starting`).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading

_thread: threading.Thread | None = None
_lock = threading.Lock()


def start() -> None:
    """Start numba in the background, once per process (nothing where numba is missing)."""
    global _thread
    with _lock:
        if _thread is None and importlib.util.find_spec("numba") is not None:
            _thread = threading.Thread(target=_warm, name="tcompile-numba-start", daemon=True)
            _thread.start()
            # not stopped halfway through an import at exit (nor waited for without end), nor
            # forked there: a child would find the module locks it held taken for good
            atexit.register(_thread.join, 60)
            os.register_at_fork(before=lambda: _thread.join(60))


def ready() -> bool:
    """Whether numba's start is over (or was never begun here: a direct use of the backend, a
    Dask worker, which load numba as they go)."""
    thread = _thread
    return thread is None or not thread.is_alive()


def wait() -> None:
    """Wait for numba's start, if begun."""
    thread = _thread
    if thread is not None:
        thread.join()


def _warm() -> None:
    import numba
    import numpy as np
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    from . import native_loops  # noqa: F401 - numba and the modules that run kernels

    with global_compiler_lock:  # what numba's first load of cached code does first
        cpu_target.target_context.refresh()
    numba.typeof(np.zeros(1))  # its first array type imports numpy.ma
