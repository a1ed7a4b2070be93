"""Graph breaks inside loops of long functions: loop bodies long enough that their jumps need
EXTENDED_ARG (checked below on every Python version), with `print`, `tc.graph_break()`, branches
on array values, Python `max()`/`min()` over array values (dynamic programming), arrays unpacked
inside the loop (a Stockham FFT). Whatever tcompile does inside, each call returns eager's
result, prints eager's output and never raises a tcompile exception.
"""

from __future__ import annotations

import dis

import numpy as np
import pytest
from diffharness import C, case_id

import tcompile as tc

PAIRS = np.array(
    [
        [0, 0, 0, 1],  # A-U
        [0, 0, 1, 0],  # C-G
        [0, 1, 0, 1],  # G-C, G-U
        [1, 0, 1, 0],  # U-A, U-G
    ],
    dtype=np.int64,
)


def nussinov(seq, pairs):
    """Maximum number of nested base pairs (Nussinov), one Python max() per cell."""
    n = seq.shape[0]
    dp = np.zeros((n, n))
    trace = []
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            best = max(dp[i + 1, j], dp[i, j - 1])
            if j - i > 3 and pairs[seq[i], seq[j]]:
                best = max(best, dp[i + 1, j - 1] + 1)
            for k in range(i + 1, j):
                best = max(best, dp[i, k] + dp[k + 1, j])
            left = dp[i, j - 1]
            down = dp[i + 1, j]
            diag = dp[i + 1, j - 1]
            gain = best - max(left, down, diag)
            if gain > 0:
                trace.append((i, j, float(gain)))
            low = min(left, down)
            high = max(left, down)
            spread = high - low
            total = left + down + diag + spread
            mean = total / 4.0
            dp[i, j] = best
            if mean < 0:
                trace.append((i, j, -1.0))
    return dp[0, n - 1], dp, trace


def nussinov_print(seq, pairs):
    n = seq.shape[0]
    dp = np.zeros((n, n))
    for span in range(1, n):
        row_best = 0.0
        for i in range(n - span):
            j = i + span
            best = max(dp[i + 1, j], dp[i, j - 1])
            if j - i > 3 and pairs[seq[i], seq[j]]:
                best = max(best, dp[i + 1, j - 1] + 1)
            for k in range(i + 1, j):
                best = max(best, dp[i, k] + dp[k + 1, j])
            left = dp[i, j - 1]
            down = dp[i + 1, j]
            diag = dp[i + 1, j - 1]
            low = min(left, down, diag)
            high = max(left, down, diag)
            spread = high - low
            total = left + down + diag + spread
            mean = total / 4.0
            dp[i, j] = best
            row_best = max(row_best, best, mean)
        print("span", span, "best", row_best)
    return dp[0, n - 1], dp


def stockham_fft(x):
    """Radix-2 Stockham autosort FFT; arrays are unpacked in every stage."""
    n = x.shape[0]
    y = x.astype(np.complex128).reshape(n, 1)
    half = n
    span = 1
    stages = []
    while half > 1:
        half //= 2
        w = np.exp(-1j * np.pi * np.arange(span) / span).reshape(1, span)
        a, b = y.reshape(2, half, span)
        t = b * w
        top = a + t
        bottom = a - t
        y = np.concatenate([top, bottom], axis=1)
        energy = float(np.abs(y).sum())
        peak = float(np.abs(y).max())
        first, *rest = y[0]
        stages.append((half, span, energy, peak, complex(first), len(rest)))
        span *= 2
        re, im = y.real.sum(), y.imag.sum()
        if re + im > 1e300:
            stages.append(("overflow", re, im))
    return y.ravel(), stages


def stockham_fft_print(x):
    n = x.shape[0]
    y = x.astype(np.complex128).reshape(n, 1)
    half = n
    span = 1
    while half > 1:
        half //= 2
        w = np.exp(-1j * np.pi * np.arange(span) / span).reshape(1, span)
        a, b = y.reshape(2, half, span)
        t = b * w
        top = a + t
        bottom = a - t
        y = np.concatenate([top, bottom], axis=1)
        energy = np.abs(y).sum()
        peak = np.abs(y).max()
        re, im = y.real.sum(), y.imag.sum()
        ratio = peak / (energy + 1.0)
        scale = max(abs(re), abs(im), ratio)
        print("stage", half, span, round(float(scale), 6))
        span *= 2
    return y.ravel()


