"""The graph IR: a list of nodes that prints as runnable Python calling NumPy.

Node kinds (``Node.op``), the only ones there are:

  ``input``    a graph input; ``target`` is the description of where the frame reads it
               (``x``, ``G['W']``, ``obj.w``); prints as a parameter of ``forward``.
  ``call``     ``target(*args, **kwargs)``; ``target`` is a NumPy function, a ufunc or ufunc
               method, an ``operator`` function (printed infix), or any other callable the
               tables allow; the result is the node's value.
  ``method``   ``args[0].target(*args[1:], **kwargs)``: an ndarray / NumPy-scalar method.
  ``attr``     ``args[0].target``: an attribute of an array (``x.T``, ``x.real``).
  ``getitem``  ``args[0][args[1]]``.
  ``setitem``  statement ``args[0][args[1]] = args[2]``: mutates ``args[0]``; no value.
  ``inplace``  statement ``args[0] <op>= args[1]`` (``target`` an ``operator.i*`` function):
               mutates ``args[0]`` in place; no value of its own.
  ``loop``     ``for`` over iterations ``args[0]`` to ``args[0] + args[1] - 1`` of the body graph
               ``target.body`` (a `loop_nodes.ForLoop`), carrying ``args[2:2 + carried]``,
               reading the rest; the tuple of the last iteration's outputs is its value.
  ``while_loop`` the same body run while ``args[0]`` (then the condition the body computes)
               is true (`loop_nodes.WhileLoop`); its value is the carried values' tuple.
  ``cond``     ``target.then_body(*args[1:])`` where ``args[0]`` is true, else
               ``target.else_body(*args[1:])`` (a `cond_nodes.Cond`): a branch on an array
               value; the tuple the side taken gives is its value.
  ``output``   ``return args[0]`` (a tuple of nodes); always last.

A loop node prints as the call of its loop's function, defined before the graph's: a real
``for`` or ``while`` statement with the body's statements inside; a cond node's function is
an ``if`` statement with each side's statements.

A ``call`` or ``method`` node with ``mutates=True`` also writes into one of its arguments
(``np.add(a, b, out=c)``, ``x.sort()``): like a statement, it is never dropped as dead code.

Arguments may nest nodes inside tuples, lists, dicts and slices. Every node carries
``meta`` (``"f64[4, 8]"``-style text of its value's type) and ``stack`` (the user's frames, innermost
last), which the printer puts in a trailing comment: what the user sees is what runs.
"""

from __future__ import annotations

import builtins
import keyword
from collections.abc import Callable, Iterator

import numpy as np

from . import cond_nodes, inline_loops, loop_nodes
from .cond_nodes import BODY_OPS, Cond
from .line_numbers import compile_at_user_lines
from .loop_nodes import LOOP_OPS
from .node import RAISE, SILENT, STATEMENT_OPS, Node, nodes_in
from .printer import Printer, comment

# Names a node may not take: the printed code uses some, and the others would read as builtins.
_RESERVED = frozenset({"np", "self", "forward", *dir(builtins)})


