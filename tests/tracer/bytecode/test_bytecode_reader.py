"""The bytecode reader (tracer/bytecode/reader.py) and the original listing it reads
(tracer/bytecode/instructions.py): each construct normalises to one instruction sequence on
CPython 3.11, 3.12 and 3.13; where the form is version-specific on purpose, the expected form is
chosen by a `features` flag (or the opcode table), never by the version number."""

from __future__ import annotations

import dis

import pytest

from tcompile.tracer.bytecode import features, instructions, reader


def listing(fn) -> list[str]:
    """The normalised stream as short text: ``LOAD_FAST 'x'``, ``POP_JUMP_IF_FALSE ->5`` (a jump
    shows its target index: its raw ``arg`` is the version's own encoding)."""
    out = []
    for ins in reader.normalize(fn.__code__).instrs:
        text = ins.opname
        if ins.target is not None:
            text += f" ->{ins.target}"
        elif ins.arg is not None:
            text += f" {ins.arg!r}"
        if ins.push_null:
            text += f" null={ins.push_null}"
        out.append(text)
    return out


def make(source: str):
    """The function the one ``def`` in ``source`` defines."""
    namespace: dict = {}
    exec(compile(source, "<reader-test>", "exec"), namespace)  # noqa: S102
    return next(v for v in namespace.values() if callable(v))


def original_opnames(fn) -> list[str]:
    return [ins.opname for ins in instructions.original(fn.__code__)]


# Where a call's NULL sits, before or after the callable.
def with_null(callable_load: str) -> list[str]:
    return ["PUSH_NULL", callable_load] if features.NULL_FIRST else [callable_load, "PUSH_NULL"]


NULL_SIDE = "before" if features.NULL_FIRST else "after"
METHOD_NULL_SIDE = "before" if features.METHOD_LOADS_PUSH_SELF else "after"


def plain_call(f, x):
    return f(x)


def keyword_call(f, x):
    return f(x, key=1)


def star_call(f, args):
    return f(*args)


def global_call(x):
    return len(x)


def method_call(a, x):
    return a.b(x)


def method_keyword_call(a, x):
    return a.b(x, k=1)


def test_a_plain_call_puts_the_null_where_the_version_does():
    assert listing(plain_call) == [
        *with_null("LOAD_FAST 'f'"),
        "LOAD_FAST 'x'",
        "CALL 1",
        "RETURN_VALUE",
    ]


def test_a_keyword_call_is_call_kw_after_its_names_on_every_version():
    assert listing(keyword_call) == [
        *with_null("LOAD_FAST 'f'"),
        "LOAD_FAST 'x'",
        "LOAD_CONST 1",
        "LOAD_CONST ('key',)",
        "CALL_KW 2",
        "RETURN_VALUE",
    ]
    assert "KW_NAMES" not in listing(keyword_call)


def test_a_star_call_keeps_call_function_ex():
    expected = [*with_null("LOAD_FAST 'f'"), "LOAD_FAST 'args'", "CALL_FUNCTION_EX 0"]
    assert listing(star_call) == [*expected, "RETURN_VALUE"]


def test_a_global_load_for_a_call_carries_the_null_bit():
    assert listing(global_call) == [
        f"LOAD_GLOBAL 'len' null={NULL_SIDE}",
        "LOAD_FAST 'x'",
        "CALL 1",
        "RETURN_VALUE",
    ]


def test_a_method_call_is_one_load_attr_with_its_null_side():
    method = f"LOAD_ATTR 'b' null={METHOD_NULL_SIDE}"
    assert listing(method_call) == [
        "LOAD_FAST 'a'",
        method,
        "LOAD_FAST 'x'",
        "CALL 1",
        "RETURN_VALUE",
    ]
    assert listing(method_keyword_call) == [
        "LOAD_FAST 'a'",
        method,
        "LOAD_FAST 'x'",
        "LOAD_CONST 1",
        "LOAD_CONST ('k',)",
        "CALL_KW 2",
        "RETURN_VALUE",
    ]


def test_precall_is_dropped_where_the_version_has_it():
    assert ("PRECALL" in original_opnames(plain_call)) == features.HAS_PRECALL
    assert "PRECALL" not in listing(plain_call)


def test_an_attribute_load_has_no_null():
    def attribute(a):
        return a.b.c

    assert listing(attribute) == ["LOAD_FAST 'a'", "LOAD_ATTR 'b'", "LOAD_ATTR 'c'", "RETURN_VALUE"]


