"""Why a loop's body is not one node: `NotCaptured` (the loop is unrolled), and the two kinds
of it that its capture treats apart."""

from __future__ import annotations


class NotCaptured(Exception):
    """The body cannot be a loop node (the message says why); the loop is unrolled."""


class RaisesOnExamples(NotCaptured):
    """The body raises on the trace's examples (``error``: the user's exception)."""

    def __init__(self, message: str, error: BaseException):
        super().__init__(message)
        self.error = error


class KindChanges(NotCaptured):
    """A carried value changes kind (dtype, shape, class) in the body: after one iteration
    unrolled it may not (``total = 0`` becoming a float64 array), so the rest is tried again.
    ``name``: the local; ``entry``, ``end``: its values before the loop and after the body."""

    def __init__(self, message: str, name: str = "", entry=None, end=None):
        super().__init__(message)
        self.name, self.entry, self.end = name, entry, end