class Graph:
    """An ordered list of nodes. Build with the ``add_*`` methods; print with ``python_code``."""

    def __init__(self, name: str = "forward", module: str | None = None):
        self.name = name
        # The user's module: the graph's warnings show as its code's do (the warnings filters
        # match by module: DeprecationWarning is shown by default in __main__ only)
        self.module = module
        self.nodes: list[Node] = []
        self._names: set[str] = set()
        self._next_suffix: dict[str, int] = {}  # base -> the first suffix that may be free
        self._made: dict[str, tuple[str, int]] = {}  # name -> (base, suffix) it was made of

    # -- building -----------------------------------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "v"
        if base[0].isdigit():
            base = f"v_{base}"
        if keyword.iskeyword(base) or base in _RESERVED:
            base = f"{base}_"
        # The lowest free suffix, searched from where the last search for ``base`` ended (a
        # search from 1 each time is quadratic in a graph of thousands of ``add_N`` nodes).
        n = self._next_suffix.get(base, 0)
        name = f"{base}_{n}" if n else base
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        self._next_suffix[base] = n + 1
        self._made[name] = (base, n)
        return name

    def rename(self, node: Node, hint: str) -> None:
        """Give ``node`` the user's variable name (first store wins)."""
        self._names.discard(node.name)
        base, n = self._made.pop(node.name, (None, 0))
        if base is not None:  # its suffix is free again
            self._next_suffix[base] = min(self._next_suffix[base], n)
        node.name = self.fresh_name(hint)

    def add(self, op: str, target, args=(), kwargs=None, *, name: str, meta: str = "", stack=(),
            risk: str = RAISE) -> Node:  # fmt: skip
        node = Node(self, self.fresh_name(name), op, target, tuple(args), kwargs or {}, meta, stack,
                    risk=risk)  # fmt: skip
        self.nodes.append(node)
        return node

    @property
    def inputs(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "input"]

    @property
    def output(self) -> Node | None:
        return self.nodes[-1] if self.nodes and self.nodes[-1].op == "output" else None

    def op_count(self) -> int:
        return sum(1 for n in self.nodes if n.op not in ("input", "output"))

    # -- checking -----------------------------------------------------------------------------
    def lint(self) -> None:
        """Check the IR's invariants; raise AssertionError naming the first broken one."""
        seen: set[int] = set()
        names: set[str] = set()
        for i, node in enumerate(self.nodes):
            assert node.graph is self, f"{node} belongs to another graph"
            assert node.op in _OPS, f"{node} has unknown op {node.op!r}"
            assert node.name.isidentifier() and node.name not in names, f"bad name {node.name!r}"
            names.add(node.name)
            if node.op == "input":
                assert all(n.op == "input" for n in self.nodes[:i]), f"input {node} after an op"
            if node.op == "output":
                assert i == len(self.nodes) - 1, "output is not the last node"
            for used in nodes_in((node.args, node.kwargs)):
                assert used.graph is self, f"{node} uses {used} of another graph"
                assert id(used) in seen, f"{node} uses {used} before it is defined"
                assert used.has_value, f"{node} uses the value of statement {used}"
            seen.add(id(node))

    def eliminate_dead_code(self) -> None:
        """Drop nodes nothing uses. Statements, writes, and nodes that may raise or warn (any
        risk but "silent") always stay: eager code would raise or warn there. Inputs stay too
        (their risk is not "silent"): the graph takes what the glue passes it."""
        live: set[int] = set()
        for node in reversed(self.nodes):
            keep = node.op in STATEMENT_OPS or node.op == "output" or node.mutates
            keep = keep or node.risk != SILENT
            if keep or id(node) in live:
                live.add(id(node))
                live.update(id(n) for n in nodes_in((node.args, node.kwargs)))
        self.nodes = [n for n in self.nodes if id(n) in live]

    # -- printing -----------------------------------------------------------------------------
    def python_code(self, namespace: dict | None = None, *, comments: bool = True,
                    plan=None) -> str:  # fmt: skip
        """The graph as a Python function ``forward``; ``namespace`` receives the globals it needs.

        ``plan`` (a backend's memory plan) adds ``out=`` buffers and ``del`` statements: its
        ``buffer_of(node)`` is the node whose array ``node`` writes into, ``released_after(node)``
        the nodes whose names die after ``node``'s statement, ``of_body(node)`` a loop body's
        own plan. Each loop node's function (`loop_nodes.function_lines`) comes first."""
        return "\n".join(text for text, _, _ in self._lines(namespace, comments, plan)) + "\n"

    def code_lines(self, namespace: dict | None = None, *, comments: bool = True,
                   plan=None) -> list[tuple[str, Node | None]]:  # fmt: skip
        """`python_code` line by line, each with the node it was printed for (None for the
        graph function's ``def``): a line's place in the user's code is its node's."""
        return [(text, node) for text, node, _ in self._lines(namespace, comments, plan)]

    def _lines(self, namespace: dict | None, comments: bool, plan=None) -> list:
        """(text, node, whether it is the node's statement) per line of `python_code`."""
        loops: list = []  # the loop nodes' functions, nested ones first
        lines = list(self._function_lines(self._printer(namespace), self.name, comments, plan,
                                          loops))  # fmt: skip
        return loops + lines

    def _function_lines(self, printer, name: str, comments: bool, plan, loops: list,
                        fold: bool | None = None, rows: bool = False) -> Iterator[tuple]:  # fmt: skip
        """The graph's function, line by line as it is printed (lazily: a reader of the first
        statements prints no more); its loop nodes' functions go to ``loops``. ``fold`` (by
        default, where a backend's memory plan is printed): a value read once, by the next
        statement, is computed there (`_folded`)."""
        yield (f"def {name}({', '.join(n.name for n in self.inputs)}):", None, False)
        fold = plan is not None if fold is None else fold
        unpacked = _unpacked_conds(self.nodes, loops=True)  # node -> the nodes of its items
        tests = _inline_tests(self.nodes)  # predicates a cond's `if` computes itself
        folded = _folded(self.nodes, plan, rows) if fold else set()
        inlined = _inlined(self.nodes, printer, unpacked)  # for loops printed as statements
        unnamed = {*unpacked, *tests, *folded, *inlined}  # nodes the code never assigns
        deferred: list = []  # names dying after a folded node: deleted after its reader
        errstate: tuple = ()
        header = None  # the with-statement of the np.errstate in force, if printed
        for node in self.nodes:
            if node.op == "input":
                continue
            wanted = node.errstate if node.op != "output" else ()
            if wanted != errstate:  # ops traced under np.errstate run under it
                header = printer.errstate(dict(wanted)) if wanted else None
                if header:
                    yield (f"    {header}", node, False)
                errstate = wanted
            indent = "        " if header else "    "
            released = [n for n in plan.released_after(node) if n not in unnamed] if plan else []
            if node in folded or node in tests:  # computed by the statement after it
                if node in folded:
                    printer.aliases[id(node)] = f"({printer.expression(node)})"
                deferred += released
                continue
            released, deferred = deferred + released, []
            if isinstance(node.target, Cond) or node in inlined:  # an if or a for statement
                for text, n, own in self._block_lines(node, printer, name, comments, loops, plan,
                                                      unpacked, node.args[0] in tests, fold):  # fmt: skip
                    yield (indent + text, n, own)
            elif node not in tests and not any(node in items for items in unpacked.values()):
                if node.op in BODY_OPS:
                    body_plan = plan.of_body(node) if plan else None
                    loop_name = loop_function_name(node, name)
                    loops.extend(_body_op_lines(node.target, loop_name, printer, comments,
                                                body_plan, loops, node))  # fmt: skip
                own = printer.lines_of(node)
                if own is not None:  # several nodes' lines at one's place, none at the others'
                    for text, n in own:
                        commented = f"{text:<40}  # {comment(n)}" if comments and n else text
                        yield (indent + commented, n, False)
                else:
                    yield (indent + _statement(node, printer, plan, name, unpacked, comments),
                           node, True)  # fmt: skip
            if released:
                yield (f"{indent}del {', '.join(n.name for n in released)}", node, False)
        if self.output is None:
            yield ("    return ()", None, False)

    def _block_lines(self, node: Node, printer, name: str, comments: bool, loops: list, plan,
                     unpacked: dict, inline_test: bool, fold: bool) -> Iterator[tuple]:  # fmt: skip
        """A cond node as its ``if`` statement, or a for loop node in a loop body as its ``for``
        statement (`inline_loops`), in the function ``name``: (text, node, whether it is the
        node's statement) per line."""
        if isinstance(node.target, Cond):  # its sides' statements inside
            for text, n in _inline_cond_lines(node, printer, name, comments, loops,
                                              unpacked.get(node), inline_test, fold):  # fmt: skip
                yield text, n, n is node and text.startswith("if ")
            return
        taken = {n.name for n in self.nodes} | set(printer.aliases.values())
        for text, n in inline_loops.inline_lines(node, printer, name, comments, loops, plan,
                                                 unpacked.get(node), taken,
                                                 _carried_in_place(node.target)):  # fmt: skip
            yield text, n, n is node and text.startswith("for ")

    def statements(self, namespace: dict | None = None, *,
                   comments: bool = True) -> Iterator[tuple[Node, str]]:  # fmt: skip
        """(node, its statement as `python_code` prints it, unindented) for every node but the
        inputs, in order: what a view of the code line by line shows (the widget's line map
        lists a source line's ops by it; a loop node's statement is the call of its function).
        Constants are bound in the order of the whole graph, so a statement's names are those
        of the printed code."""
        printer, loops = self._printer(namespace), []
        for text, node, statement in self._function_lines(
            printer, self.name, comments, None, loops
        ):
            if statement:
                yield node, text.strip()

    def _printer(self, namespace: dict | None) -> Printer:
        ns = namespace if namespace is not None else {}
        ns.setdefault("np", np)
        if self.module is not None:
            ns.setdefault("__name__", self.module)
        return Printer(ns)

    def format_node(self, node: Node) -> str:
        """One node as the Python statement it prints as."""
        return Printer({"np": np}).statement(node, None, loop_function_name(node, self.name))

    def cond_code(self, node: Node) -> str:
        """A cond node's ``if`` statement as the graph prints it (without comments; the
        functions of the loops inside its sides first)."""
        loops: list = []
        targets = _unpacked_conds(self.nodes).get(node)
        inline = node.args[0] in _inline_tests(self.nodes)
        lines = _inline_cond_lines(node, Printer({"np": np}), self.name, False, loops, targets,
                                   inline)  # fmt: skip
        return "\n".join([*(text for text, _, _ in loops if text), *(text for text, _ in lines)])

    def printed_within_conds(self) -> set[Node]:
        """The nodes with no statement of their own: the items of cond nodes that their sides
        assign, and the predicates their ``if`` computes."""
        items = {
            n for found in _unpacked_conds(self.nodes).values() for n in found if n is not None
        }
        return items | _inline_tests(self.nodes)

    def loop_code(self, node: Node) -> str:
        """A loop or cond node's function as the graph prints it (without comments; the
        functions of the nodes inside it first)."""
        loops: list = []
        lines = _body_op_lines(node.target, loop_function_name(node, self.name),
                            Printer({"np": np}), False, None, loops, node)  # fmt: skip
        return "\n".join(text for text, _, _ in loops + lines if text)

    def __str__(self) -> str:
        header = "".join(f"# input {n.name}: {n.target}  {n.meta}\n" for n in self.inputs)
        return header + self.python_code()


