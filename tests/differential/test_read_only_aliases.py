"""A read-only view of an array the graph writes: never written back, neither by the first
call's replay of a loop nor by the restore after a failure.

The trace runs a loop node on its examples and the graph's first call replays that run
(tracer/ir/first_run.py): it puts the run's contents into the arguments the run changed. A
read-only view of a written array changes too, but through the writeable one: putting
contents into it raised ``ValueError: assignment destination is read-only`` where eager code
returns normally. The same happened when a graph failed and the arrays it wrote were put back
(tracer/ir/graph_failure.py) with a read-only view among them, or with an array the graph made
read-only after writing it. Each case passes (or makes) a read-only view ``v`` of an array
``x`` that is written, and reads ``v``, or changes the flag of an array it writes.
"""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id


def read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def x_and_view(n=5, view=lambda x: x.view()):
    def build():
        x = np.arange(float(n))
        return x, read_only(view(x))

    return build


def x_view_and_index(idx, n=5):
    def build():
        x = np.arange(float(n))
        return x, read_only(x.view()), np.array(idx)

    return build


class Box:
    pass


# -- loops replayed on the first call -----------------------------------------------------------


def loop_writes_reads_view(x, v):
    for i in range(x.shape[0]):
        x[i] = v[i] + 1.0
    return x


def loop_writes_reads_view_ahead(x, v):
    for i in range(x.shape[0] - 1):
        x[i] = v[i + 1] * 2.0
    return x.sum()


def loop_whole_writes_reads_view(x, v):
    for i in range(3):
        x[:] = x + v[i]
    return x


def loop_reads_slice(x, v):
    for i in range(v.shape[0]):
        x[i] = v[i] + 1.0
    return x


def loop_returns_view_sum(x, v):
    total = 0.0
    for i in range(x.shape[0]):
        x[i] += 1.0
        total = total + v[i]
    return total


def loop_reads_reversed(x, v):
    for i in range(x.shape[0]):
        x[i] = v[i] - x[i]
    return x


def loop_on_rows_reads_transposed(m, t):
    for i in range(m.shape[0]):
        m[i] = t[i] * 0.5
    return m


def loop_writes_view_reads_base(w, v):
    for i in range(w.shape[0]):
        w[i] = v[i] * 3.0
    return w, v.sum()


def loop_reads_broadcast(x):
    b = np.broadcast_to(x, (2, x.shape[0]))
    for i in range(x.shape[0]):
        x[i] = b[1, i] + b[0, 0] + 1.0
    return x


def loop_reads_broadcast_of_temporary(x):
    t = x * 2.0
    b = np.broadcast_to(t, (3, t.shape[0]))
    for i in range(t.shape[0]):
        t[i] = b[2, i] + 1.0
    return t, b.sum()


def loop_reads_attribute_view(x, o):
    for i in range(x.shape[0]):
        x[i] = o.v[i] + 0.5
    return x


def loop_two_read_only_views(x, v, r):
    for i in range(x.shape[0]):
        x[i] = v[i] + r[i]
    return x


def loop_writes_x_and_new(x, v):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = v[i]
        x[i] = out[i] * 2.0
    return out, x


def loop_carried_reads_view(x, v):
    acc = np.zeros(2)
    for i in range(v.shape[0]):
        x[i] += 1.0
        acc = acc + v[i]
    return acc


def while_writes_reads_view(x, v):
    while x.max() < 40.0:
        x[:] = x * 2.0 + v
    return x


# -- a failure after the writes: the restore ----------------------------------------------------


def loop_then_take(x, v, idx):
    for i in range(x.shape[0]):
        x[i] = v[i] * 2.0
    return np.take(x, idx)


def loop_then_add_at(x, v, idx):
    for i in range(x.shape[0]):
        x[i] += v[i]
    np.add.at(x, idx, 1.0)
    return x


def read_view_write_then_take(x, v, idx):
    s = v[0]
    x += 1
    return np.take(v, idx) + s


def read_view_write_then_inv(x, v, m):
    s = v.sum()
    x *= 2
    return np.linalg.inv(m) * s + v[0]


def read_view_write_in_try(x, v, idx, log):
    s = v[1]
    x -= 1
    try:
        r = x[idx]
    except IndexError as e:
        log.append(str(e))
        r = v * s
    return r


def attribute_view_write_then_take(x, o, idx):
    s = o.v[2]
    x[2] += 5.0
    return np.take(o.v, idx) * s


def made_writeable_written_then_take(v, idx):
    v.flags.writeable = True  # the graph writes through it: it puts it back too
    v += 1
    return np.take(v, idx)


def made_writeable_by_method_then_inv(v, m):
    v.setflags(write=True)
    v[1:] *= 3
    return np.linalg.inv(m) + v[0]


def writeable_round_trip_then_take(v, idx):
    v.flags.writeable = True
    v += 1
    v.flags.writeable = False  # read-only again when the graph fails
    return np.take(v, idx)


def written_then_read_only_then_take(x, idx):
    x += 1
    x.flags.writeable = False
    return np.take(x, idx)


def array_and_index(idx):
    return lambda: (np.arange(5.0), np.array(idx))


def view_and_index(idx):
    def build():
        x = np.arange(5.0)
        return read_only(x[1:]), np.array(idx)

    return build


