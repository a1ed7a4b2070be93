"""What a backend returns for a graph, and what the compile report keeps of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class CompiledGraph:
    """A backend's result: ``fn`` takes the graph's inputs positionally and returns the tuple
    the graph's output lists; ``sources`` is the code it generated, by name ("python" for the
    eager backend; "kernels" and "launcher" for Triton); ``details`` holds what the report
    views show of it beyond code (the Triton backend's kernel groups and fusion decisions; a
    backend that makes its kernels later fills them in then).

    ``loop_functions``, where a backend's code looks up each loop node's function by the name
    the graph prints it under (the eager backend: its code's globals), lets the trace's run of a
    loop stand in for the loop's first call (`first_run.replay_first_calls`);
    ``trace_answers_first_call``, that the trace's own results may stand in for the whole
    graph's first call (`first_run.first_call_from_trace`): the backend gives NumPy's results
    on the caller's arrays, and NumPy's are the trace's (the eager backend, the cpu backend).

    A backend may also return a plain callable (a user's backend, as torch.compile allows):
    `CompiledGraph.of` wraps it.
    """

    fn: Callable
    backend: str
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    details: Sequence = ()
    loop_functions: MutableMapping | None = None
    trace_answers_first_call: bool = False

    @staticmethod
    def of(result, backend) -> CompiledGraph:
        """``result`` of calling ``backend`` as a CompiledGraph."""
        if isinstance(result, CompiledGraph):
            return result
        name = getattr(backend, "__name__", type(backend).__name__).removesuffix("_backend")
        if not callable(result):
            raise TypeError(
                f"backend {name!r} returned {type(result).__name__}, not a callable or a "
                "CompiledGraph"
            )
        return CompiledGraph(result, name)

    def source_text(self) -> str:
        """Every generated source, one after another (what the Code tab shows)."""
        return "\n\n".join(self.sources.values())


# The kinds of kernel a backend generates (scatter: atomic adds, repeated indices add up).
GENERATED_KINDS = ("pointwise", "reduction", "scatter")


@dataclass(frozen=True)
class KernelInfo:
    """One generated kernel (or another step) as the Kernels tab shows it: ``kind`` is one of
    `GENERATED_KINDS`, or "library", "loop", "extern" ("native loop", "python loop": the cpu
    backend's loop nodes, compiled whole or not; "chunk kernel", "dask": on Dask arrays, a
    region's task per chunk, a step Dask runs as it is); ``lines`` the user's lines it computes;
    ``notes`` what was fused into it, or for another step how or why it runs so."""

    name: str
    kind: str
    source: str = ""
    lines: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # for a loop: its body's kernels as made so far (a backend plans a body at its first run)
    parts: Callable[[], tuple[KernelInfo, ...]] | None = None


@dataclass(frozen=True)
class FusionDecision:
    """Whether two kernels became one, and why (not)."""

    first: str
    second: str
    fused: bool
    reason: str
