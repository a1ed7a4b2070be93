"""The Jupyter extension: ``%load_ext tcompile`` registers ``%%tcompile`` and ``%tcompile``.

    %load_ext tcompile

    %%tcompile --fullgraph
    def f(x):
        return np.sin(x) * 2
    f(np.ones(3))

Every function the cell defines is compiled with the cell's options when it is defined; the
cell then shows a widget over what was compiled (graphs, guards, breaks, code, timings), whose
toggles run the cell again with other options. ``import tcompile`` never imports IPython: only
loading the extension does.
"""

from __future__ import annotations

from tcompile.tracer import report
from tcompile.tracer.errors import Unsupported
from tcompile.tracer.ir import file_labels

from .magics import TcompileMagics


def load_ipython_extension(ipython) -> None:
    magics = TcompileMagics(ipython)
    ipython.register_magics(magics)
    ipython.events.register("pre_run_cell", magics.note_cell_start)
    ipython.events.register("post_run_cell", magics.show_pending)
    ipython.set_custom_exc((Unsupported,), magics.unsupported)
    file_labels.add_namer(magics.cell_labels.name)  # graphs and loops say "Cell In[5]:3"
    report.recorder.listeners.append(magics.session_log)  # %tcompile log: every compile


def unload_ipython_extension(ipython) -> None:
    magics = ipython.magics_manager.registry.get("TcompileMagics")
    if magics is not None:
        ipython.events.unregister("pre_run_cell", magics.note_cell_start)
        ipython.events.unregister("post_run_cell", magics.show_pending)
        ipython.set_custom_exc((), None)
        file_labels.remove_namer(magics.cell_labels.name)
        if magics.session_log in report.recorder.listeners:
            report.recorder.listeners.remove(magics.session_log)
