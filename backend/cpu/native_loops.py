"""Loop nodes compiled whole by numba: the loop, its body's scalar indexing and arithmetic run
as machine code, with no Python between iterations.

Each loop node's function, printed for numba (`native_source`), is a module of its own written
to a file named by its hash (`source_files`), each function decorated with ``numba.njit``:
numba's disk cache keeps the machine code across processes. It is compiled when the backend
runs, for the types the trace saw, and numba's typing of every value of the body is checked
against the trace's (`numba_types`); a loop numba cannot type, or types otherwise, runs as the
graph's Python, and the reason shows in the Kernels tab. The check is kept beside the file, so
a process that finds the machine code in the cache also knows it was checked.

At run time a native loop runs as Python where NumPy would do what compiled code does not:
under ``np.errstate(...="raise")`` (floating-point errors raise), for a loop of no iteration
(its function's one return needs the last iteration's values; a while loop gives back its
arguments themselves), and where an index affine in the counter would leave its array
(`index_checks`, once per call). Other int indices are checked where they are used (``_at``),
arrays and bools used as indices by numba's ``boundscheck``; an index out of range, or a zero
Python divisor, raises, and the glue runs the frame eagerly: the user sees NumPy's own error. A Python int
that outgrows 64 bits raises OverflowError in the machine code: its writes are undone and the
loop runs as Python.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np
from numba.core.runtime._nrt_python import _MemInfo  # owns the memory numba allocates

from tcompile.tracer.ir.compiled_graph import KernelInfo
from tcompile.tracer.ir.cond_nodes import Cond
from tcompile.tracer.ir.graph import loop_function_name
from tcompile.tracer.ir.graph_failure import fp_errors_raise
from tcompile.tracer.ir.loop_nodes import LOOP_OPS, ForLoop
from tcompile.tracer.ir.node import Node, user_lines

from ..fused.lowering.shared import written_args, written_nodes
from ..source_files import load_module
from . import numba_types
from .int_ranges import COUNTER_BITS, carried_steps
from .native_prelude import PRELUDE
from .native_source import Unsupported, native_lines

_COUNTER_LIMIT = 1 << COUNTER_BITS
NATIVE_NOTE = "compiled whole by numba: the loop runs as machine code, no Python between iterations"


class NativeLoop:
    """The function a loop node calls in the graph's code: numba's, or the graph's Python
    function ``python`` where numba cannot run it (``reason`` says why)."""

    def __init__(self, node: Node, name: str, python: Callable):
        self.node, self.name, self.python = node, name, python
        self.counted = isinstance(node.target, ForLoop)
        # the arguments of carried ints `int_ranges` bounds where they start within the counter's
        # bits (``n = 0`` then ``n += 1``): checked per call
        self.stepped = [2 + p for p in carried_steps(node.target)] if self.counted else []
        self.source, self.reason, self.dispatcher = "", "", None
        loop = node.target
        returned = loop.returned()[: loop.carried] if loop.op == "while_loop" else loop.returned()
        self.metas = [getattr(n, "tensor", None) for n in returned]
        # Python numbers only: numba gives back int, float and bool as the trace saw them
        self.numbers_only = all(
            m is not None and m.kind == "python" and m.type_name in ("int", "float", "bool")
            for m in self.metas
        )
        # the argument each result is, where the body gives one of its inputs back unchanged
        # (numba gives back the argument's own object for a value with its memory and layout:
        # a view ``a[:]`` too, which must stay a view of its own). A body that makes no view
        # of its inputs gives back only the input itself so: a branch's side that leaves a
        # carried array alone (``if c: y = y * 0.9``)
        views = _makes_views(loop.body)
        self.given_back = [not views or any(n is i for i in loop.body.inputs) for n in returned]
        try:
            self._build()
        except Exception as why:  # noqa: BLE001 - numba refuses in many ways (an opcode it
            # cannot read, a BLAS it needs SciPy for, a type it cannot infer); each one means
            # the loop runs as the graph's own Python, which is exact
            self.dispatcher, self.reason = None, _short(why)

    def _build(self) -> None:
        lines, namespace, printer = native_lines(self.node, self.name)
        self.may_overflow = printer.checks_ints
        self.written = _written_positions(self.node) if self.may_overflow else []
        constants = {k: v for k, v in namespace.items() if k != "np"}
        # a bound constant is not in the cache key; slices need no bounds checks (numba
        # compiles array code in half the time without them), nor indices checked per call
        self.index_checks = printer.checks if printer.checks.checks else None
        self.lines, self.boundscheck = [line for line, _ in lines], printer.boundscheck
        self.helpers = printer.masked.text()  # masked stores' element loops
        self.source = self._text(cache=not constants)
        if constants:  # functions of its own: another graph may print this text around
            # other values, and the checks are not kept (the text does not say what was checked)
            self.functions = dict(constants)
            exec(compile(self.source, f"<tcompile cpu {self.name}>", "exec"), self.functions)  # noqa: S102
            self.checks = _Checks(None)
        else:
            self.functions = vars(load_module(self.source, "cpu"))
            self.checks = _Checks(Path(self.functions["__file__"]))
        self.bodies = _bodies(self.node.target, self.name, printer.elements.metas)
        self.dispatcher = self.functions[self.name]
        signature = [_arg_type(a) for a in self.node.args]
        if all(t is not None for t in signature):
            self._compile(tuple(signature))

    def _text(self, cache: bool) -> str:
        """The module's source: the prelude, the masked stores' helpers (`native_masked`), then
        each function with numba's decorator."""
        decorator = _decorator(cache, self.boundscheck)
        options = "cache=True" if cache else ""
        text = [PRELUDE.format(options=options).rstrip()]
        if self.helpers:
            text.append(self.helpers.format(options=options).rstrip())
        for line in self.lines:
            if line.startswith("def "):
                while text[-1] == "":
                    text.pop()
                text += ["", "", decorator]
            text.append(line)
        return "\n".join(text).rstrip() + "\n"

    def _compile(self, signature: tuple) -> None:
        """Compile for ``signature`` and check numba's types (Unsupported if they differ)."""
        known = self.checks.get(signature)
        if known:
            raise Unsupported(known)
        if self.dispatcher.signatures:
            self.dispatcher.disable_compile(False)
        try:
            self.dispatcher.compile(signature)
        finally:  # every compile is checked: no call compiles on its own (`_compile_for`)
            if self.dispatcher.signatures:
                self.dispatcher.disable_compile(True)
        if known is None:  # not checked before
            found = self._mismatches(self.functions)
            if found is None:  # numba's cache had the machine code, without its typing
                found = self._mismatches(self._uncached(signature))
            reason = f"numba types values otherwise than NumPy: {found[0]}" if found else ""
            self.checks.put(signature, reason)
            if reason:
                raise Unsupported(reason)

    def _mismatches(self, functions: dict) -> list[str] | None:
        """What numba typed otherwise than the trace in each of the module's ``functions``;
        None when one came from numba's cache, which keeps no typing (a process that stopped
        between compiling and checking left it there)."""
        found = []
        for name, metas in self.bodies.items():
            for result in functions[name].overloads.values():
                annotation = result.type_annotation
                if isinstance(annotation, str):
                    return None
                found += numba_types.mismatches(annotation.typemap, metas)
        return found

    def _uncached(self, signature: tuple) -> dict:
        """The module's functions compiled anew for ``signature``, past numba's cache."""
        functions = {k: v for k, v in self.functions.items() if not k.startswith("__")}
        text = self._text(cache=False)
        exec(compile(text, "<tcompile cpu, uncached>", "exec"), functions)  # noqa: S102 - our source
        functions[self.name].compile(signature)
        return functions

    def __call__(self, *args):
        if self.dispatcher is None or fp_errors_raise():
            return self.python(*args)
        if self.counted and not (args[1] and -_COUNTER_LIMIT < args[0] < _COUNTER_LIMIT - args[1]):
            return self.python(*args)  # no iteration, or indices past what `int_ranges` assumes
        for p in self.stepped:  # (a loop: a generator costs more than the check)
            if not -_COUNTER_LIMIT < args[p] < _COUNTER_LIMIT:
                return self.python(*args)  # a count starting past what `int_ranges` assumes
        if self.index_checks is not None and not self.index_checks.hold(args):
            return self.python(*args)  # an index out of range: NumPy raises its error
        if not self.counted and bool(args[0]) == self.node.target.negate:
            return self.python(*args)  # a while loop of no iteration gives its arguments back
        if not self.dispatcher.overloads and not self._compile_for(args):
            return self.python(*args)  # the trace's types were not all sure: typed now
        saved = _snapshot(args, self.written) if self.may_overflow else None
        try:
            results = self.dispatcher(*args)
        except TypeError as why:
            if not str(why).startswith("No matching definition"):
                raise
            if not self._compile_for(args):
                return self.python(*args)
            results = self.dispatcher(*args)
        except OverflowError:  # a Python int outgrew int64: Python's ints do not
            _restore(saved)
            return self.python(*args)
        if not results or self.numbers_only:
            return results
        return tuple([self._as_traced(i, value, args) for i, value in enumerate(results)])

    def _as_traced(self, position: int, value, args: tuple):
        if type(value) is np.ndarray:
            if not self.given_back[position] and any(value is a for a in args):
                return value.view()
            if not value.flags.writeable and isinstance(value.base, _MemInfo):
                # memory numba allocated, typed read-only where a carried array began as a
                # read-only argument: NumPy's new array is writeable
                value.flags.writeable = True
        return numba_types.as_traced(value, self.metas[position])

    def _compile_for(self, args) -> bool:
        """Compile for the types of ``args`` (other layouts than the trace's); False, and
        Python from now on, when numba cannot."""
        try:
            self._compile(tuple(numba.typeof(a) for a in args))
        except Exception as why:  # noqa: BLE001 - as in `__init__`
            self.dispatcher, self.reason = None, _short(why)
            return False
        return True

    def info(self) -> KernelInfo:
        notes = (NATIVE_NOTE,) if self.dispatcher is not None else (
            f"runs as Python (numba cannot compile it as NumPy runs it: {self.reason})",)  # fmt: skip
        body = [n for n in self.node.target.body.nodes if n.op not in ("input", "output")]
        lines = user_lines([self.node, *body])
        kind = "native loop" if self.dispatcher is not None else "python loop"
        return KernelInfo(f"{self.node.op} {self.name}", kind, self.source, lines, notes)


