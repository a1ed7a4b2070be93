"""Iterators that zip, enumerate, map or filter take items from (``enumerate(zip(a, b))``): the
trace makes their items all at once, where Python takes them one by one, so an iterator used
by one of them and on its own too (``zip(it, it)``, ``next(z)`` while ``enumerate(z)`` runs)
breaks the graph there (`operations.take`), and a rebuilt iterator stays one object
(`Iterator.made_text`). Each of these gave a wrong result before. An iterator taken by
nothing else is a loop node over its items (`loops.TakenItems`). Each case runs eagerly and
compiled and compares results and printed output."""

from __future__ import annotations

import numpy as np
import pytest
from diffharness import C, case_id

import tcompile as tc


def rows(seed=0):
    return np.random.default_rng(seed).standard_normal((5, 3))


def taken_then_next(a, b):
    z = zip(a, b)
    e = enumerate(z)
    first = next(z)  # the enumerate then starts at z's second item
    acc = first[0] * 0
    for i, (r, s) in e:
        acc = acc + r * s * i
    return acc


def exhausted_after_loop(a, b):
    z = zip(a, b)
    acc = np.zeros(a.shape[1])
    for _, (r, s) in enumerate(z):
        acc = acc + r * s
    return acc, len(list(z))


def rest_after_break(a, b):
    z = zip(a, b)
    for i, _pair in enumerate(z):
        if i == 2:
            break
    return [r + s for r, s in z]  # the two pairs the loop left


def pairs_of_one_iterator(a):
    e = enumerate(a)
    return [(i, j) for (i, _), (j, _) in zip(e, e)]


def pairs_of_one_iterator_loop(a):
    e = enumerate(a)
    acc = np.zeros(a.shape[1])
    for (i, r), (j, s) in zip(e, e):
        acc = acc + r * i - s * j
    return acc


def grouper(a):
    it = iter(list(a))
    return [x + y for x, y in zip(*[it] * 2)]


def map_then_next(a):
    it = iter(list(a))
    doubled = map(lambda r: r * 2, it)
    head = next(it)
    return head, [d for d in doubled]


def taken_and_split(a, b):
    z = zip(a, b)
    acc = np.zeros(a.shape[1])
    for i, (r, s) in enumerate(z):
        acc = acc + r * s
        print("row", i)  # a break inside the loop: the loop runs in Python
    return acc, list(z)


def iter_of_iterator(a):
    e = enumerate(a)
    same = iter(e)
    next(same)
    return [i for i, _ in e]  # iter() of an iterator is the iterator itself


def reversed_iterator(a):
    return list(reversed(enumerate(a)))  # TypeError, as in Python


def loop_over_taken(a, b):
    z = zip(a, b)
    e = enumerate(z)
    acc = np.zeros(a.shape[1])
    for r, _ in z:  # takes every pair: the enumerate then has none
        acc = acc + r
    for _, (_, s) in e:
        acc = acc + s
    return acc


def enumerate_of_zip(a, b):
    acc = np.zeros(a.shape[1])
    for i, (r, s) in enumerate(zip(a, b), 1):
        acc = acc + (r - s) * i
    return acc


def zip_of_enumerate(a, b):
    acc = np.zeros(a.shape[1])
    for (i, r), s in zip(enumerate(a), b):
        acc = acc * 0.5 + r * s * i
    return acc


def enumerate_of_zip_split(a, b):
    total = []
    for i, (r, s) in enumerate(zip(a, b)):
        print("row", i)
        total.append((r * s).sum())
    return total


TWO = (lambda: (rows(), rows(1)), lambda: (rows(2), rows(3)))
ONE = (lambda: rows(), lambda: rows(1))

CASES = [
    *(
        C(f.__name__, f, *TWO)
        for f in (
            taken_then_next,
            exhausted_after_loop,
            rest_after_break,
            loop_over_taken,
            taken_and_split,
            enumerate_of_zip,
            zip_of_enumerate,
            enumerate_of_zip_split,
        )
    ),  # fmt: skip
    *(
        C(f.__name__, f, *ONE)
        for f in (
            pairs_of_one_iterator,
            pairs_of_one_iterator_loop,
            grouper,
            map_then_next,
            iter_of_iterator,
            reversed_iterator,
        )
    ),  # fmt: skip
]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_shared_iterators_match_eager(case):
    case.run()


@pytest.mark.parametrize("fn", [enumerate_of_zip, zip_of_enumerate])
def test_enumerate_and_zip_of_each_other_are_one_loop_node(fn):
    explained = tc.explain(fn, backend="eager")(rows(), rows(1))
    (record,) = explained.loops
    assert record.captured and record.trip_count == 5, record.describe()
    assert explained.graph_count == 1 and not explained.break_reasons


def test_a_break_inside_enumerate_of_zip_splits_the_loop():
    explained = tc.explain(enumerate_of_zip_split, backend="eager")(rows(), rows(1))
    assert not explained.skipped_frames, explained.skip_reasons
    assert "tracing resumes at the next iteration" in explained.break_reasons[0].explanation


def test_an_iterator_used_beside_its_taker_breaks_the_graph():
    explained = tc.explain(pairs_of_one_iterator, backend="eager")(rows())
    assert any("used on its own too" in r.explanation for r in explained.break_reasons), str(
        explained
    )