def for_loop_print(x, lst):
    acc = np.zeros_like(x)
    for i in range(x.shape[0]):
        v = x[i]
        acc[i] = v * 2 + 1
        lst.append(float(v))
        a = acc.sum()
        b = acc.max()
        c = acc.min()
        d = acc.mean()
        e = a * b - c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f)) + np.abs(acc).sum()
        h = g * 0.5 + e * 0.25
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        acc[i] += (k - m) * 0.0
        print("step", i, float(k), float(m))
        if v < 0:
            lst.append("neg")
    return acc, lst


def while_loop_print(x):
    y = x.copy()
    steps = 0
    log = []
    while np.abs(y).max() > 1.0:
        y = y * 0.5
        steps += 1
        a = y.sum()
        b = y.max()
        c = y.min()
        d = y.mean()
        e = a * b - c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f)) + np.abs(y).sum()
        h = g * 0.5 + e * 0.25
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        log.append(float(k - m))
        print("halved", steps, float(b))
        if steps > 50:
            break
    return y, steps, log


def loop_graph_break(x):
    out = []
    for i in range(3):
        z = x * i
        a = z.sum()
        b = z.max()
        c = z.min()
        d = z.mean()
        e = a * b - c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f)) + np.abs(z).sum()
        h = g * 0.5 + e * 0.25
        tc.graph_break()
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        out.append(k - m)
        out.append(float(h))
    return out


def loop_value_branch(x, lst):
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        a = v * 2
        b = v * v
        c = a - b
        d = a + b
        e = c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f))
        h = g * 0.5 + e * 0.25
        if v > 0:
            total += float(h)
            lst.append(i)
        else:
            total -= float(g)
            lst.append(-i)
        p1 = a * 0.5 + b * 0.25
        p2 = c * 0.5 - d * 0.25
        p3 = e - f + g - h
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
        total += float(p7) * 0.0
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        total += float(k - m) * 0.0
    return total, lst


def nested_continue_break(x):
    found = []
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            if i == j:
                continue
            s = x[i] + x[j]
            a = s * 2
            b = s * s
            c = a - b
            d = a + b
            e = c * d
            f = (a + b + c + d + e) / 5.0
            g = np.sqrt(abs(f))
            h = g * 0.5 + e * 0.25
            if s > 2.5:
                print("pair", i, j)
                found.append((i, j, float(h)))
                break
            p1 = a * 0.5 + b * 0.25
            p2 = c * 0.5 - d * 0.25
            p3 = e - f + g - h
            p4 = p1 * p2 - p3
            p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
            p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
            p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
            if p7 < 0:
                found.append("negative spread")
            k = max(a, b, c, d, e, f, g, h)
            m = min(a, b, c, d, e, f, g, h)
            if k - m < 0:
                found.append("impossible")
    return found


def loop_try_except_print(ms):
    results = []
    for m in ms:
        try:
            inv = np.linalg.inv(m)
            a = inv.sum()
            b = inv.max()
            c = inv.min()
            d = inv.mean()
            e = a * b - c * d
            f = (a + b + c + d + e) / 5.0
            g = np.sqrt(abs(f)) + np.abs(inv).sum()
            h = g * 0.5 + e * 0.25
            k = max(a, b, c, d, e, f, g, h)
            print("inverted", float(k))
            results.append(inv)
        except np.linalg.LinAlgError as err:
            print("singular", err)
            results.append(None)
    return results


def loop_dict_items_print(d):
    out = {}
    for key, arr in d.items():
        a = arr.sum()
        b = arr.max()
        c = arr.min()
        d_ = arr.mean()
        e = a * b - c * d_
        f = (a + b + c + d_ + e) / 5.0
        g = np.sqrt(abs(f)) + np.abs(arr).sum()
        h = g * 0.5 + e * 0.25
        p1 = a * 0.5 + b * 0.25
        p2 = c * 0.5 - d_ * 0.25
        p3 = e - f + g - h
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
        out[key + "_pad"] = float(p7)
        k = max(a, b, c, d_, e, f, g, h)
        m = min(a, b, c, d_, e, f, g, h)
        print(key, float(k - m))
        out[key] = arr * (k - m)
    return out


def loop_else_print(x):
    acc = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        a = v * 2
        b = v * v
        c = a - b
        d = a + b
        e = c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f))
        h = g * 0.5 + e * 0.25
        p1 = a * 0.5 + b * 0.25
        p2 = c * 0.5 - d * 0.25
        p3 = e - f + g - h
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
        acc += float(p7) * 0.0
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        acc += float(k - m)
        if v > 100:
            print("big")
            break
    else:
        print("no big value", acc)
        acc = -acc
    return acc


def edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    dp = np.zeros((n + 1, m + 1))
    dp[:, 0] = np.arange(n + 1)
    dp[0, :] = np.arange(m + 1)
    moves = []
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0.0 if a[i - 1] == b[j - 1] else 1.0
            up = dp[i - 1, j] + 1
            left = dp[i, j - 1] + 1
            diag = dp[i - 1, j - 1] + cost
            best = min(up, left, diag)
            worst = max(up, left, diag)
            spread = worst - best
            mean = (up + left + diag) / 3.0
            if spread > mean:
                moves.append((i, j))
            q1 = up * 0.5 + left * 0.25
            q2 = diag * 0.5 - best * 0.25
            q3 = worst - spread + mean - cost
            q4 = q1 * q2 - q3
            q5 = max(q1, q2, q3, q4) - min(q1, q2, q3, q4)
            q6 = (q1 + q2 + q3 + q4 + q5) * 0.125
            if q5 < 0 or q6 != q6:
                moves.append(("impossible", i, j))
            dp[i, j] = best
    return dp[n, m], dp, moves


def long_generator_in_loop(x):
    def gen(v):
        yield v
        yield v * 2

    out = []
    for i in range(x.shape[0]):
        a = x[i] * 2
        b = a * a
        c = a - b
        d = a + b
        e = c * d
        f = (a + b + c + d + e) / 5.0
        g = np.sqrt(abs(f))
        h = g * 0.5 + e * 0.25
        p1 = a * 0.5 + b * 0.25
        p2 = c * 0.5 - d * 0.25
        p3 = e - f + g - h
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
        out.append(float(p6 + p7))
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        out.append(sum(gen(float(k - m))))
    return out


def loop_item_control(x):
    i = 0
    total = 0.0
    while i < x.shape[0]:
        v = x[i].item()
        a = v * 2
        b = v * v
        c = a - b
        d = a + b
        e = c * d
        f = (a + b + c + d + e) / 5.0
        g = abs(f) ** 0.5
        h = g * 0.5 + e * 0.25
        p1 = a * 0.5 + b * 0.25
        p2 = c * 0.5 - d * 0.25
        p3 = e - f + g - h
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        p7 = max(p5, p6) - min(p5, p6) + p1 * 0.0
        total += p7 * 0.0
        k = max(a, b, c, d, e, f, g, h)
        m = min(a, b, c, d, e, f, g, h)
        total += k - m
        i += 1 if v >= 0 else 2
    return total, i


def enumerate_rows_unpack_print(m, log):
    total = np.zeros(2)
    for i, (a, b) in enumerate(m):
        s = a + b
        d = a - b
        p = a * b
        q = s * d - p
        r = max(s, d, p, q)
        t = min(s, d, p, q)
        u = (s + d + p + q + r + t) / 6.0
        w = np.sqrt(abs(u)) + abs(r - t)
        p1 = s * 0.5 + d * 0.25
        p2 = p * 0.5 - q * 0.25
        p3 = r - t + u - w
        p4 = p1 * p2 - p3
        p5 = max(p1, p2, p3, p4) - min(p1, p2, p3, p4)
        p6 = (p1 + p2 + p3 + p4 + p5) * 0.125
        total += np.array([u, w]) * 0.5 + p6 * 0.0
        log.append((i, float(u)))
        print("row", i, round(float(w), 6))
        if w > 1e6:
            log.append("huge")
            break
    return total, log


def seq(s):
    return np.array(["ACGU".index(c) for c in s], dtype=np.int64)


def pairs():
    return PAIRS.copy()


def signal(n, phase=0.0):
    t = np.arange(n)
    return np.cos(0.3 * t + phase) + 0.5 * np.sin(1.1 * t)


def mats(bad):
    good = np.array([[2.0, 1.0], [1.0, 3.0]])
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    return [good, sing if bad else good * 2, good + 1]


LONG = [
    nussinov,
    nussinov_print,
    stockham_fft,
    stockham_fft_print,
    for_loop_print,
    while_loop_print,
    loop_graph_break,
    loop_value_branch,
    nested_continue_break,
    loop_try_except_print,
    loop_dict_items_print,
    loop_else_print,
    edit_distance,
    enumerate_rows_unpack_print,
    long_generator_in_loop,
    loop_item_control,
]

