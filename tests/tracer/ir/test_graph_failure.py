"""`graph_failure.snapshot` and `restore`: the arrays a failing graph may have written get their
values and flags back before the frame runs again eagerly, whatever holds their memory."""

from __future__ import annotations

import numpy as np

from tcompile.tracer.ir.graph_failure import restore, snapshot


class _Foreign:
    """Memory NumPy sees through the array interface (a torch tensor's, a device runtime's)."""

    def __init__(self, owner: np.ndarray):
        self.__array_interface__ = owner.__array_interface__
        self.owner = owner


def test_an_array_over_another_librarys_memory_gets_its_values_back():
    foreign = np.asarray(_Foreign(np.arange(4.0)))  # writeable, yet refuses the flag set to True
    read_only = np.arange(3)
    saved = snapshot((foreign, read_only), ())
    read_only.flags.writeable = False
    foreign[:] = -1.0  # what the failing graph wrote
    restore(saved)
    assert foreign.tolist() == [0.0, 1.0, 2.0, 3.0] and foreign.flags.writeable
    assert read_only.flags.writeable  # as it was when the graph started
