"""The corpus of tests/test_messages_words.py: small functions whose messages users read.

A module of its own, not a test module: pytest rewrites ``assert`` statements in test modules,
and the corpus's own ``assert`` must stay the one the user wrote.
"""

from __future__ import annotations

import numpy as np


class Box:
    def __init__(self, v):
        self.v = v


def helper(x):
    return x + 1


def helper_that_prints(x):
    print("shape", x.shape)
    return x * 2


def positive(x):
    return x.sum() > 0


def if_sum(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def while_any(m):
    n = 0
    while np.any(m):
        m = m[1:]
        n += 1
    return n


def if_item(a, i, b):
    if a[i] == b:
        return a + 1
    return a


def and_test(x, y):
    if x.sum() > 0 and y.max() < 1:
        return x
    return y


def or_test(x, y):
    if x.min() < 0 or y.sum() > 10:
        return x * 2
    return y


def assert_test(x):
    assert (x > 0).all(), "x must be positive"
    return x + 1


def if_else_expression(x):
    return x + 1 if x.mean() > 0.5 else x


def not_test(x):
    c = x > 0
    if not c.all():
        return x
    return -x


def bool_call(x):
    if bool(x.any()):
        return x
    return x + 1


def in_helper(x):
    if positive(x):
        return x * 3
    return x


def attribute_test(box):
    if box.v.sum() > 0:
        return box.v * 2
    return box.v


def comprehension_filter(rows):
    return [r * 2 for r in rows if r.sum() > 0]


def print_fstring(x):
    y = np.sin(x)
    print(f"y is {y.sum()} and {x.max()}")
    return y * 2


def print_array_fields(x):
    y = np.sin(x)
    print(f"y is {y} and {x}")  # whole arrays' text: a break at each field, then at the print
    return y * 2


def print_after_helper(x):
    y = helper(x)
    print("hi")
    if y is None:
        return 0
    return y + 1


def print_iterator(x, xs):
    it = iter(xs)
    z = x + next(it)
    print(it)
    return z


def to_int(x):
    n = int(x.sum())
    return x[:n]


def tolist_loop(x):
    out = 0.0
    for v in x.tolist():
        out += v
    return out


def calls_printing_helper(x):
    return helper_that_prints(x) + 1


def prints_in_loop(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


def flagged(x, flag):
    if flag:
        return x + 1
    return x - 1


def unpacks_after_print(x):
    a, b = divmod(x, 2.0)
    print("split")
    return a + b


ONES, ARANGE = np.ones(3), np.arange(4.0)
# name: (function, first call's args, second call's args, the expression a branch quotes)
CORPUS = {
    "if_sum": (if_sum, (ONES,), (-ONES,), "x.sum() > 0"),
    "while_any": (while_any, (ONES,), (np.ones(2),), "np.any(m)"),
    "if_item": (if_item, (ARANGE, 1, 1.0), (ARANGE, 2, 1.0), "a[i] == b"),
    "and": (and_test, (ONES, np.zeros(3)), (-ONES, ONES), "x.sum() > 0"),
    "or": (or_test, (ONES, ONES), (-ONES, ONES), "x.min() < 0"),
    "assert": (assert_test, (ONES,), (ONES * 2,), "(x > 0).all()"),
    "if_else_expression": (if_else_expression, (ONES,), (-ONES,), "x.mean() > 0.5"),
    "not": (not_test, (ONES,), (-ONES,), "c.all()"),
    "bool_call": (bool_call, (ONES,), (np.zeros(3),), "bool(x.any())"),
    "in_helper": (in_helper, (ONES,), (-ONES,), "positive(x)"),
    "attribute": (attribute_test, (Box(ONES),), (Box(-ONES),), "box.v.sum() > 0"),
    # 3.11: the comprehension is a function of its own, and the frame runs eagerly
    "comprehension": (comprehension_filter, ([ONES, -ONES],), ([-ONES, ONES],), None),
    "print_fstring": (print_fstring, (ONES,), (ONES * 2,), None),
    "print_after_helper": (print_after_helper, (ONES,), (ONES * 2,), None),
    "print_iterator": (print_iterator, (ONES, [1, 2]), (ONES, [3, 4]), None),
    "to_int": (to_int, (ONES,), (np.ones(4),), None),
    "tolist_loop": (tolist_loop, (ONES,), (ONES * 2,), None),
    "calls_printing_helper": (calls_printing_helper, (ONES,), (np.ones(4),), None),
    "prints_in_loop": (prints_in_loop, (ONES,), (np.ones(4),), None),
    "flagged": (flagged, (ONES, True), (ONES, False), None),
    "unpacks_after_print": (unpacks_after_print, (ARANGE,), (ARANGE + 1,), None),
}
