"""Fourteen plain NumPy kernels where a warm ``tc.compile`` call used to be far slower than the
plain call (issue 19, "never slower than plain"), measured by ``slow_patterns.py`` and checked
by ``tests/differential/test_slow_patterns.py``. Written in the style of NPBench and
numpy-benchmarks, at sizes that run in well under a few milliseconds.

Most hold a loop whose body branches on an array's value, so the loop is split (it runs in
Python, its body compiled per iteration) and little NumPy work happens per iteration; the rest
are loops whose objects or lengths are new on every call.
"""

from __future__ import annotations

import io

import numpy as np
from scalar_loops import nussinov  # noqa: F401 - pattern (5), NPBench's, `match` inlined

SINK = io.StringIO()  # where the kernels that print write (emptied between timed batches)


def count_positive(x):
    """(1) A 2,000-element loop over an array's values with a branch on each."""
    n = 0
    for v in x:
        if v > 0:
            n += 1
    return n


def crc16_bits(data):
    """(2) CRC-16 (Modbus) over bytes held in an int64 array: a bit loop on array data."""
    crc = 0xFFFF
    for i in range(len(data)):
        crc ^= data[i]
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return int(crc)


def normalize_rows(x):
    """(3) A row loop that asserts on each row's values."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        row = x[i]
        assert row.max() != 0
        out[i] = row / row.max()
    return out


def crc16_npbench(data, poly=0x8408):
    """(4) NPBench's crc16: CRC-16-CCITT over a uint8 array, bit by bit."""
    crc = 0xFFFF
    for b in data:
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = ~crc & 0xFFFF
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def get_acc(pos, mass, softening):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv_r3 = dx**2 + dy**2 + dz**2 + softening**2
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    return np.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass))


def nbody(mass, pos, vel, dt, steps):
    """(6) NPBench's nbody, leapfrog steps of a few bodies, damped when the kinetic energy
    grows past a bound (a branch on an array's value every step)."""
    acc = get_acc(pos, mass, 0.1)
    energy = np.zeros(steps)
    for t in range(steps):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = get_acc(pos, mass, 0.1)
        vel += acc * dt / 2.0
        energy[t] = 0.5 * np.sum(mass * vel**2)
        if energy[t] > 50.0:
            vel *= 0.5
    return pos, vel, energy


def wave(u, u_prev, c, steps):
    """(7) numpy-benchmarks' wave: a 1-D wave equation time loop, damped when the amplitude
    passes 1."""
    for _ in range(steps):
        u_next = 2.0 * u - u_prev + c * (np.roll(u, 1) - 2.0 * u + np.roll(u, -1))
        u_next[0] = 0.0
        u_next[-1] = 0.0
        if np.abs(u_next).max() > 1.0:
            u_next *= 0.9
        u_prev, u = u, u_next
    return u


def check_mask(db, mask):
    """(8) numpy-benchmarks' check_mask: which rows' bits hold the mask and start with 1."""
    out = np.zeros(db.shape[0], dtype=bool)
    for idx, line in enumerate(db):
        target, vector = line[0], line[1:]
        if (mask == np.bitwise_and(mask, vector)).all():
            if target == 1:
                out[idx] = 1
    return out


def ndindex_negatives(a):
    """(9) A loop over ``np.ndindex`` (a new object every call) that prints as it goes."""
    total = 0.0
    for pos in np.ndindex(a.shape):
        total += a[pos]
        if a[pos] < 0:
            print("negative at", pos, file=SINK)
    return total


def row_energy(x):
    """(10) A loop over an array's rows, called with several lengths."""
    total = np.zeros(x.shape[1])
    for row in x:
        total = total + np.sqrt(row * row + 1.0)
    return total


def prefix_above(x):
    """(11) A split loop whose body slices ``x[:i + 1]``: a new length every iteration."""
    count = 0
    for i in range(len(x)):
        if x[: i + 1].mean() > 0.5:
            count += 1
    return count


def print_sums(x, steps):
    """(12) A split loop printing a rounded sum every step."""
    for _ in range(steps):
        x = x * 0.5 + 1.0
        print(round(float(x.sum()), 6), file=SINK)
    return x


def radial_means(data, radius, bins):
    """(13) NPBench's azimint_naive: the mean of the values in each ring, a boolean-mask
    selection reduced per iteration (a break at the selection before its reductions stayed in
    the graph)."""
    out = np.zeros(bins)
    for i in range(bins):
        ring = (radius >= i) & (radius < i + 1)
        out[i] = np.mean(data[ring])
    return out


def weighted_hits(x, w):
    """(14) The positions ``np.nonzero`` finds, gathered and reduced: a size from data (a break
    at ``np.nonzero`` before sizes from data stayed in the graph)."""
    hits = np.nonzero(x > 0.2)[0]
    return (x[hits] * w[hits]).sum() / (len(hits) + 1)