def _body_op_lines(target, name: str, printer: Printer, comments: bool, plan, loops: list,
                   node: Node | None) -> list:  # fmt: skip
    """A loop or cond node's function ``name`` (the functions of the nodes inside its bodies go
    to ``loops``)."""
    if isinstance(target, Cond):
        return _cond_lines(target, name, printer, comments, loops, node)
    return _loop_lines(target, name, printer, comments, plan, loops, node)


def _statement(node: Node, printer: Printer, plan, within: str, unpacked: dict,
               comments: bool) -> str:  # fmt: skip
    """``node``'s statement in the function ``within``, with its comment."""
    buffer = plan.buffer_of(node) if plan else None
    text = printer.statement(node, buffer, loop_function_name(node, within))
    if node in unpacked:  # ``crc, = _loop_fn(...)``: its items, not its tuple
        names = [t.name if t is not None else "_" for t in unpacked[node]]
        text = f"{', '.join(names)}{',' * (len(names) == 1)} = {text.split(' = ', 1)[1]}"
    if comments and node.op != "output":
        text = f"{text:<40}  # {comment(node)}"
    return text


def _unpacked_conds(nodes: list[Node], loops: bool = False) -> dict[Node, list]:
    """Each cond node (and loop node, with ``loops``) whose value is only read item by item
    (``cond[0]``), with the node of each item (None for an item nobody reads): its sides
    assign those directly (a loop's call is unpacked into them: ``crc, = _loop_fn(...)``)."""
    found: dict[Node, list] = {
        n: [None] * _items(n.target) for n in nodes
        if isinstance(n.target, Cond) or (loops and n.op in LOOP_OPS and _items(n.target))
    }  # fmt: skip
    if not found:  # (a graph of thousands of ops and no cond or loop: no pass over them)
        return found
    for node in nodes:
        for used in nodes_in((node.args, node.kwargs)):
            if used not in found:
                continue
            position = node.args[1] if node.op == "getitem" and node.args[0] is used else None
            if type(position) is int and found[used][position] is None and node.has_value:
                found[used][position] = node
            else:
                found.pop(used)  # read otherwise: the sides make the tuple
    return found


