"""Sources (tracer/values/source.py): each kind's expression, human name and graph-input hint, and how
derived sources wrap the source they read from."""

from __future__ import annotations

import pytest

from tcompile.tracer.values.source import (
    BUILTINS,
    CLOSURE,
    FUNCTION,
    GLOBALS,
    AttrSource,
    BuiltinSource,
    ClosureCellSource,
    FunctionSource,
    GlobalsDictSource,
    GlobalSource,
    ItemSource,
    LocalSource,
    TypeSource,
    frame_names,
)

CELL = ClosureCellSource(1, "scale")


@pytest.mark.parametrize(
    "source, expr, name, hint",
    [
        (LocalSource("x"), "x", "x", "x"),
        (LocalSource("___stack0", "foo(x)"), "___stack0", "foo(x)", "foo_x"),
        (GlobalSource("W"), f"{GLOBALS}['W']", "G['W']", "W"),
        (GlobalsDictSource(), GLOBALS, "G", "G"),
        (BuiltinSource("len"), f"{BUILTINS}['len']", "builtins['len']", "builtins__len"),
        (FunctionSource("f.<locals>.g"), FUNCTION, "f.<locals>.g", "f__locals__g"),
        (CELL, f"{CLOSURE}[1]", "cell('scale')", "scale"),
        (AttrSource(LocalSource("obj"), "w"), "obj.w", "obj.w", "obj_w"),
        (AttrSource(CELL, "cell_contents"), f"{CLOSURE}[1].cell_contents",
         "cell('scale').cell_contents", "scale"),
        (ItemSource(GlobalSource("D"), "k"), f"{GLOBALS}['D']['k']", "G['D']['k']", "D_k"),
        (ItemSource(LocalSource("t"), 0), "t[0]", "t[0]", "t_0"),
        (TypeSource(LocalSource("x")), "type(x)", "type(x)", "type_x"),
        (AttrSource(AttrSource(TypeSource(LocalSource("self")), "prop"), "fget"),
         "type(self).prop.fget", "type(self).prop.fget", "type_self_prop_fget"),
    ],
)  # fmt: skip
def test_expression_name_and_hint(source, expr, name, hint):
    assert (source.expr(), source.name(), source.hint()) == (expr, name, hint)


def test_braces_in_keys_are_kept_as_written():
    source = ItemSource(LocalSource("d"), "{x}")
    assert source.expr() == "d['{x}']" and source.hint() == "d_{x}"


def test_sources_compare_by_kind_and_fields():
    assert AttrSource(LocalSource("x"), "a") == AttrSource(LocalSource("x"), "a")
    assert hash(ItemSource(LocalSource("x"), 1)) == hash(ItemSource(LocalSource("x"), 1))
    assert AttrSource(LocalSource("x"), "a") != ItemSource(LocalSource("x"), "a")
    assert GlobalsDictSource() == GlobalsDictSource()


def test_expressions_evaluate_in_the_names_of_the_generated_functions():
    scale = 3.0

    def fn(x):
        return len(x) * scale

    names = frame_names(fn) | {"x": [1, 2]}
    cases = [
        (GlobalSource("pytest"), pytest),
        (BuiltinSource("len"), len),
        (FunctionSource(fn.__qualname__), fn),
        (AttrSource(ClosureCellSource(0, "scale"), "cell_contents"), 3.0),
        (TypeSource(ItemSource(LocalSource("x"), 1)), int),
    ]
    for source, expected in cases:
        assert eval(source.expr(), dict(names)) == expected, source  # noqa: S307
