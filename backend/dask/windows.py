"""Slices across chunk boundaries: ``u[2:] + u[:-2]`` where axis 0 is cut into chunks is
chunk-local once each task reads its chunk with a few of its neighbours' elements, a halo with
no wrap-around (``da.overlap.overlap(..., boundary="none")``), its depth derived from the slices.

Along an axis cut into chunks, a value is a *window* of an array's chunks (the *grid*): it
covers the grid's positions ``lo .. lo + length``, its chunks the grid's cut at both ends. A
slice with a step of 1 moves the window's ends inward; an element-wise operation of windows of
one grid and one length places its result at its first operand's window (element ``i`` of
``u[2:] + u[:-2]`` at position ``i + 2``). On a block of the grid's positions ``S .. E`` (its
chunk with the halo), the same code with the slices written from the block's ends
(``u[2:240]`` as ``u[2:]``, ``u[1:n - 1]`` as ``u[1:-1]``) computes every value's positions
``S + lo .. E - hi`` (``hi``: the grid's positions after the window), nothing else read. So a
region whose sink is the window ``lo, hi`` gives each chunk a halo of ``lo`` elements before it
and ``hi`` after it (none at the array's ends) and its kernel's result is exactly that chunk of
the sink: the first chunk of ``u[2:] + u[:-2]`` is 2 shorter, its tasks' halo 2 elements before.

The windows are tracked for every chunk-local node as the graph is planned (`Windows`); once the
regions are known, each region's are found again from its own inputs (`region_depth`), which
must then be whole arrays of one grid on each axis a window cuts: a value that another region
made is a grid of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcompile.tracer.ir.node import Node, nodes_in

from .regions import drops_axes, is_dask_array, is_reduction, reduced_axes, slice_index


@dataclass(frozen=True)
class Window:
    """A value's positions along one axis of ``grid`` (that axis's chunks)."""

    grid: tuple[int, ...]
    lo: int
    length: int

    @property
    def hi(self) -> int:
        """The grid's positions after the window."""
        return sum(self.grid) - self.lo - self.length

    def chunks(self) -> tuple[int, ...]:
        """The grid's chunks cut to the window."""
        cut, start = [], 0
        for size in self.grid:
            end = start + size
            cut.append(min(end, self.lo + self.length) - max(start, self.lo))
            start = end
        return tuple(cut)

    def fits(self) -> bool:
        """A halo of ``lo`` and ``hi`` is shorter than every chunk (Dask's overlap takes it
        from the next chunk only, and no chunk of the value is empty)."""
        return self.length > 0 and max(self.lo, self.hi) < min(self.grid)


class Unaligned(Exception):
    """A region's node whose windows do not line up when found from the region's own inputs."""

    def __init__(self, node: Node):
        super().__init__(node.name)
        self.node = node


class Windows:
    """The windows of the chunk-local values planned so far (``of``: id(node) -> axis ->
    Window; an axis not there is the value's own chunks, whole)."""

    def __init__(self):
        self.of: dict[int, dict[int, Window]] = {}

    def windows_of(self, node: Node, values: dict):
        """``node``'s windows and, for a slice, its index written from the ends of the axes it
        cuts (its bounds as numbers: each entry compiles for one set of chunks); None where
        the windows do not line up, so that the node is not chunk-local."""
        try:
            return _windows(node, values, self.of)[:2]
        except Unaligned:
            return None

    def record(self, node: Node, found: dict, index: tuple | None) -> None:
        """Admit ``node`` with its windows (`windows_of`)."""
        if index is not None:
            node.args = (node.args[0], index)  # a copy of the graph's node (`unrolled`)
        if found:
            self.of[id(node)] = found

    def chunks(self, node: Node, chunks: tuple) -> tuple:
        """``chunks`` with each axis that ``node``'s value is a window of cut to it."""
        found = self.of.get(id(node), {})
        return tuple(found[d].chunks() if d in found else c for d, c in enumerate(chunks))

    def grids(self, node: Node, value) -> tuple:
        """The chunks ``value`` (``node``'s) lines up by: its grid's on an axis it is a window
        of."""
        found = self.of.get(id(node), {})
        return tuple(found[d].grid if d in found else c for d, c in enumerate(value.chunks))


