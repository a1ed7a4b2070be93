"""The project's imports point one way: no module imports one that (directly or not) imports
it back, function-level imports included, and the packages stay in their layers:

    jupyter_ext -> tcompile (facade) -> widgets -> backend -> tracer

One edge goes up on purpose: ``%load_ext tcompile`` calls the facade's
``load_ipython_extension``, which loads `jupyter_ext` when IPython asks (an entry point, not a
dependency: ``import tcompile`` never imports it).
"""

from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"tcompile": "tcompile", "jupyter_ext": "tcompile.jupyter_ext",
            "widgets": "tcompile.widgets", "backend": "tcompile.backend",
            "tracer": "tcompile.tracer"}  # fmt: skip
# A package may import the packages after it in this order, never one before it.
LAYERS = ["tcompile.jupyter_ext", "tcompile", "tcompile.widgets", "tcompile.backend",
          "tcompile.tracer"]  # fmt: skip
ENTRY_POINTS = {("tcompile", "tcompile.jupyter_ext")}  # IPython's extension hook


def _modules() -> dict[str, str]:
    found = {}
    for folder, package in PACKAGES.items():
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if not name.endswith(".py") or "__pycache__" in dirpath:
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, os.path.join(ROOT, folder))[:-3].replace(os.sep, ".")
                module = f"{package}.{rel}".removesuffix(".__init__")
                found[module] = path
    return found


MODULES = _modules()


def _imports(module: str, path: str) -> set[str]:
    """The project modules ``module`` imports, anywhere in its code."""
    tree = ast.parse(open(path).read())
    package = module if path.endswith("__init__.py") else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            target = (
                (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            )
            for alias in node.names:  # `from . import x`: the module x, else a name of target
                name = f"{target}.{alias.name}"
                name = name if name in MODULES else target
                if name in MODULES and name != module and (module, name) not in ENTRY_POINTS:
                    out.add(name)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in MODULES)
    return out


EDGES = {module: _imports(module, path) for module, path in MODULES.items()}


def _layer(module: str) -> int:
    return max(
        i for i, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + ".")
    )


def test_no_import_cycle():
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module):
        state[module] = 1
        path.append(module)
        for imported in sorted(EDGES[module]):
            if state.get(imported) == 1:
                cycle = path[path.index(imported) :] + [imported]
                pytest.fail(
                    "import cycle: " + " -> ".join(m.removeprefix("tcompile.") for m in cycle)
                )
            if imported not in state:
                visit(imported)
        path.pop()
        state[module] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module):
    upward = [m for m in EDGES[module] if _layer(m) < _layer(module)]
    assert not upward, f"{module} imports from a layer above it: {sorted(upward)}"


# Inside the tracer, the packages stand in layers too: a module imports from its own package and
# the ones below it, never from one above. The top-level modules (config, errors, report,
# hatches, markers, user_code, user_text) are one layer of their own, between the foundations
# (the graph IR, what CPython's bytecode means) and the symbolic values.
TRACER_LAYERS = ["frames", "glue", "interpreter", "loops", "semantics", "state", "values", "",
                 "bytecode", "ir"]  # fmt: skip


def _tracer_layer(module: str) -> int:
    rest = module.removeprefix("tcompile.tracer").removeprefix(".")
    head = rest.split(".")[0] if "." in rest or rest in TRACER_LAYERS else ""
    return TRACER_LAYERS.index(head)


TRACER_MODULES = sorted(m for m in MODULES if m.startswith("tcompile.tracer."))


@pytest.mark.parametrize("module", TRACER_MODULES)
def test_tracer_packages_import_only_their_own_layer_and_below(module):
    above = [m for m in EDGES[module]
             if m.startswith("tcompile.tracer.") and _tracer_layer(m) < _tracer_layer(module)]  # fmt: skip
    assert not above, (
        f"{module} ({TRACER_LAYERS[_tracer_layer(module)] or 'top level'}) imports from a "
        f"package above it: {sorted(above)}"
    )


def test_the_ir_imports_nothing_else_of_tcompile():
    for module in MODULES:
        if module.startswith("tcompile.tracer.ir"):
            outside = [m for m in EDGES[module] if not m.startswith("tcompile.tracer.ir")]
            assert not outside, f"{module} imports {sorted(outside)}: the IR stands alone"


def test_backends_read_only_the_ir_of_the_tracer():
    for module in MODULES:
        if module.startswith("tcompile.backend"):
            tracer = [m for m in EDGES[module] if m.startswith("tcompile.tracer")
                      and not m.startswith("tcompile.tracer.ir")]  # fmt: skip
            assert not tracer, f"{module} imports {sorted(tracer)}: a backend reads only the IR"


def _external_imports(path: str) -> set[str]:
    """The top-level names of the libraries a module imports, anywhere in its code."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_shared_kernel_pipeline_imports_no_backends_library():
    """backend/fused (lowering, fusion, plans, runtime) serves Triton and the CPU kernels alike:
    their libraries are reached only through a `target.Target` and its `Device`."""
    for module, path in MODULES.items():
        if module.startswith("tcompile.backend.fused"):
            libraries = _external_imports(path) & {"torch", "triton", "numba", "cupy"}
            assert not libraries, f"{module} imports {sorted(libraries)}"
            backends = [m for m in EDGES[module] if m.startswith(("tcompile.backend.triton",
                                                                   "tcompile.backend.cpu"))]  # fmt: skip
            assert not backends, f"{module} imports {sorted(backends)}"