def both(x, y):
    return x and y


def either(x, y):
    return x or y


@pytest.mark.parametrize(
    ("fn", "jump"), [(both, "POP_JUMP_IF_FALSE"), (either, "POP_JUMP_IF_TRUE")]
)
def test_and_or_keep_the_tested_value_by_copying_it(fn, jump):
    # The jump keeps x as the result; falling through pops it for y.
    assert listing(fn) == [
        "LOAD_FAST 'x'",
        "COPY 1",
        f"{jump} ->5",
        "POP_TOP",
        "LOAD_FAST 'y'",
        "RETURN_VALUE",
    ]


def test_a_rewritten_or_pop_keeps_its_original_offset_on_all_three_parts():
    # 3.11's JUMP_IF_FALSE_OR_POP becomes three instructions that share its offset (the
    # continuation recognises the POP_TOP as part of the jump by that); 3.12+ compiles the three
    # instructions itself, each at its own offset.
    at = {ins.offset: ins.opname for ins in instructions.original(both.__code__)}
    parts = [at[ins.offset] for ins in reader.normalize(both.__code__).instrs[1:4]]
    if "JUMP_IF_FALSE_OR_POP" in dis.opmap:
        assert parts == ["JUMP_IF_FALSE_OR_POP"] * 3
    else:
        assert parts == ["COPY", "POP_JUMP_IF_FALSE", "POP_TOP"]


def branch(x):
    if x:
        return 1
    return 2


def negation(x):
    return not x


def test_a_truth_test_jumps_on_the_value_itself_with_no_to_bool():
    assert listing(branch) == [
        "LOAD_FAST 'x'",
        "POP_JUMP_IF_FALSE ->4",
        "LOAD_CONST 1",
        "RETURN_VALUE",
        "LOAD_CONST 2",
        "RETURN_VALUE",
    ]
    assert listing(negation) == ["LOAD_FAST 'x'", "UNARY_NOT", "RETURN_VALUE"]


def test_a_none_test_keeps_its_own_jump():
    def none_test(x):
        if x is None:
            return 1
        return 2

    assert listing(none_test)[:2] == ["LOAD_FAST 'x'", "POP_JUMP_IF_NOT_NONE ->4"]


def total(xs):
    t = 0
    for v in xs:
        t = t + v
    return t


def test_a_for_loop_ends_where_an_exhausted_iterator_continues():
    body = [
        "STORE_FAST 'v'",
        "LOAD_FAST 't'",
        "LOAD_FAST 'v'",
        "BINARY_OP '+'",
        "STORE_FAST 't'",
        "JUMP ->4",
    ]
    # Where END_FOR pops only the value, its POP_TOP of the iterator stays behind, unreachable:
    # the exhausted FOR_ITER jumps past both.
    dead = ["POP_TOP"] if features.END_FOR_POPS_ONLY_VALUE else []
    after = 11 + len(dead)
    assert listing(total) == [
        "LOAD_CONST 0",
        "STORE_FAST 't'",
        "LOAD_FAST 'xs'",
        "GET_ITER",
        f"FOR_ITER ->{after}",
        *body,
        *dead,
        "LOAD_FAST 't'",
        "RETURN_VALUE",
    ]
    assert "END_FOR" not in listing(total)


@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">", ">="])
def test_a_comparison_reads_as_its_operator(op):
    value = make(f"def value(a, b):\n    return a {op} b\n")
    tested = make(f"def tested(a, b):\n    if a {op} b:\n        return 1\n    return 2\n")
    assert listing(value) == [
        "LOAD_FAST 'a'",
        "LOAD_FAST 'b'",
        f"COMPARE_OP {op!r}",
        "RETURN_VALUE",
    ]
    assert listing(tested)[:4] == [
        "LOAD_FAST 'a'",
        "LOAD_FAST 'b'",
        f"COMPARE_OP {op!r}",  # 3.13 writes "bool(<)" where a jump follows
        "POP_JUMP_IF_FALSE ->6",
    ]


@pytest.mark.parametrize(
    "op", ["+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"]
)
def test_a_binary_op_reads_as_its_operator_and_its_inplace_form(op):
    value = make(f"def value(a, b):\n    return a {op} b\n")
    inplace = make(f"def inplace(a, b):\n    a {op}= b\n    return a\n")
    assert listing(value) == ["LOAD_FAST 'a'", "LOAD_FAST 'b'", f"BINARY_OP {op!r}", "RETURN_VALUE"]
    assert listing(inplace)[2:4] == [f"BINARY_OP '{op}='", "STORE_FAST 'a'"]