def region_depth(nodes: list[Node], values: dict) -> dict[int, tuple[int, int]]:
    """The halo a region's tasks need on each axis of its sink (before, after): its sink's
    window found from the region's inputs as whole arrays. Raises `Unaligned` (its node) where
    windows of other grids meet, or one does not fit, or the sink's chunks are not those
    planned, or where the region's windows never meet windows at other positions (slices
    alone: Dask's own slicing needs no halo)."""
    of: dict[int, dict[int, Window]] = {}
    shifted = False  # windows at other positions met (a stencil)
    for node in nodes:
        of[id(node)], _, meets = _windows(node, values, of)
        shifted = shifted or meets
    sink = nodes[-1]
    found = of[id(sink)]
    if found and not shifted:
        raise Unaligned(next(n for n in nodes if of[id(n)]))
    if any(w.chunks() != values[sink].chunks[d] for d, w in found.items()):
        raise Unaligned(sink)
    return {d: (w.lo, w.hi) for d, w in found.items()}


def _windows(node: Node, values: dict, of: dict):
    """``node``'s windows given its operands' (``of``), a slice's index written from the ends
    of the axes it cuts (None for any other node), and whether it meets windows at other
    positions. Raises `Unaligned`."""
    operands = [u for u in nodes_in((node.args, node.kwargs)) if is_dask_array(values.get(u))]
    if node.op == "getitem":
        return *_sliced(node, values, of.get(id(operands[0]), {})), False
    windowed = [u for u in operands if of.get(id(u))]
    if not windowed:
        return {}, None, False
    if drops_axes(node):
        raise Unaligned(node)  # axes renumbered: keep it simple, run it as plain Dask
    ndim = max(values[u].ndim for u in operands)
    if is_reduction(node) and set(reduced_axes(node, ndim)) & set(of[id(operands[0])]):
        raise Unaligned(node)  # a chunk's partial result over its halo
    found: dict[int, Window] = {}
    meets = False
    for d in {d + ndim - values[u].ndim for u in windowed for d in of[id(u)]}:
        along = []  # the windows along d of the operands that do not broadcast along it
        for u in operands:
            own = d - ndim + values[u].ndim  # d in u's dims (aligned from the right)
            if own >= 0 and values[u].shape[own] != 1:
                along.append(_window(u, own, values, of))
        if len({(w.grid, w.length) for w in along}) > 1:
            raise Unaligned(node)
        meets = meets or len({w.lo for w in along}) > 1
        found[d] = along[0]
    return found, None, meets


def _window(u: Node, d: int, values: dict, of: dict) -> Window:
    value = values[u]
    return of.get(id(u), {}).get(d) or Window(value.chunks[d], 0, value.shape[d])


def _sliced(node: Node, values: dict, windows: dict) -> tuple[dict[int, Window], tuple | None]:
    """A slice's windows: on each axis cut into chunks, the slice's bounds (a step of 1) move
    the window's ends."""
    source = values[node.args[0]]
    index = slice_index(node.args[1], source.ndim)
    if index is None:
        raise Unaligned(node)
    found: dict[int, Window] = {}
    written = []
    for d, cut in enumerate(index):
        cut = slice(*(values[b] if isinstance(b, Node) else b
                      for b in (cut.start, cut.stop, cut.step)))  # fmt: skip
        if len(source.chunks[d]) == 1:
            written.append(cut)
            continue
        length = source.shape[d]
        start, stop, step = cut.indices(length)
        if step != 1:
            raise Unaligned(node)
        window = windows.get(d) or Window(source.chunks[d], 0, length)
        if (start, stop) != (0, length):
            window = Window(window.grid, window.lo + start, stop - start)
            if not window.fits():
                raise Unaligned(node)
        if window.lo or window.hi:
            found[d] = window
        written.append(slice(start or None, (stop - length) or None))
    return found, tuple(written)
