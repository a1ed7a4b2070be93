"""The options of ``%%tcompile`` and ``%tcompile``, parsed the IPython way (``magic_arguments``).

``%%tcompile --fullgraph --backend eager`` sets options for one cell, on top of the session's
defaults; ``%tcompile --error-on-graph-break`` changes those defaults, bare ``%tcompile`` shows
them. A wrong option or an unknown backend is a `UsageError` saying what was wrong.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from tcompile.backend import backend_choices
from tcompile.widgets.model import CellOptions


@magic_arguments()
@argument(
    "--fullgraph",
    action="store_true",
    default=None,
    help="one graph per function, or tc.Unsupported at the first graph break",
)
@argument(
    "--no-fullgraph",
    dest="fullgraph",
    action="store_false",
    help="let graph breaks happen (the default)",
)
@argument(
    "--error-on-graph-break",
    action="store_true",
    default=None,
    help="a graph break raises tc.Unsupported (several graphs are still allowed)",
)
@argument(
    "--no-error-on-graph-break",
    dest="error_on_graph_break",
    action="store_false",
    help="graph breaks do not raise (the default)",
)
@argument("--backend", metavar="NAME", help="the backend: auto (the default), eager, ...")
@argument("--dynamic", action="store_true", default=None, help="every dim symbolic")
@argument("--no-dynamic", dest="dynamic", action="store_false", help="never symbolic dims")
@argument(
    "--no-widget",
    dest="widget",
    action="store_false",
    default=None,
    help="do not show the cell's widget",
)
@argument("--widget", dest="widget", action="store_true", help="show the widget (the default)")
@argument(
    "--timeit",
    action="store_true",
    default=None,
    help="after the cell, run its calls again compiled and plain, and show both times "
    "(like %%timeit, the code runs again)",
)
@argument("--no-timeit", dest="timeit", action="store_false", help="no timing (the default)")
def tcompile(line: str) -> None:  # noqa: D401 - the signature magic_arguments documents
    """Compile the functions this cell defines with tcompile, run it, show what was captured.

    Every function the cell defines at top level (``def``, a lambda assigned to a name, the
    methods of a class it defines) is compiled with these options when it is defined. As a
    line magic, ``%tcompile OPTIONS`` sets the session's defaults; bare ``%tcompile`` shows them.
    """


def parse(line: str, defaults: CellOptions, magic: str = "tcompile") -> CellOptions:
    """The options ``line`` sets on top of ``defaults``; `UsageError` if it is wrong."""
    try:
        args = parse_argstring(tcompile, line)
    except UsageError as error:
        raise UsageError(f"%{magic}: {error}\nUsage: {tcompile.parser.format_usage()}") from None
    given = {k: v for k, v in vars(args).items() if v is not None}
    if "backend" in given:
        check_backend(given["backend"], magic)
    return defaults.changed(**given)


def check_backend(name: str, magic: str = "tcompile") -> None:
    choices = {c.name: c for c in backend_choices()}
    choice = choices.get(name)
    if choice is None:
        raise UsageError(f"%{magic}: unknown backend {name!r}; available: {', '.join(choices)}")
    if not choice.usable:
        raise UsageError(f"%{magic}: the {name!r} backend cannot run here: {choice.reason}")
