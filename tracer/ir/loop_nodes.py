"""The targets of loop nodes: plain data, printed as the loop they are.

A ``loop`` node's target is a `ForLoop`, a ``while_loop`` node's a `WhileLoop`: the body graph,
how many of its inputs are the carried values, and (for ``for``) whether it walks an array's
rows or (for ``while``) whether its condition is negated. The graph prints each loop node as a
function of its own, defined before the graph's (`function_lines`): a real ``for`` or ``while``
statement with the body's statements inside, as eager code runs them (a call per iteration
would cost more than a small body). Backends that compile the body their own way run it with
`drive`, the same loop around their compiled body.
"""

from __future__ import annotations

from dataclasses import dataclass

from .node import nodes_in

FIRST, COUNT, COND = "__tc_first", "__tc_count", "__tc_cond"


@dataclass(frozen=True, eq=False)
class LoopSpec:
    """A loop node's target. The body graph takes the carried values first (after a for loop's
    index), then the values it reads from before the loop; its output starts with the carried
    values' new versions (after a while loop's next condition)."""

    body: object  # the body's Graph (this module imports none: the graph imports it)
    carried: int

    leading = ()  # outputs before the carried values
    index_inputs = 0  # body inputs before the carried values

    def returned(self) -> tuple:
        """The body's output nodes whose values the loop node returns."""
        return self.body.output.args[0][len(self.leading) :]

    def carried_inputs(self) -> list:
        """The body's input nodes of the carried values (after a for loop's index)."""
        return self.body.inputs[self.index_inputs : self.index_inputs + self.carried]


@dataclass(frozen=True, eq=False)
class ForLoop(LoopSpec):
    """``loop(first, count, *carried, *read)``: iterations ``first`` to ``first + count - 1``;
    the body takes the index ``k`` first. Returns the last iteration's outputs (for a loop that
    ran no iteration: the carried values as given where it gives back no other, else nothing). ``over_rows``: the loop is over an array's rows (its count is
    theirs), each made first in an iteration."""

    over_rows: bool = False

    op = "loop"
    index_inputs = 1

    def drive(self, body, first: int, count: int, *args):
        """The loop with ``body(k, *carried, *read)`` (a backend's compiled body) per
        iteration, as the printed loop runs it."""
        carried, read = args[: self.carried], args[self.carried :]
        out = tuple(carried) if len(self.returned()) == self.carried else ()
        for k in range(first, first + count):
            out = body(k, *carried, *read)
            carried = out[: self.carried]
        return out


@dataclass(frozen=True, eq=False)
class WhileLoop(LoopSpec):
    """``while_loop(cond, *carried, *read)``: runs the body while ``cond`` (then the condition
    the body computes, its first output) is true (false, for ``negate``), as ``while`` does;
    returns the carried values (the ones given, when it runs no iteration)."""

    negate: bool = False

    op = "while_loop"
    leading = (COND,)

    def drive(self, body, cond, *args):
        """The loop with ``body(*carried, *read)`` (a backend's compiled body) per iteration,
        as the printed loop runs it."""
        carried, read = args[: self.carried], args[self.carried :]
        while bool(cond) != self.negate:
            out = body(*carried, *read)
            cond, carried = out[0], out[1 : 1 + self.carried]
        return tuple(carried)


LOOP_OPS = frozenset({ForLoop.op, WhileLoop.op})


def function_lines(loop: LoopSpec, name: str, params: list[str], body: list, outputs: list[str],
                   node, *, empty_tail: bool = True, first: str = FIRST,
                   prologue: list[str] = ()) -> list:  # fmt: skip
    """The loop as the Python function ``name``, line by line as (text, node): ``params`` are
    the body graph's inputs, ``body`` its statements as its function prints them (indented
    once), ``outputs`` the text of its outputs. The loop's own lines belong to the loop
    ``node``; the body's lines keep theirs. ``empty_tail``: a for loop that ran no iteration
    returns ``()`` (without it, its function has one return, and its caller must not call it
    for no iteration: a compiler types every return alike). ``first``: how the loop's first
    index is spelled (a compiler that knows it from the graph's call may take a literal);
    ``prologue``: a for loop's statements before its loop."""
    statements = [(f"    {text}", n) for text, n in body]
    index = params[0] if isinstance(loop, ForLoop) else None
    own = params[loop.index_inputs :]
    carried, read = own[: loop.carried], own[loop.carried :]
    new = outputs[: len(loop.leading) + loop.carried]
    pairs = [(n, v) for n, v in zip([*loop.leading, *carried], new, strict=True) if n != v]
    if pairs:  # (a value made under its carried name needs no copy)
        statements.append((f"        {', '.join(n for n, _ in pairs)} = "
                           f"{', '.join(v for _, v in pairs)}", node))  # fmt: skip
    if isinstance(loop, WhileLoop):
        test = f"not {COND}" if loop.negate else COND
        head = [(f"def {name}({', '.join([COND, *own])}):", node), (f"    while {test}:", node)]
        tail = [(f"    return {_tuple(carried)}", node)]
        return head + (statements or [("        pass", node)]) + tail
    end = f"{first} + {COUNT}"
    target, items = index, f"range({first}, {end})"
    row = _row_of(statements, index, read) if loop.over_rows else None
    if row is not None:  # the body starts with `row = x[k]`: iterate over x's rows instead
        (row_name, array), statements = row, statements[1:]
        items, target = f"{array}[{first}:{end}]", row_name
        if index in outputs or _reads(statements, index):
            target, items = f"{index}, {row_name}", f"enumerate({items}, {first})"
    lines = [
        (f"def {name}({', '.join([FIRST, COUNT, *own])}):", node),
        *((f"    {text}", node) for text in prologue),
        (f"    for {target} in {items}:", node),
        *(statements or [("        pass", node)]),
    ]
    returned = _tuple([*carried, *outputs[loop.carried :]])
    if not empty_tail or len(outputs) == loop.carried:  # (no iteration: the carried as given)
        return [*lines, (f"    return {returned}", node)]
    return [*lines, (f"    if {COUNT}:", node), (f"        return {returned}", node),
            ("    return ()", node)]  # fmt: skip


def _row_of(statements: list, index: str, read: list[str]) -> tuple[str, str] | None:
    """``(row, x)`` when the first statement is ``row = x[k]``, ``x`` an array the loop reads
    (not one it carries) and ``k`` its index: in a loop over ``x``'s rows, iterating over
    them gives the same views, for less than indexing costs."""
    if not statements:
        return None
    text, node = statements[0]
    array, position = (node.args + (None, None))[:2] if node.op == "getitem" else (None, None)
    if (
        text.lstrip().startswith(f"{node.name} = ")  # the node's statement, no with-block's
        and getattr(array, "name", None) in read
        and getattr(position, "name", None) == index
    ):
        return node.name, array.name
    return None


def _reads(statements: list, index: str) -> bool:
    """Whether a statement's node uses the body's input ``index``."""
    nodes = {id(n): n for _, n in statements if n is not None}.values()
    return any(used.op == "input" and used.name == index
               for n in nodes for used in nodes_in((n.args, n.kwargs)))  # fmt: skip


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
