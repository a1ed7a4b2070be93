"""Running a ``%%tcompile`` cell: as the plain cell runs, with its functions compiled as they are
defined.

The body goes through IPython's own input and AST transformations, then runs one top-level
statement at a time in the user's namespace, as IPython runs a cell; after a statement that
defines a function (``def``, a lambda assigned to a name, a class and its methods), that
function is replaced by its compiled version, so calls later in the same cell already go
through tcompile. The last statement, if it is an expression, is evaluated and its value
returned, for IPython to display as the cell's ``Out``. The code is compiled under a file name
IPython knows for this cell (its traceback says ``Cell In[5]``), with the cell's own line
numbers: breaks, errors and the widget point at cell lines.
"""

from __future__ import annotations

import ast
import time
import types
from collections.abc import Mapping

import tcompile as tc
from tcompile.tracer import report
from tcompile.tracer.bytecode import code_cache
from tcompile.widgets.model import CellOptions, CellRun, CellSource


def register(shell, line: str, body: str, names_before: dict | None) -> CellSource:
    """Put the whole cell (magic line included) in ``linecache`` under a name IPython maps to
    this execution, and describe where the body starts. ``names_before``: IPython's file name
    map as it was when the cell started (`cell_number`)."""
    text = f"%%tcompile {line}".rstrip() + "\n" + body
    number = cell_number(shell, names_before)
    filename = shell.compile.cache(text, number, raw_code=text)
    return CellSource(body, 2, filename, f"Cell In[{number}]", CellLabels(shell))


def cell_number(shell, names_before: dict | None) -> int:
    """The number IPython compiled the running cell under (its ``In[n]``): the entry its file
    name map gained or changed since the cell started. Neither the last entry (a cell whose
    text ran before keeps its old place in the map: ipykernel names a cell's file by its text
    alone) nor ``execution_count`` (moved on already, or not, by IPython's version and whether
    the cell is stored in history) says it."""
    names = getattr(shell.compile, "_filename_map", {})
    if names_before is not None:
        changed = [n for filename, n in names.items() if names_before.get(filename) != n]
        if changed:
            return max(changed)
    return next(reversed(names.values()), shell.execution_count)


class CellLabels(Mapping):
    """The cells IPython compiled, by file name: ``Cell In[5]``, as its tracebacks say."""

    def __init__(self, shell):
        self._numbers = getattr(shell.compile, "_filename_map", {})

    def __getitem__(self, filename: str) -> str:
        return f"Cell In[{self._numbers[filename]}]"

    def name(self, filename: str) -> str | None:
        """A `tcompile.tracer.ir.file_labels` namer."""
        number = self._numbers.get(filename)
        return None if number is None else f"Cell In[{number}]"

    def __iter__(self):
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class Definitions:
    """The functions ``%%tcompile`` cells compiled, by name: a name defined again (the cell run
    again, or edited) drops what was derived from the old code (`code_cache.forget`)."""

    def __init__(self):
        self._codes: dict[str, types.CodeType] = {}

    def compile(self, name: str, fn, options: CellOptions):
        """``fn`` compiled with the cell's options (anything else is returned as it is)."""
        if type(fn) is not types.FunctionType or _is_tcompile_wrapper(fn):
            return fn
        old = self._codes.get(name)
        if old is not None and old is not fn.__code__:
            code_cache.forget([old])
        self._codes[name] = fn.__code__
        compiled = tc.compile(fn, fullgraph=options.fullgraph, backend=options.backend,
                              dynamic=options.dynamic)  # fmt: skip
        if options.error_on_graph_break:
            compiled = tc.error_on_graph_break(True)(compiled)
        return compiled

    def compile_class(self, cls: type, options: CellOptions) -> None:
        """Compile the methods ``cls`` defines (plain, static and class methods) in place."""
        for attr, value in list(vars(cls).items()):
            name = f"{cls.__qualname__}.{attr}"
            if isinstance(value, (staticmethod, classmethod)):
                compiled = self.compile(name, value.__func__, options)
                if compiled is not value.__func__:
                    setattr(cls, attr, type(value)(compiled))
            elif isinstance(value, types.FunctionType):
                setattr(cls, attr, self.compile(name, value, options))


def _is_tcompile_wrapper(fn) -> bool:
    return any(hasattr(fn, marker) for marker in ("__tc_compiled__", "__tc_disabled__",
                                                  "__tc_error_on_graph_break__"))  # fmt: skip


def run(shell, source: CellSource, options: CellOptions, definitions: Definitions,
        namespace: dict | None = None):  # fmt: skip
    """Run the cell: ``(value of its last expression or None, CellRun)``; an exception the code
    raises is in ``CellRun.error`` (the caller re-raises it). ``namespace``: where its names
    are bound (a preview's copy of the user's), else the user's namespace."""
    tree = parsed(shell, source)
    preview = namespace is not None
    namespace = namespace if preview else shell.user_ns
    global_ns = namespace if preview else shell.user_global_ns
    value, error = None, None
    start = time.perf_counter()
    with report.collecting() as reports:
        try:
            for i, node in enumerate(tree.body):
                if i == len(tree.body) - 1 and isinstance(node, ast.Expr):
                    code = shell.compile(ast.Expression(node.value), source.filename, "eval")
                    value = eval(code, global_ns, namespace)  # noqa: S307 - the cell
                    if shell.displayhook.semicolon_at_end_of_expression(source.text):
                        value = None  # "x;" shows nothing, as in the plain cell
                    continue
                module = ast.Module([node], type_ignores=[])
                exec(shell.compile(module, source.filename, "exec"), global_ns,
                     namespace)  # fmt: skip  # noqa: S102 - the user's cell
                _compile_definitions(node, namespace, options, definitions)
        except Exception as raised:  # the cell's own error: the caller re-raises it
            error = raised
    seconds = time.perf_counter() - start
    return value, CellRun(source, options, tuple(reports), error, seconds)


def defined_names(tree: ast.Module) -> list[str]:
    """The functions a cell's top-level statements define: ``def`` and lambdas bound to a name."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def parsed(shell, source: CellSource) -> ast.Module:
    """The cell's code as IPython runs it (its input and AST transformations)."""
    return shell.transform_ast(_parse(shell, source))


def _parse(shell, source: CellSource) -> ast.Module:
    """The body after IPython's input transformations (``%magic`` lines, ``!cmd``), with the
    cell's line numbers."""
    tree = ast.parse(shell.transform_cell(source.text), filename=source.filename)
    return ast.increment_lineno(tree, source.first_line - 1)


def _compile_definitions(node: ast.stmt, namespace: dict, options, definitions) -> None:
    if isinstance(node, ast.FunctionDef):
        namespace[node.name] = definitions.compile(node.name, namespace[node.name], options)
    elif isinstance(node, ast.ClassDef) and isinstance(namespace.get(node.name), type):
        definitions.compile_class(namespace[node.name], options)
    elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
        for target in node.targets:
            if isinstance(target, ast.Name):
                namespace[target.id] = definitions.compile(target.id, namespace[target.id], options)