CASES = [
    C(
        "nussinov",
        nussinov,
        lambda: (seq("GGGAAAUCC"), pairs()),
        lambda: (seq("ACGUACGUAG"), pairs()),
    ),
    C(
        "nussinov_same_length",
        nussinov,
        lambda: (seq("GGGAAAUCC"), pairs()),
        lambda: (seq("UUUAAACCG"), pairs()),
    ),
    C(
        "nussinov_print",
        nussinov_print,
        lambda: (seq("GGGAAAUCC"), pairs()),
        lambda: (seq("GCAUCGAUGC"), pairs()),
    ),
    C(
        "stockham_fft",
        stockham_fft,
        lambda: (signal(8),),
        lambda: (signal(16, 0.5),),
        lambda: (signal(8, 1.0),),
    ),
    C(
        "stockham_fft_print",
        stockham_fft_print,
        lambda: (signal(8),),
        lambda: (signal(32),),
        lambda: (signal(8, 2.0),),
    ),
    C("for_loop_print", for_loop_print, lambda: (signal(4), []), lambda: (-signal(6), ["x"])),
    C("while_loop_print", while_loop_print, lambda: (signal(4) * 10,), lambda: (signal(5) * 1000,)),
    C("loop_graph_break", loop_graph_break, lambda: (signal(4),), lambda: (signal(7, 1.0),)),
    C("loop_value_branch", loop_value_branch, lambda: (signal(5), []), lambda: (-signal(5), [])),
    C(
        "nested_continue_break",
        nested_continue_break,
        lambda: (signal(5),),
        lambda: (signal(6) * 3,),
    ),
    C(
        "loop_try_except_print",
        loop_try_except_print,
        lambda: (mats(False),),
        lambda: (mats(True),),
    ),
    C(
        "loop_dict_items_print",
        loop_dict_items_print,
        lambda: ({"a": signal(3), "b": signal(2)},),
        lambda: ({"b": -signal(3), "a": signal(4)},),
    ),
    C("loop_else_print", loop_else_print, lambda: (signal(4),), lambda: (signal(4) * 1000,)),
    C(
        "edit_distance",
        edit_distance,
        lambda: (seq("GAUUACA"), seq("GCAUGCU")),
        lambda: (seq("ACGU"), seq("ACGUACGU")),
    ),
    C("long_generator_in_loop", long_generator_in_loop, lambda: (signal(3),), lambda: (signal(5),)),
    C("loop_item_control", loop_item_control, lambda: (signal(6),), lambda: (-signal(6),)),
    C(
        "nussinov_fullgraph_or_unsupported",
        nussinov,
        lambda: (seq("GGGAAAUCC"), pairs()),
        lambda: (seq("ACGUACGUAG"), pairs()),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "stockham_fullgraph_or_unsupported",
        stockham_fft,
        lambda: (signal(8),),
        lambda: (signal(16, 0.5),),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "enumerate_rows_unpack_print",
        enumerate_rows_unpack_print,
        lambda: (np.arange(8.0).reshape(4, 2), []),
        lambda: (np.arange(6.0).reshape(3, 2) * 1e4, ["x"]),
    ),
    C(
        "for_loop_print_three_sizes",
        for_loop_print,
        lambda: (signal(2), []),
        lambda: (signal(3), []),
        lambda: (signal(5), []),
    ),
    C(
        "while_loop_print_zero_iterations",
        while_loop_print,
        lambda: (signal(4) * 0.1,),
        lambda: (signal(4) * 100,),
    ),
    C(
        "loop_else_print_break_first",
        loop_else_print,
        lambda: (signal(4) * 1000,),
        lambda: (signal(4),),
    ),
    C(
        "loop_graph_break_fullgraph",
        loop_graph_break,
        lambda: (signal(4),),
        lambda: (signal(7, 1.0),),
        fullgraph=True,
        break_ok=True,
    ),
    C(
        "edit_distance_empty",
        edit_distance,
        lambda: (seq(""), seq("ACG")),
        lambda: (seq("A"), seq("")),
    ),
    C("nussinov_tiny", nussinov, lambda: (seq("GC"), pairs()), lambda: (seq("G"), pairs())),
    C("stockham_fft_single_point", stockham_fft, lambda: (signal(1),), lambda: (signal(2),)),
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_long_loop_with_breaks_matches_eager(case):
    case.run()


@pytest.mark.parametrize("fn", LONG, ids=lambda f: f.__name__)
def test_kernel_is_long_enough_to_need_extended_arg(fn):
    """Meta-check of the suite: the kernels above really exercise EXTENDED_ARG jumps."""
    assert len(fn.__code__.co_code) > 256
    ops = [i.opname for i in dis.get_instructions(fn)]
    assert "EXTENDED_ARG" in ops, f"{fn.__name__}: no jump needs EXTENDED_ARG"


def test_stockham_kernel_is_an_fft():
    """Meta-check: the Stockham kernel computes np.fft.fft (so the cases test a real kernel)."""
    x = signal(16, 0.3)
    got, _ = stockham_fft(x)
    np.testing.assert_allclose(got, np.fft.fft(x), atol=1e-9)