def _items(target) -> int:
    """How many items a cond or loop node's tuple holds (a while loop gives its carried)."""
    if isinstance(target, Cond):
        return len(target.then_body.output.args[0])
    return target.carried if target.op == "while_loop" else len(target.returned())


def _inlined(nodes: list[Node], printer: Printer, unpacked: dict) -> set[Node]:
    """The for loop nodes printed as ``for`` statements where they are (`inline_loops`): in a
    loop body's function, where the printer prints them so."""
    if not (printer.inline_loops and printer.loop_depth):
        return set()
    return {n for n in nodes if n.op in LOOP_OPS and inline_loops.inlines(n, unpacked)}


def _inline_tests(nodes: list[Node]) -> set[Node]:
    """The predicates a cond node's ``if`` computes itself (``if x[i] > best:``): made right
    before it (what may raise or warn keeps its place), read by it alone."""
    if not any(isinstance(n.target, Cond) for n in nodes):
        return set()
    users: dict[int, int] = {}
    for node in nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users[id(used)] = users.get(id(used), 0) + 1
    return {
        before
        for before, node in zip(nodes, nodes[1:])
        if isinstance(node.target, Cond) and node.args[0] is before and users[id(before)] == 1
        and before.op in ("call", "method", "getitem", "attr") and not before.mutates
        and before.errstate == node.errstate
        and not (before.op == "getitem" and getattr(before.args[0], "op", None) in BODY_OPS)
    }  # fmt: skip