def native_loops(graph, functions: dict) -> list[NativeLoop]:
    """A `NativeLoop` for each loop node of ``graph``, put in place of its function in
    ``functions`` (the namespace the graph's code calls its loop functions in)."""
    made = []
    for node in graph.nodes:
        if node.op in LOOP_OPS:
            name = loop_function_name(node, graph.name)
            made.append(NativeLoop(node, name, functions[name]))
            functions[name] = made[-1]
    return made


def _written_positions(node: Node) -> list[int]:
    """The positions of the loop node's arguments its body may write (through views of them,
    or in the loops and branches inside it, too)."""
    loop = node.target
    written = written_nodes(loop.body, _args_written)
    first = 2 if isinstance(loop, ForLoop) else 1  # the body's inputs are the arguments after
    return [p for p in range(first, len(node.args)) if loop.body.inputs[p - 1] in written]


def _args_written(node: Node) -> list:
    """The arguments a node of a body writes: a loop's or cond's as their bodies do."""
    if node.op in LOOP_OPS:
        return [node.args[p] for p in _written_positions(node)]
    if isinstance(node.target, Cond):
        return [arg for side in node.target.bodies
                for arg, i in zip(node.args[1:], side.inputs)
                if i in written_nodes(side, _args_written)]  # fmt: skip
    return written_args(node)