@pytest.mark.parametrize(
    ("expression", "opname", "arg"),
    [("a is b", "IS_OP", 0), ("a is not b", "IS_OP", 1), ("a in b", "CONTAINS_OP", 0),
     ("a not in b", "CONTAINS_OP", 1)],
)  # fmt: skip
def test_identity_and_membership_keep_their_negation_flag(expression, opname, arg):
    fn = make(f"def fn(a, b):\n    return {expression}\n")
    assert listing(fn) == ["LOAD_FAST 'a'", "LOAD_FAST 'b'", f"{opname} {arg}", "RETURN_VALUE"]


def test_superinstructions_and_slices_read_as_their_parts():
    def unpack_and_slice(t, x):
        a, b = t
        return x[1:2], b - a

    assert listing(unpack_and_slice) == [
        "LOAD_FAST 't'",
        "UNPACK_SEQUENCE 2",
        "STORE_FAST 'a'",
        "STORE_FAST 'b'",
        "LOAD_FAST 'x'",
        "LOAD_CONST 1",
        "LOAD_CONST 2",
        "BUILD_SLICE 2",
        "BINARY_SUBSCR",
        "LOAD_FAST 'b'",
        "LOAD_FAST 'a'",
        "BINARY_OP '-'",
        "BUILD_TUPLE 2",
        "RETURN_VALUE",
    ]


def test_a_closure_is_made_with_3_13s_function_attributes():
    def outer(x):
        def inner():
            return x

        return inner

    stream = listing(outer)
    assert stream[:2] == ["LOAD_CLOSURE 'x'", "BUILD_TUPLE 1"]
    assert stream[3:] == [
        "MAKE_FUNCTION",
        "SET_FUNCTION_ATTRIBUTE 8",
        "STORE_FAST 'inner'",
        "LOAD_FAST 'inner'",
        "RETURN_VALUE",
    ]


def test_a_plain_format_is_format_value_without_conversion_or_spec():
    def text(x):
        return f"{x}"

    assert listing(text) == ["LOAD_FAST 'x'", "FORMAT_VALUE (0, False)", "RETURN_VALUE"]


def test_jump_targets_index_the_normalised_list():
    norm = reader.normalize(total.__code__)
    loop = next(i for i in norm.instrs if i.opname == "FOR_ITER")
    back = next(i for i in norm.instrs if i.opname == "JUMP")
    assert norm.instrs[back.target] is loop
    # every original offset maps to the first normalised instruction made from it (or after it)
    for n, ins in enumerate(norm.instrs):
        assert norm.index_of_offset[ins.offset] <= n
        assert norm.instrs[norm.index_of_offset[ins.offset]].offset == ins.offset


def test_each_instruction_keeps_its_source_line():
    def two_lines(x):
        y = x + 1
        return y

    first = two_lines.__code__.co_firstlineno
    lines = [ins.line - first for ins in reader.normalize(two_lines.__code__).instrs]
    assert lines == [1, 1, 1, 1, 2, 2]


def guarded(x, manager):
    with manager:
        a = x + 1
    try:
        b = a * 2
        with manager:
            c = b - 1
    except ValueError:
        c = 0
    return c


def first_runs(pairs) -> dict[int, list]:
    """Line -> the items of the first run of consecutive (line, item) pairs on that line: a
    statement's code on its normal path (CPython repeats lines in handlers and cleanups)."""
    runs: dict[int, list] = {}
    open_line = None  # the line whose first run is going on
    for line, item in pairs:
        if line != open_line:
            open_line = None if line in runs else line
        if open_line is not None:
            runs.setdefault(line, []).append(item)
    return runs


def protection_by_line(fn) -> dict[int, set[bool]]:
    """Line (from the ``def``) -> the ``in_try`` flags of its statement's instructions."""
    first = fn.__code__.co_firstlineno
    stream = reader.normalize(fn.__code__).instrs
    runs = first_runs((ins.line - first, ins) for ins in stream)
    return {line: {ins.in_try for ins in run} for line, run in runs.items()}


def test_in_try_marks_a_try_body_but_not_a_lone_with_block():
    by_line = protection_by_line(guarded)
    assert by_line[2] == {False}  # a = x + 1: in a with-block only
    assert by_line[4] == {True}  # b = a * 2
    assert by_line[8] == {False}  # the except clause's body
    assert by_line[9] == {False}  # return c


