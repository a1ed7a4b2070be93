"""A for loop node inside a loop's body, printed as the ``for`` statement it is in the body's
own function (`Graph.python_code` of the eager backend), not as a call of its function per
iteration of the enclosing loop: a CRC's ``for _ in range(8):`` per byte cost a call, a tuple
and its unpacking (1.1x plain Python's time over 64 bytes)::

    crc_2 = (crc ^ (data[k]))          # the carried values, under names of their own
    for k_1 in range(0, 0 + 8):
        if crc_2 & 1: ...              # the body's statements, its inputs read by those names
        crc_2 = crc_1                  # the carried values' next versions
    crc = crc_2                        # the loop node's items

The body's nodes whose names the enclosing function uses are printed under names of their own.
"""

from __future__ import annotations

import operator

from .loop_nodes import ForLoop
from .node import Node, nodes_in


def inlines(node: Node, unpacked: dict) -> bool:
    """Whether ``node`` (in a loop body's function) prints as an inline ``for``: a for loop
    giving back its carried values alone, each read as an item (or giving back nothing)."""
    loop = node.target
    return (
        isinstance(loop, ForLoop)
        and not loop.over_rows
        and not loop.leading
        and len(loop.returned()) == loop.carried
        and (node in unpacked or not loop.returned())
    )


def inline_lines(node: Node, printer, within: str, comments: bool, loops: list, plan,
                 targets: list | None, taken: set[str], in_place: dict) -> list:  # fmt: skip
    """The loop node as an inline ``for`` in the function ``within`` (the names ``taken``
    there), line by line as (text, node); ``targets`` are the nodes of its items; ``in_place``
    the carried values the body may make under their carried name (`_carried_in_place`)."""
    loop, body = node.target, node.target.body
    first, count, *given = (printer.arg(a) for a in node.args)
    index, *own = body.inputs
    carried = own[: loop.carried]
    taken = set(taken) | {n.name for n in body.nodes}

    def fresh(base: str) -> str:
        n = 1
        while f"{base}_{n}" in taken:
            n += 1
        taken.add(f"{base}_{n}")
        return f"{base}_{n}"

    lines, names = [], {}
    for value, text in zip(own, given, strict=True):  # read once, before the loop
        if value in carried or not text.isidentifier():
            names[value] = fresh(value.name)
            lines.append((f"{names[value]} = {text}", node))
        else:
            names[value] = text
    offset = _offset_item(body, index, carried)
    if offset is None:
        names[index] = fresh(index.name)
        start = first
    else:  # the loop's variable is the item itself: ``for j in range(i + 1, n)``
        item, shift = offset
        names[index] = names[item] = fresh(item.name)
        shift = names.get(shift, shift) if isinstance(shift, Node) else repr(shift)
        start = shift if first == "0" else f"{first} + {shift}"
    lines.append((f"for {names[index]} in range({start}, {start} + {count}):", node))
    every_node = body.nodes  # the item the for makes is printed by no statement
    printed = [n for n in every_node if offset is None or n is not offset[0]]
    renamed = {n: n.name for n in printed if n.op not in ("input", "output")
               and (n.name in taken or n in in_place)}  # fmt: skip
    by_name = {c.name: c for c in carried}
    saved = dict(printer.aliases)
    printer.aliases.update({id(value): name for value, name in names.items()})
    try:
        body.nodes = printed
        for n in renamed:  # a carried value made under its name: no copy per iteration
            n.name = names[by_name[in_place[n]]] if n in in_place else fresh(n.name)
        body_plan = plan.of_body(node) if plan else None
        statements = list(body._function_lines(printer, within, comments, body_plan, loops))
        outputs = [printer.arg(v) for v in loop.returned()]
    finally:
        printer.aliases = saved
        for n, name in renamed.items():
            n.name = name
        body.nodes = every_node
    lines += [(text, n) for text, n, _ in statements[1:-1]]
    pairs = [(names[c], v) for c, v in zip(carried, outputs, strict=True) if names[c] != v]
    if pairs:
        lines.append((f"    {', '.join(c for c, _ in pairs)} = {', '.join(v for _, v in pairs)}",
                      node))  # fmt: skip
    if lines[-1][0].startswith("for "):
        lines.append(("    pass", node))
    items = [(t.name, names[c]) for t, c in zip(targets or (), carried, strict=False) if t]
    if items:
        lines.append((f"{', '.join(t for t, _ in items)} = {', '.join(c for _, c in items)}",
                      node))  # fmt: skip
    return lines


def _offset_item(body, index: Node, carried: list) -> tuple | None:
    """``(item, shift)`` where the index's one use is ``item = index + shift`` (``shift`` an
    input the loop does not carry, or an int): the ``for`` runs over the items themselves, one
    addition an iteration fewer (the item of ``range(i + 1, j)`` at position ``k``)."""
    users = [n for n in body.nodes if any(a is index for a in nodes_in((n.args, n.kwargs)))]
    if len(users) != 1 or users[0].op != "call" or users[0].target is not operator.add:
        return None
    item = users[0]
    if len(item.args) != 2 or item.kwargs or index not in item.args:
        return None
    shift = item.args[1] if item.args[0] is index else item.args[0]
    if isinstance(shift, Node):
        return (item, shift) if shift.op == "input" and shift not in carried else None
    return (item, shift) if type(shift) is int else None