def _makes_views(body) -> bool:
    """Whether a body graph (or a loop's or branch's inside it) makes a view of an input."""
    for node in body.nodes:
        if node.tensor is not None and node.tensor.view_of is not None and not _result_of(node):
            return True
        inner = node.target.bodies if isinstance(node.target, Cond) else ()
        if node.op in LOOP_OPS:
            inner = (node.target.body,)
        if any(_makes_views(graph) for graph in inner):
            return True
    return False


def _result_of(node: Node) -> bool:
    """An input, or an item of a loop's or branch's results (a view there is made inside)."""
    source = node.args[0] if node.op == "getitem" and node.args else None
    inner = isinstance(source, Node) and (source.op in LOOP_OPS or isinstance(source.target, Cond))
    return node.op == "input" or inner


def _snapshot(args: tuple, positions: list[int]) -> list:
    """Copies of the arrays at ``positions`` of ``args`` (those a loop may write), to undo its
    writes: copying every array would cost a call more than its loop."""
    return [(args[p], args[p].copy()) for p in positions
            if isinstance(args[p], np.ndarray) and args[p].flags.writeable]  # fmt: skip


def _restore(saved: list) -> None:
    for array, copy in saved:
        np.copyto(array, copy)


def _decorator(cache: bool, boundscheck: bool) -> str:
    options = ["boundscheck=True"] * boundscheck + ['error_model="numpy"'] + ["cache=True"] * cache
    return f"@numba.njit({', '.join(options)})"


def _arg_type(arg):
    if isinstance(arg, Node):
        return numba_types.numba_type(arg.tensor)
    try:
        return numba.typeof(arg)
    except ValueError:
        return None


def _bodies(loop, name: str, elements: dict) -> dict[str, dict]:
    """The trace's values by name, for the function ``name`` and each loop's inside it (with
    the elements of their fused loop nests: ``elements``, by graph, `native_elementwise`)."""
    found = {name: {}}
    graphs = [loop.body]
    while graphs:  # the body, and its conds' sides: printed in the same function
        graph = graphs.pop()
        found[name].update({n.name: n.tensor for n in graph.nodes if n.tensor is not None})
        found[name].update(elements.get(id(graph), {}))
        for node in graph.nodes:
            if node.op in LOOP_OPS:
                found.update(_bodies(node.target, loop_function_name(node, name), elements))
            elif isinstance(node.target, Cond):
                graphs += node.target.bodies
    return found


def _short(why: BaseException) -> str:
    text = str(why).strip().splitlines()
    return text[0][:300] if text else type(why).__name__


class _Checks:
    """Which signatures of a module's functions were checked, and what was found (a reason,
    or "" for none): a JSON file beside the module's."""

    def __init__(self, module_file: Path | None):
        self.path = module_file.with_suffix(".checked.json") if module_file else None
        try:
            self.known = json.loads(self.path.read_text()) if self.path else {}
        except (OSError, ValueError):
            self.known = {}

    def get(self, signature: tuple) -> str | None:
        return self.known.get(str(signature))

    def put(self, signature: tuple, found: str) -> None:
        self.known[str(signature)] = found
        if self.path is None:
            return
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.known))
        os.replace(tmp, self.path)