def test_in_try_marks_the_body_of_a_with_block_inside_a_try():
    # An exception in ``c = b - 1`` goes to the with-block's exit, whose cleanup goes on to the
    # except clause: a break there cannot resume (the eager call would run outside the try).
    assert protection_by_line(guarded)[6] == {True}


def test_normalize_is_memoised_per_code_object():
    assert reader.normalize(total.__code__) is reader.normalize(total.__code__)


# -- instructions.py: the original listing ----------------------------------------------------


many_constants = make(
    "def many_constants(x):\n    return x" + "".join(f" + {i}.5" for i in range(300)) + "\n"
)


def test_original_lists_real_instructions_only():
    listed = instructions.original(many_constants.__code__)
    everything = list(dis.get_instructions(many_constants.__code__))
    assert any(i.opname == "EXTENDED_ARG" for i in everything)
    assert [i.opname for i in listed] == [
        i.opname for i in everything if i.opname not in ("CACHE", "EXTENDED_ARG")
    ]
    offsets = [i.offset for i in listed]
    assert offsets == sorted(set(offsets))


def catching(x):
    y = 0
    try:
        y = 1 / x
    except ZeroDivisionError:
        y = -1
    return y


def test_handlers_map_each_protected_offset_to_its_except_clause():
    code = catching.__code__
    table = instructions.handlers(code)
    listed = instructions.original(code)
    index = {ins.offset: n for n, ins in enumerate(listed)}
    start = next(n for n, ins in enumerate(listed) if ins.argval == 1)
    body = [ins.offset for ins in listed[start : start + 4]]  # y = 1 / x
    ret = next(n for n, ins in enumerate(listed) if ins.opname == "RETURN_VALUE")
    outside = [ins.offset for ins in listed[1:3] + listed[ret - 1 : ret + 1]]  # y = 0; return y
    assert [listed[n].opname for n in (start + 3, ret - 1)] == ["STORE_FAST", "LOAD_FAST"]
    for offset in body:
        entry = table[offset]
        assert listed[index[entry.target]].opname == "PUSH_EXC_INFO"
        assert (entry.depth, entry.lasti) == (0, False)
    assert not set(outside) & set(table)
    # The except clause is itself protected, by the cleanup that restores the exception.
    clause = table[body[0]].target
    assert table[clause].lasti is True and table[clause].target != clause
    assert set(table) == {
        offset
        for entry in dis.Bytecode(code).exception_entries
        for offset in range(entry.start, entry.end, 2)
    }


def test_line_of_reads_each_instructions_line():
    line = None
    for ins in instructions.original(catching.__code__):
        line = instructions.line_of(ins, line)
        if ins.positions.lineno is not None:
            assert line == ins.positions.lineno, ins


def test_line_of_falls_back_to_the_previous_line():
    first = catching.__code__.co_firstlineno
    starts, inside, *_ = (
        i for i in instructions.original(catching.__code__) if i.positions.lineno == first + 3
    )  # ``1 / x``: LOAD_CONST 1 starts the line, LOAD_FAST x does not
    assert instructions.line_of(starts, 42) == first + 3
    # Before 3.13 ``dis`` gives a line only where one starts; 3.13 gives every instruction's.
    assert instructions.line_of(inside, 42) == (first + 3 if features.INSTRUCTION_LINES else 42)
    blank = {"line_number": None} if features.INSTRUCTION_LINES else {"starts_line": None}
    assert instructions.line_of(starts._replace(**blank), 42) == 42


RETIRED = {"PRECALL", "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS",
           "TO_BOOL", "END_FOR", "KW_NAMES", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP",
           "RETURN_CONST", "BINARY_SLICE", "LOAD_METHOD", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST",
           "STORE_FAST_STORE_FAST", "JUMP_FORWARD", "JUMP_BACKWARD", "FORMAT_SIMPLE",
           "CALL_INTRINSIC_1"}  # fmt: skip


@pytest.mark.parametrize(
    "fn",
    [plain_call, keyword_call, star_call, global_call, method_call, method_keyword_call, both,
     either, branch, negation, total, guarded, catching, many_constants],
)  # fmt: skip
def test_no_version_only_opcode_reaches_the_translator(fn):
    names = {text.split()[0] for text in listing(fn)}
    assert not names & RETIRED
    assert not any(n.startswith(("POP_JUMP_FORWARD", "POP_JUMP_BACKWARD")) for n in names)