def view_and_matrix(m):
    def build():
        x = np.arange(3.0)
        return read_only(x.view()), m()

    return build


def attribute_view(n=5):
    def build():
        x = np.arange(float(n))
        o = Box()
        o.v = read_only(x.view())
        return x, o

    return build


def attribute_view_and_index(idx):
    def build():
        x, o = attribute_view()()
        return x, o, np.array(idx)

    return build


def overlapping_pairs(x: np.ndarray) -> np.ndarray:
    """Rows ``(x[i], x[i + 1])``, one element apart (a view whose rows overlap)."""
    return np.lib.stride_tricks.as_strided(x, (x.shape[0] - 1, 2), (x.itemsize, x.itemsize))


def two_views(n=5):
    def build():
        x = np.arange(float(n))
        return x, read_only(x.view()), read_only(x[::-1])

    return build


def writeable_view_and_read_only_base(n=6):
    def build():
        base = np.arange(float(n))
        return base[1:4], read_only(base.view())

    return build


def rows_and_transposed(n=3):
    def build():
        m = np.arange(float(n * n)).reshape(n, n)
        return m, read_only(m.T)

    return build


def with_matrix(m):
    def build():
        x = np.arange(4.0)
        return x, read_only(x.view()), m()

    return build


def with_log(build):
    return lambda: (*build(), [])


LOOPS = [
    C("loop_writes_reads_view", loop_writes_reads_view, x_and_view(5), x_and_view(7)),
    C("loop_writes_reads_view_ahead", loop_writes_reads_view_ahead, x_and_view(5), x_and_view(6)),
    C("loop_whole_writes_reads_view", loop_whole_writes_reads_view, x_and_view(5),
      x_and_view(4)),
    C("loop_returns_view_sum", loop_returns_view_sum, x_and_view(5), x_and_view(8)),
    C("loop_reads_reversed", loop_reads_reversed,
      x_and_view(5, lambda x: x[::-1]), x_and_view(6, lambda x: x[::-1])),
    C("loop_reads_slice", loop_reads_slice,
      x_and_view(6, lambda x: x[1:]), x_and_view(7, lambda x: x[1:])),
    C("loop_on_rows_reads_transposed", loop_on_rows_reads_transposed,
      rows_and_transposed(3), rows_and_transposed(4)),
    C("loop_writes_view_reads_base", loop_writes_view_reads_base,
      writeable_view_and_read_only_base(6), writeable_view_and_read_only_base(7)),
    C("loop_reads_broadcast", loop_reads_broadcast,
      lambda: (np.arange(4.0),), lambda: (np.arange(5.0),)),
    C("loop_reads_broadcast_of_temporary", loop_reads_broadcast_of_temporary,
      lambda: (np.arange(4.0),), lambda: (np.arange(6.0),)),
    C("loop_reads_attribute_view", loop_reads_attribute_view, attribute_view(5),
      attribute_view(6)),
    C("loop_two_read_only_views", loop_two_read_only_views, two_views(5), two_views(6)),
    C("loop_writes_x_and_new", loop_writes_x_and_new, x_and_view(5), x_and_view(3)),
    C("loop_carried_reads_view", loop_carried_reads_view,
      x_and_view(4, overlapping_pairs), x_and_view(5, overlapping_pairs)),
    C("while_writes_reads_view", while_writes_reads_view, x_and_view(5), x_and_view(3)),
]  # fmt: skip

FAILURES = [
    C("loop_then_take", loop_then_take, x_view_and_index([1]), x_view_and_index([9])),
    C("loop_then_add_at", loop_then_add_at, x_view_and_index([0, 4]), x_view_and_index([0, 5])),
    C("read_view_write_then_take", read_view_write_then_take,
      x_view_and_index([1]), x_view_and_index([-6])),
    C("read_view_write_then_inv", read_view_write_then_inv,
      with_matrix(lambda: np.eye(2)), with_matrix(lambda: np.ones((2, 2)))),
    C("read_view_write_in_try", read_view_write_in_try,
      with_log(x_view_and_index([2])), with_log(x_view_and_index([7]))),
    C("attribute_view_write_then_take", attribute_view_write_then_take,
      attribute_view_and_index([3]), attribute_view_and_index([5])),
    C("made_writeable_written_then_take", made_writeable_written_then_take,
      view_and_index([3]), view_and_index([4])),
    C("writeable_round_trip_then_take", writeable_round_trip_then_take,
      view_and_index([0]), view_and_index([-5])),
    C("written_then_read_only_then_take", written_then_read_only_then_take,
      array_and_index([2]), array_and_index([5])),
    C("made_writeable_by_method_then_inv", made_writeable_by_method_then_inv,
      view_and_matrix(lambda: np.eye(2)), view_and_matrix(lambda: np.zeros((2, 2)))),
]  # fmt: skip


@pytest.mark.parametrize("case", LOOPS + FAILURES, ids=case_id)
def test_a_read_only_view_of_a_written_array_is_never_written(case):
    case.run()


@pytest.mark.parametrize("case", LOOPS, ids=case_id)
def test_the_first_call_takes_the_loop_run_kept(case, replays):
    """A replay that raised was hidden by the eager rerun of a failing graph (where the
    restore did not raise too): the first call must take the kept run."""
    case.run()
    assert replays and replays[0], "the first call ran the loop again"
