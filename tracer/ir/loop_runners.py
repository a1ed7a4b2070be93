"""The targets of loop nodes: a body graph's Python run once per iteration, inside one Python
``for`` (`ForRunner`) or ``while`` (`WhileRunner`) loop written around the body's statements,
as eager code runs them (a call per iteration would cost more than a small body). Backends
recompile the body with their own plan (`LoopRunner.compile`). The trace's run of the loop on
its examples is kept for the graph's first call (`first_run`)."""

from __future__ import annotations

import ast

from .first_run import FirstRun, run_keeping
from .graph import Graph
from .line_numbers import compile_at_user_lines


def _name(name: str, ctx=None) -> ast.Name:
    return ast.Name(name, ctx or ast.Load())


def _assign(targets, value, where) -> ast.Assign:
    return ast.copy_location(ast.Assign([targets], value), where)


class LoopRunner:
    """A loop node's target. The body graph takes the carried values first, then the values it
    reads from before the loop; its output starts with the carried values' new versions."""

    __name__ = "loop"
    index_inputs = 0  # body inputs before the carried values

    def __init__(self, body: Graph, carried: int):
        self.body = body
        self.carried = carried
        self.first_run: list[FirstRun] = []  # taken by one call only (list.pop is atomic)
        self.compile()

    def __call__(self, *args):
        if self.first_run:
            try:
                first_run = self.first_run.pop()
            except IndexError:  # another thread took it
                first_run = None
            results = first_run.replay(args) if first_run is not None else None
            if results is not None:
                return results
        return self._run(*args)

    def trace_run(self, args: tuple, fp_ignored: frozenset[str], uninitialized: frozenset[int]):
        """The loop on the trace's examples; the graph's first call gets the same values and
        takes the results kept (`first_run`) instead of running the loop again."""
        results, first_run = run_keeping(self._run, args, fp_ignored, uninitialized)
        self.first_run = [first_run] if first_run is not None else []
        return results

    def compile(self, plan=None) -> None:
        """Make the loop's Python from the body's code (with a backend's memory ``plan``)."""
        namespace: dict = {}
        self.source = self.body.python_code(namespace, plan=plan)
        exec(compile_at_user_lines(self.body, self.source, plan, self._as_loop), namespace)  # noqa: S102
        self._run = namespace[self.body.name]

    def _as_loop(self, fn: ast.FunctionDef) -> ast.FunctionDef:
        raise NotImplementedError

    def returned(self) -> tuple:
        """The body's output nodes whose values the loop node returns."""
        return self.body.output.args[0][len(self.leading) :]

    def carried_inputs(self) -> list:
        """The body's input nodes of the carried values (after a for loop's index)."""
        return self.body.inputs[self.index_inputs : self.index_inputs + self.carried]

    def _step(self, statements: list, returned: ast.Return, skip: int) -> list:
        """One iteration: the body's statements, then its outputs (``__tc_out``) become the
        carried names again (after the first ``skip`` outputs)."""
        step = [*statements, _assign(_name("__tc_out", ast.Store()), returned.value, returned)]
        names = [_name(p, ast.Store()) for p in self.carried_names]
        if names or skip:
            taken = ast.Slice(None, ast.Constant(skip + len(names)))
            targets = [_name(n, ast.Store()) for n in self.leading[:skip]] + names
            step.append(_assign(ast.Tuple(targets, ast.Store()),
                                ast.Subscript(_name("__tc_out"), taken, ast.Load()), returned))  # fmt: skip
        return step

    def __repr__(self) -> str:
        return f"<{self.__name__} over {self.body.name}>"


def _row_of(statements: list, index: str, read: list[str]) -> tuple[str, str] | None:
    """``(row, x)`` when the first statement is ``row = x[k]``, ``x`` an array the loop reads
    (not one it carries) and ``k`` its index: in a loop over ``x``'s rows, iterating over
    them gives the same views, for less than indexing costs."""
    first = statements[0] if statements else None
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1):
        return None
    target, value = first.targets[0], first.value
    if (
        isinstance(target, ast.Name)
        and isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id in read
        and isinstance(value.slice, ast.Name)
        and value.slice.id == index
    ):
        return target.id, value.value.id
    return None


