"""A captured graph as Graphviz DOT text: one box per op, data-flow edges, inputs on top.

Each node's label reads ``name / what it computes / f64[4, 8] / file:line``; inputs are green
ellipses, the output a double-bordered box, ops that write into an array are red and labelled
"in-place", and a loop node (its body run per iteration) or a cond node (a branch on data, only
the side taken runs) is green and double-bordered, as the success it is. Labels are plain quoted DOT strings (no HTML or record labels), so only quotes,
backslashes and line breaks need escaping.
"""

from __future__ import annotations

from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.graph import Graph
from tcompile.tracer.ir.loop_nodes import LOOP_OPS
from tcompile.tracer.ir.node import STATEMENT_OPS, Node, nodes_in

_MAX_TEXT = 48  # characters of an op's expression shown in its box

_HEADER = """digraph G {
  graph [rankdir=TB, bgcolor="white", fontname="Helvetica", fontsize=11,
         nodesep=0.3, ranksep=0.35];
  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#4a6fa5",
        fontname="Helvetica", fontsize=10];
  edge [color="#555555", arrowsize=0.7];"""

_AFTER_WRITE = 'style=dashed, color="#c0392b", tooltip="reads the array after this write"'
_STYLE = {
    "input": 'shape=ellipse, style=filled, fillcolor="#e3f4e1", color="#3f8f3a"',
    "output": 'style="rounded,filled", peripheries=2, fillcolor="#f1f1f1", color="#333333"',
    "mutates": 'style="rounded,filled,bold", fillcolor="#fde4e1", color="#c0392b"',
    # a loop captured as one node is a success: green, whatever it writes
    "loop": 'style="rounded,filled,bold", peripheries=2, fillcolor="#e6f4ea", color="#2e7d32"',
}


def graph_to_dot(graph: Graph, *, title: str = "", labels=lambda filename: None) -> str:
    """DOT text for ``graph``, e.g. ``render_svg(graph_to_dot(report.graphs[0], title="f"))``;
    ``labels(filename)`` names a file as the user knows it ("Cell In[5]"), or None."""
    lines = [_HEADER]
    if title:
        lines.append(f'  label="{escape(title)}"; labelloc=t; labeljust=l;')
    for node in graph.nodes:
        attrs = ", ".join([f'label="{_label(graph, node, labels)}"', *_style(node)])
        lines.append(f"  {_id(node)} [{attrs}];")
    inputs = " ".join(f"{_id(n)};" for n in graph.inputs)
    if inputs:
        lines.append(f"  {{ rank=source; {inputs} }}")
    lines += _edges(graph)
    lines.append("}")
    return "\n".join(lines) + "\n"


def escape(text: str) -> str:
    """``text`` as the inside of a double-quoted DOT string (line breaks become ``\\n``)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _id(node: Node) -> str:
    return f'"{escape(node.name)}"'


def _label(graph: Graph, node: Node, labels) -> str:
    parts = [node.name, _computes(graph, node)]
    if node.op in LOOP_OPS:
        parts.append(f"loop node: its body of {node.target.body.op_count()} ops runs per iteration")
    elif isinstance(node.target, Cond):
        then, other = (body.op_count() for body in node.target.bodies)
        parts.append(f"cond node: then {then} ops, else {other} ops; only the side taken runs")
    elif _mutates(node):
        parts.append("in-place")
    parts += [node.meta, _where(node, labels)]
    return "\\n".join(escape(p) for p in parts if p)


def _computes(graph: Graph, node: Node) -> str:
    """What the node computes: its input description, or its Python statement's right side."""
    if node.op == "input":
        return f"input {node.target}" if node.target != node.name else "input"
    if isinstance(node.target, Cond):
        return f"if {node.args[0].name if isinstance(node.args[0], Node) else node.args[0]}:"
    text = graph.format_node(node)
    prefix = f"{node.name} = "
    text = text[len(prefix) :] if node.has_value and text.startswith(prefix) else text
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _where(node: Node, labels) -> str:
    if not node.stack:
        return ""
    loc = node.stack[-1]
    return f"{labels(loc.filename) or loc.filename.rsplit('/', 1)[-1]}:{loc.lineno}"


def _mutates(node: Node) -> bool:
    return node.mutates or node.op in STATEMENT_OPS


def _edges(graph: Graph) -> list[str]:
    """Data-flow edges, plus a dashed edge from an in-place write to each later reader of the
    array it wrote: the reader sees the written values, which the data flow alone hides."""
    edges = []
    last_write: dict[Node, Node] = {}
    for node in graph.nodes:
        for used in dict.fromkeys(nodes_in((node.args, node.kwargs))):
            edges.append(f"  {_id(used)} -> {_id(node)};")
            writer = last_write.get(used)
            if writer is not None:
                edges.append(f"  {_id(writer)} -> {_id(node)} [{_AFTER_WRITE}];")
        if _mutates(node):
            last_write.update((array, node) for array in _written(node))
    return edges


def _written(node: Node) -> list[Node]:
    """The arrays a mutating node writes into: its ``out=`` arrays, else its first argument."""
    if "out" in node.kwargs:
        return nodes_in(node.kwargs["out"])
    return [arg for arg in node.args[:1] if isinstance(arg, Node)]


def _style(node: Node) -> list[str]:
    if node.op in ("input", "output"):
        return [_STYLE[node.op]]
    if node.op in LOOP_OPS or isinstance(node.target, Cond):
        return [_STYLE["loop"]]
    return [_STYLE["mutates"]] if _mutates(node) else []