def _folded(nodes: list[Node], plan, rows: bool = False) -> set[Node]:
    """The values computed where they are read (``crc = (crc >> 1) ^ poly``, not a name for
    ``crc >> 1``): each read once, by a statement they come right before, in the order that
    statement evaluates its arguments (so what runs and raises runs in the same order). Not the
    row of a loop over rows (``rows``: ``row = x[k]``, the loop iterates over them), not into a cond
    node (its sides read their inputs by name) or a write (``a[k] += 1`` writes a name), not
    what a memory plan writes into."""
    users: dict[int, int] = {}
    for node in nodes:
        for used in nodes_in((node.args, node.kwargs)):
            users[id(used)] = users.get(id(used), 0) + 1
    counter = nodes[0] if nodes and nodes[0].op == "input" else None
    buffers = {id(plan.buffer_of(n)) for n in nodes} if plan is not None else set()

    def candidate(node: Node) -> bool:
        return (
            node.op in ("call", "method", "getitem", "attr")
            and node.has_value and not node.mutates and "out" not in node.kwargs
            and users.get(id(node)) == 1
            and not (node.op == "getitem" and ((rows and node.args[1] is counter)
                     or getattr(node.args[0], "op", None) in BODY_OPS))  # (their items: unpacked)
            and (plan is None or plan.buffer_of(node) is None) and id(node) not in buffers
        )  # fmt: skip

    found: set[Node] = set()
    run: list[Node] = []  # candidates right before the node at hand, in order
    for node in nodes:
        reads = [u for u in nodes_in((node.args, node.kwargs)) if any(u is r for r in run)]
        if reads and node.op not in ("output", "input", "inplace") and not node.mutates \
                and not isinstance(node.target, Cond) \
                and all(a is b for a, b in zip(run[-len(reads):], reads)) \
                and all(r.errstate == node.errstate for r in reads):  # fmt: skip
            found.update(reads)
            run = []
        elif reads:
            run = []
        run = [*run, node] if candidate(node) else []
    return found


