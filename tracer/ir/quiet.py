"""Warnings around tcompile's own work, changed for this thread only.

Tracing runs operations on example values; their warnings belong to the real run (the graph
runs the same operation at the user's line and warns there, on every call, as eager code does).
`warnings.catch_warnings` swaps process-wide state and would silence other threads running user
code meanwhile. Instead four filter entries are kept at the front of ``warnings.filters``. They
apply only on a thread in one of these modes (a category whose ``issubclass`` check, or a message
pattern whose ``match``, consults this thread's mode), so no other thread's warnings change:

    with silenced():            # an example run: no warning, no error from NumPy's fp checks
        y = np.log(x_example)
    with strict():              # folding a constant: any warning or fp error aborts the fold,
        c = np.sqrt(-1.0)       # so the operation goes into the graph and warns at run time
    with noting() as noted:     # an example run whose results may be kept for the real run:
        y = run_loop(x)         # dropped, as silenced, but ``noted`` tells that one came
    seen = watch()              # a graph run: its warnings show as usual, and are noted...
    unwatch()
    with skipping(seen):        # ...so that if it fails, the eager rerun does not show the
        run_eagerly()           # warnings the graph showed already (each warning once)

NumPy's floating-point warnings are controlled with ``np.errstate``, which is per thread already.
"""

from __future__ import annotations

import contextlib
import threading
import warnings

import numpy as np

_thread = threading.local()


def _mode() -> str | None:
    return getattr(_thread, "mode", None)


class _InMode(type):
    """Metaclass of the filter categories: a warning 'is' one only on a thread in that mode
    (in the noting mode, it is noted too)."""

    def __subclasscheck__(cls, subclass) -> bool:
        if _mode() != cls.mode:
            return False
        if cls.mode == "note":
            _thread.noted.append(subclass)
        return True


class _Silenced(Warning, metaclass=_InMode):
    mode = "ignore"


class _Strict(Warning, metaclass=_InMode):
    mode = "error"


class _Noted(Warning, metaclass=_InMode):
    mode = "note"


class _Notes:
    """A message pattern for the filters, consulted for every warning on every thread: on a
    thread rerunning a failed graph's frame it matches (so the entry ignores it) the next
    warning the graph showed already; on a thread running a graph it notes what is shown."""

    def match(self, text: str) -> bool:
        notes = getattr(_thread, "notes", None)
        if notes is not None:  # shown, or dropped as shown already: a rerun must not show it
            notes.append(text)
        skip = getattr(_thread, "skip", None)
        if skip and skip[0][0] == text:
            del skip[0]
            return True
        return False


_ENTRIES = [
    ("ignore", None, _Silenced, None, 0),
    ("error", None, _Strict, None, 0),
    ("ignore", None, _Noted, None, 0),
    ("ignore", _Notes(), Warning, None, 0),
]


def _install() -> None:
    """Put the entries first (user code and test runners insert filters in front)."""
    filters = warnings.filters
    if filters[: len(_ENTRIES)] != _ENTRIES:
        filters[:] = _ENTRIES + [f for f in filters if f not in _ENTRIES]
        warnings._filters_mutated()


@contextlib.contextmanager
def _in_mode(mode: str, fp: str):
    _install()
    previous = _mode()
    _thread.mode = mode
    try:
        with np.errstate(all=fp):
            yield
    finally:
        _thread.mode = previous


def silenced():
    """This thread's warnings are dropped and NumPy's fp errors ignored."""
    return _in_mode("ignore", "ignore")


def strict():
    """This thread's warnings become exceptions, and so do NumPy's fp errors."""
    return _in_mode("error", "raise")


@contextlib.contextmanager
def noting(ignored: frozenset[str] = frozenset()):
    """As `silenced`, but the list given is not empty once a warning came, or an fp error of
    a kind not ``ignored`` (eager code would show or raise it)."""
    _install()
    previous, previous_noted = _mode(), getattr(_thread, "noted", None)
    noted: list = []
    _thread.mode, _thread.noted = "note", noted
    try:
        kinds = {k: "ignore" if k in ignored else "call" for k in np.geterr()}
        with np.errstate(**kinds, call=lambda kind, flag: noted.append(kind)):
            yield noted
    finally:
        _thread.mode, _thread.noted = previous, previous_noted


def watch():
    """Start noting the warnings this thread shows; pass the result to `unwatch`."""
    _install()
    saved = getattr(_thread, "notes", None)
    _thread.notes = []
    return saved


def unwatch(saved, error: BaseException | None = None) -> list[str]:
    """Stop noting: the texts of the warnings shown since `watch`. A warning that ``error``
    is (a filter turned it into the exception) was raised, not shown: the rerun raises it."""
    notes = _thread.notes
    _thread.notes = saved
    if isinstance(error, Warning) and notes and notes[-1] == str(error):
        notes.pop()
    if saved is not None:
        saved.extend(notes)  # an enclosing watch saw them shown too
    return notes


@contextlib.contextmanager
def skipping(texts: list[str]):
    """Drop, in order, warnings with these texts (shown once already) while the block runs."""
    _install()
    skip = getattr(_thread, "skip", None)
    if skip is None:
        skip = _thread.skip = []
    mine = object()
    skip[:0] = [(text, mine) for text in texts]
    try:
        yield
    finally:
        skip[:] = [entry for entry in skip if entry[1] is not mine]
