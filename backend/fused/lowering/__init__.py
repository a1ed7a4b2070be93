"""A graph, for one set of input shapes, as a plan (`plan`): kernels to generate and steps to run.

Each graph value becomes a `tensors.Tensor` (loadable element by element, nothing computed), a
`Known` Python value, or a `HostValue` computed per call on the host. Values are *realized* into
buffers only where memory must exist: the graph's outputs, arguments of extern steps, targets of
writes. A realization is a one-store `loop_ir.Kernel`; `fusion` then merges them. What the
kernels cannot do runs as an extern step, marked "extern" in the report with the reason.

The modules:

- `core`: the walk (`GraphLowering`): each node's rule, the plan's steps, realizations
- `registry`: the rules by what they lower (``@lowers(np.where)``, ``@lowers(kind=REDUCTION)``)
- `elementwise`: ufuncs and operators, where, clip, casts, copies, joins, outer, constants
- `reductions`: sums and friends, argmax, mean/var/std
- `selections`: boolean-mask selections reduced whole (``x[m].sum()``)
- `views`: basic indexing, transposes, reshapes, broadcasts
- `indexing`: gathers, assignments, ``np.add.at``
- `library`: matmul and scans by the array library
- `loops`: loop nodes as device loops
- `conds`: cond nodes as a host branch between two programs
- `host`: Python values on the host (folded or computed per call)
- `externs`: NumPy's own call on the host
- `outputs`: the outputs, and values in memory as NumPy lays them out
- `shared`: casts, constants, known values, what the graph writes
"""

from __future__ import annotations

# the rules register themselves as they are imported
from . import conds, elementwise, host, indexing, library, loops, reductions, views  # noqa: F401
from .core import lower
from .shared import written_nodes

__all__ = ["lower", "written_nodes"]