def _inline_cond_lines(node: Node, printer: Printer, within: str, comments: bool, loops: list,
                       targets: list | None, inline_test: bool = False,
                       fold: bool = False) -> list:  # fmt: skip
    """A cond node as the ``if`` statement it is, in the function ``within``: each side's
    statements (its inputs read as the node's arguments; its nodes are named apart from the
    enclosing function's, `conds`), then the node's items from the side's outputs (assigned
    to ``targets``, the nodes of the items, where given; else the node's tuple). No call, no
    tuple: a branch inside a loop costs what the user's own ``if`` does. ``inline_test``: the
    ``if`` computes the predicate itself (`_inline_tests`)."""
    cond, pred, outer = node.target, node.args[0], node.args[1:]
    test = printer.test(pred) if inline_test else printer.arg(pred)
    lines = [(f"if {test}:", node)]
    for body, side in zip(cond.bodies, ("then", "else"), strict=True):
        head = len(lines)
        saved = dict(printer.aliases)
        printer.aliases.update(
            {id(i): printer.arg(v) for i, v in zip(body.inputs, outer, strict=True)}
        )
        made = body.output.args[0]
        # a value the side makes is made under its item's name (``n_3 = n + 1``, not a copy)
        renamed = {} if targets is None else {
            v: t.name for v, t in zip(made, targets, strict=True)
            if t is not None and isinstance(v, Node) and v.op != "input" and made.count(v) == 1
            and not _read_after(body, v, t.name, printer)
        }  # fmt: skip
        names = {v: v.name for v in renamed}
        try:
            for v, name in renamed.items():
                v.name = name
            statements = list(body._function_lines(printer, within, comments, None, loops, fold))
            statements = statements[1:-1]
            if targets is None:
                assigned = [(node.name, printer.arg(tuple(made)))]
            else:
                assigned = [
                    (t.name, printer.arg(v))
                    for t, v in zip(targets, made, strict=True)
                    if t is not None and v not in renamed and t.name != printer.arg(v)
                ]  # fmt: skip (``n = n``: nothing)
        finally:
            printer.aliases = saved
            for v, name in names.items():
                v.name = name
        lines += [(text, n) for text, n, _ in statements]
        if assigned:
            names, values = zip(*assigned, strict=True)
            lines.append((f"    {', '.join(names)} = {', '.join(values)}", node))
        if side == "then" and len(lines) == head:
            lines.append(("    pass", node))
        elif side == "else" and len(lines) > head:
            lines.insert(head, ("else:", node))
    return lines


def _cond_lines(cond: Cond, name: str, printer: Printer, comments: bool, loops: list,
                node: Node | None) -> list:  # fmt: skip
    """A cond node's function ``name``: each side's statements and ``return``, the then side's
    inside the ``if``. The sides' own nodes of a body op print under names of their own."""
    sides = [list(body._function_lines(printer, f"{name}_{side}", comments, None, loops))[1:]
             for body, side in zip(cond.bodies, ("then", "else"), strict=True)]  # fmt: skip
    then_lines, else_lines = ([(text, n) for text, n, _ in lines] for lines in sides)
    params = [n.name for n in cond.then_body.inputs]
    made = cond_nodes.function_lines(name, params, then_lines, else_lines, node)
    return [(text, n, False) for text, n in made] + [("", None, False)]


def _read_after(body: Graph, node: Node, name: str, printer: Printer) -> bool:
    """Whether a statement of ``body`` after ``node`` reads an input printed as ``name`` (then
    ``node`` may not be made under that name: it would be read as the new value)."""
    later = body.nodes[body.nodes.index(node) + 1 :]
    return any(used.op == "input" and printer.arg(used) == name
               for n in later if n.op != "output" for used in nodes_in((n.args, n.kwargs)))  # fmt: skip