class ForRunner(LoopRunner):
    """``loop(first, count, *carried, *read)``: iterations ``first`` to ``first + count - 1``;
    the body takes the index ``k`` first. Returns the last iteration's outputs. ``over_rows``:
    the loop is over an array's rows (its count is theirs), each made first in an iteration."""

    leading = ()
    index_inputs = 1

    def __init__(self, body: Graph, carried: int, over_rows: bool = False):
        self.over_rows = over_rows
        super().__init__(body, carried)

    def _as_loop(self, fn: ast.FunctionDef) -> ast.FunctionDef:
        """The body's statements in a ``for`` loop; the carried names take their new values at
        the end of each iteration (no tuple made per iteration), and the outputs of the last
        one are returned (none for a loop that ran no iteration: it gives back nothing)."""
        index, *params = [a.arg for a in fn.args.args]
        self.carried_names = params[: self.carried]
        *statements, returned = fn.body
        outputs = returned.value.elts
        step = list(statements)
        if self.carried_names:
            news = outputs[: self.carried]
            step.append(_assign(ast.Tuple([_name(p, ast.Store()) for p in self.carried_names],
                                          ast.Store()), ast.Tuple(news, ast.Load()), returned))  # fmt: skip
        end = ast.BinOp(_name("__tc_first"), ast.Add(), _name("__tc_count"))
        target, items = (
            _name(index, ast.Store()),
            ast.Call(_name("range"), [_name("__tc_first"), end], []),
        )
        row = _row_of(step, index, params[self.carried :]) if self.over_rows else None
        if row is not None:  # the body starts with `row = x[k]`: iterate over x's rows instead
            name, array = row
            del step[0]
            items = ast.Subscript(_name(array), ast.Slice(_name("__tc_first"), end), ast.Load())
            target = _name(name, ast.Store())
            if any(isinstance(n, ast.Name) and n.id == index for s in step for n in ast.walk(s)):
                target = ast.Tuple([_name(index, ast.Store()), target], ast.Store())
                items = ast.Call(_name("enumerate"), [items, _name("__tc_first")], [])
        loop = ast.For(target, items, step or [ast.Pass()], [])
        last = ast.Tuple([_name(p) for p in self.carried_names] + outputs[self.carried :],
                         ast.Load())  # fmt: skip
        ran = ast.If(_name("__tc_count"), [ast.Return(last)], [])
        fn.args.args = [ast.arg("__tc_first"), ast.arg("__tc_count"), *map(ast.arg, params)]
        fn.body = [ast.copy_location(node, returned)
                   for node in (loop, ran, ast.Return(ast.Tuple([], ast.Load())))]  # fmt: skip
        return fn

    def drive(self, body, first: int, count: int, *args):
        """The loop with ``body(k, *carried, *read)`` (a backend's compiled body) per
        iteration, as `__call__` runs it."""
        self.first_run = []  # kept for the Python loop: a backend's body computes otherwise
        carried, read = args[: self.carried], args[self.carried :]
        out = ()
        for k in range(first, first + count):
            out = body(k, *carried, *read)
            carried = out[: self.carried]
        return out


class WhileRunner(LoopRunner):
    """``while_loop(cond, *carried, *read)``: runs the body while ``cond`` (then the condition
    the body computes, its first output) is true (false, for ``negate``), as ``while``
    does; returns the carried values (the ones given, when it runs no iteration)."""

    __name__ = "while_loop"
    leading = ("__tc_cond",)

    def __init__(self, body: Graph, carried: int, negate: bool):
        self.negate = negate
        super().__init__(body, carried)

    def _as_loop(self, fn: ast.FunctionDef) -> ast.FunctionDef:
        params = [a.arg for a in fn.args.args]
        self.carried_names = params[: self.carried]
        *statements, returned = fn.body
        test = _name("__tc_cond")
        if self.negate:
            test = ast.UnaryOp(ast.Not(), test)
        loop = ast.While(test, self._step(statements, returned, 1), [])
        result = ast.Tuple([_name(p) for p in self.carried_names], ast.Load())
        fn.args.args = [ast.arg("__tc_cond"), *map(ast.arg, params)]
        fn.body = [ast.copy_location(loop, returned),
                   ast.copy_location(ast.Return(result), returned)]  # fmt: skip
        return fn

    def drive(self, body, cond, *args):
        """The loop with ``body(*carried, *read)`` (a backend's compiled body) per iteration,
        as `__call__` runs it."""
        self.first_run = []  # as ForRunner.drive
        carried, read = args[: self.carried], args[self.carried :]
        while bool(cond) != self.negate:
            out = body(*carried, *read)
            cond, carried = out[0], out[1 : 1 + self.carried]
        return tuple(carried)
