"""The demo (``python -m tcompile.demo``): run the quick-start notebook headless and export it.

Runs ``notebooks/00_quickstart.ipynb`` top to bottom in a fresh kernel of this interpreter
(nbclient, widget state stored), writes it as HTML to ``build/quickstart.html`` (and the executed
notebook, widgets included, to ``build/quickstart.ipynb``), and prints what each ``%%tcompile``
cell's widget reported: functions compiled, graphs, graph breaks with their lines and reasons,
skipped frames, errors.

The HTML needs no network: every widget comes with a saved copy of all its tabs, an output of
its own (graphs drawn as inline SVG, the cell's lines with breaks marked), and the export shows
that copy; the live widget's JavaScript would come from a CDN.

`execute_notebook` is also what ``tests/test_notebooks.py`` runs every notebook with.
"""

from __future__ import annotations

import argparse
import copy
import platform
import sys
import time
import uuid
from pathlib import Path

from tcompile.widgets.style import SAVED_COPY_CLASS

REPO = Path(__file__).resolve().parent.parent  # the checkout, for an editable install
QUICKSTART = REPO / "notebooks" / "00_quickstart.ipynb"
OUTPUT = REPO / "build" / "quickstart.html"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
RAISES_TAG = "raises-exception"  # nbclient lets a cell with this tag raise and goes on


def this_python_kernel():
    """A kernel manager for an IPython kernel of *this* interpreter, whatever kernelspecs are
    installed: each venv's test run executes the notebooks with its own Python. IPC transport
    (Unix sockets, at an absolute path: the kernel runs in the notebook's folder): no TCP ports,
    and no warning about unencrypted TCP."""
    from ipykernel.kernelspec import get_kernel_dict
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager
    from jupyter_core.paths import jupyter_runtime_dir

    class ThisPython(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(resource_dir="", **get_kernel_dict())  # argv[0] is sys.executable

    runtime = Path(jupyter_runtime_dir())
    runtime.mkdir(parents=True, exist_ok=True)
    sockets = str(runtime / f"tcompile-{uuid.uuid4().hex[:12]}")  # the kernel adds -<port>
    return KernelManager(
        kernel_name="python3", kernel_spec_manager=ThisPython(), transport="ipc", ip=sockets
    )


def execute_notebook(path: Path, timeout: int = 120):
    """Run the notebook at ``path`` top to bottom (working directory: its folder) and return it
    with its outputs and widget state. A cell that raises stops the run with
    ``nbclient.exceptions.CellExecutionError``, unless it is tagged ``raises-exception``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        km=this_python_kernel(),
        timeout=timeout,
        store_widget_state=True,
        resources={"metadata": {"path": str(Path(path).parent)}},
    )
    client.execute(cleanup_kc=True)  # shut the kernel down: the manager is ours, not nbclient's
    return nb


def export_html(nb) -> str:
    """The executed notebook as one HTML page (nbconvert's lab template) that shows each widget's
    saved copy: readable offline, with the graphs' SVG and the marked break lines."""
    from nbconvert import HTMLExporter

    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)  # no live widgets shown: no widget manager script needed
    for cell in nb.cells:
        if cell.cell_type == "code":  # each widget's saved copy stands in for it
            cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
    body, _ = HTMLExporter().from_notebook_node(nb)
    return body


def cell_summaries(nb) -> list[str]:
    """For each ``%%tcompile`` cell: its magic line, then its widget's text report (functions,
    graphs, breaks at their cell lines with reasons, skipped frames), and its error, if any."""
    blocks = []
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.source.startswith("%%tcompile"):
            continue
        magic = cell.source.splitlines()[0]
        lines = [f"In [{cell.execution_count}] {magic}"]
        for output in cell.outputs:
            data = output.get("data", {})
            if SAVED_COPY_CLASS in data.get("text/html", ""):
                report = data.get("text/plain", "")
                lines += [f"    {line}" for line in report.splitlines() if "Try:" not in line]
            elif output.output_type == "error":
                lines.append(f"    raised {output.ename} (the cell is tagged {RAISES_TAG!r})")
        blocks.append("\n".join(lines))
    return blocks


def check_html(page: str) -> tuple[int, int]:
    """(graph drawings, marked break lines) in the exported page; `SystemExit` if there are none,
    which would mean the widgets' static copies were lost on the way."""
    graphs = page.count("<svg")
    marks = page.count('class="tc-line tc-break-line')
    if not graphs or not marks:
        raise SystemExit(f"the exported HTML lacks graphs ({graphs}) or break marks ({marks})")
    return graphs, marks


def main(argv: list[str] | None = None) -> None:
    import nbformat

    parser = argparse.ArgumentParser(
        prog="python -m tcompile.demo", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--notebook", type=Path, default=QUICKSTART, help="notebook to run")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="HTML file to write")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        raise SystemExit(f"no notebook at {args.notebook}: run the demo from a tcompile checkout")

    start = time.perf_counter()
    nb = execute_notebook(args.notebook)
    seconds = time.perf_counter() - start
    page = export_html(nb)
    graphs, marks = check_html(page)

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(page, encoding="utf-8")
    executed = args.output.with_suffix(".ipynb")
    nbformat.write(nb, executed)

    size = args.output.stat().st_size / 1024
    print(f"Ran {args.notebook} in {seconds:.1f} s (Python {platform.python_version()}).")
    print(
        f"HTML: {args.output.resolve()} ({size:.0f} KiB; open it in a browser, no network needed)"
    )
    print(f"      {graphs} graph drawings (SVG), {marks} marked break lines")
    print(f"Executed notebook, widget state included: {executed.resolve()}")
    print("\nWhat each %%tcompile cell reported:\n")
    print("\n\n".join(cell_summaries(nb)))


if __name__ == "__main__":
    main(sys.argv[1:])