def _loop_lines(loop, name: str, printer: Printer, comments: bool, plan, loops: list,
                node: Node | None) -> list:  # fmt: skip
    """A loop node's function ``name``: its body's statements inside a ``for`` or ``while``
    (the loops inside the body go to ``loops``). A carried value the body makes in a statement
    after which it no longer reads the old one is made under the carried name: no copy per
    iteration (``n = n + 1``, not ``n_1 = n + 1`` and ``n = n_1``)."""
    body = loop.body
    in_place = _carried_in_place(loop)
    names = {v: v.name for v in in_place}
    printer.loop_depth += 1  # (a for loop node inside prints inline: `inline_loops`)
    try:
        for v, carried in in_place.items():
            v.name = carried
        lines = list(body._function_lines(printer, name, comments, plan, loops,
                                          rows=getattr(loop, "over_rows", False)))  # fmt: skip
        outputs = [printer.arg(v) for v in body.output.args[0]]
    finally:
        printer.loop_depth -= 1
        for v, old in names.items():
            v.name = old
    statements = [(text, n) for text, n, _ in lines[1:-1]]
    first = printer.first_index(node)
    made = loop_nodes.function_lines(loop, name, [n.name for n in body.inputs], statements,
                                     outputs, node, empty_tail=printer.empty_loop_tail,
                                     first=first, prologue=printer.loop_prologue(loop, first))  # fmt: skip
    return [(text, n, False) for text, n in made] + [("", None, False)]


def _carried_in_place(loop) -> dict[Node, str]:
    """The carried values a loop's body may make under their carried input's name: each made
    by one node (or a cond's or a loop's item) after whose statement no statement reads the
    old value (those reading the new one read it by that name)."""
    body = loop.body
    made = body.output.args[0][len(loop.leading) :][: loop.carried]
    users: dict[int, list] = {}
    for n in body.nodes:
        for used in nodes_in((n.args, n.kwargs)):
            users.setdefault(id(used), []).append(n)
    found = {}
    for start, value in zip(loop.carried_inputs(), made, strict=True):
        if not isinstance(value, Node) or value.op == "input" or made.count(value) != 1:
            continue
        maker = value.args[0] if value.op == "getitem" and \
            getattr(value.args[0], "op", None) in BODY_OPS else value  # fmt: skip
        after = body.nodes[body.nodes.index(maker) + 1 :]
        if not any(u in after for u in users.get(id(start), [])):
            found[value] = start.name
    return found


def loop_lines(loop, name: str, printer: Printer, *, comments: bool = True,
               node: Node | None = None) -> list:  # fmt: skip
    """A loop's (or cond's) function ``name`` as ``printer`` spells it, line by line as (text,
    node): the functions of the nodes inside it first (a backend that compiles loop functions
    its own way prints them with a printer of its own); ``node`` the loop node, if any."""
    loops: list = []
    lines = _body_op_lines(loop, name, printer, comments, None, loops, node)
    return [(text, node) for text, node, _ in loops + lines]


def loop_function(loop) -> Callable:
    """A loop's (or cond's) function alone, as a graph prints it (no memory plan): the trace
    runs the loop on its examples with it."""
    namespace: dict = {"np": np}
    module = (loop.bodies if isinstance(loop, Cond) else (loop.body,))[0].module
    if module is not None:
        namespace["__name__"] = module
    code = loop_lines(loop, "_loop", Printer(namespace), comments=False)
    exec(compile_at_user_lines("_loop", code), namespace)  # noqa: S102 - the body's own code
    return namespace["_loop"]


def fresh_name_in_all(graphs: list[Graph], hint: str) -> str:
    """A name free in every one of ``graphs``, taken in each (a cond node's sides share their
    inputs' names: one function prints both)."""
    first, rest = graphs[0], graphs[1:]
    while True:
        name = first.fresh_name(hint)
        if all(name not in g._names for g in rest):
            for g in rest:
                g._names.add(name)
            return name


def loop_function_name(node: Node, within: str) -> str:
    """The name a loop (or cond) node's function prints under, in the function named ``within`` (the
    graph's, or an enclosing loop's): unique among all of a graph's loops."""
    return f"{within}_{node.name}_fn" if within.startswith("_") else f"_{node.name}_fn"


_OPS = {"input", "call", "method", "attr", "getitem", "setitem", "inplace", "output", *BODY_OPS}
