"""CUDA graphs: capture the launches made on a stream once, replay them cheaply.

    s = cuda.stream()
    kernel[blocks, threads, s](x)        # warm up: compile and load outside the capture
    with cuda.graph(s) as g:             # capture (nothing runs yet)
        for _ in range(1000):
            kernel[blocks, threads, s](x)
    g.launch()                           # replay all 1000 launches: one driver call
    s.synchronize()

Capture uses ``cuStreamBeginCapture`` / ``cuStreamEndCapture``, then
``cuGraphInstantiate`` makes the executable graph that ``cuGraphLaunch``
replays.  A replay reuses the captured parameter values (pointers and
scalars), so the arrays a graph uses must outlive it; the graph keeps any
objects passed to :meth:`Graph.keep` alive for that purpose.

The capture mode is "thread_local" by default: calls that cannot be captured
(allocations, synchronous copies) made by the capturing thread fail at once
instead of silently running outside the graph.  Host (NumPy) array arguments
need such copies, so launches inside a capture take device arrays.
"""

from __future__ import annotations

import weakref
from typing import Self

from cujit.runtime.driver import call, get_driver
from cujit.runtime.stream import Stream, as_cu_stream
from cujit.runtime.stream import stream as new_stream

_MODES = {
    "global": "CU_STREAM_CAPTURE_MODE_GLOBAL",
    "thread_local": "CU_STREAM_CAPTURE_MODE_THREAD_LOCAL",
    "relaxed": "CU_STREAM_CAPTURE_MODE_RELAXED",
}


class Graph:
    """A captured CUDA graph and its executable form; usable as a context manager."""

    def __init__(self, stream=None, mode: str = "thread_local"):
        if mode not in _MODES:
            raise ValueError(f"capture mode must be one of {sorted(_MODES)}, not {mode!r}")
        if stream is None:
            stream = new_stream()  # capture cannot use the legacy default stream
        elif isinstance(stream, int) and stream in (0, 1):
            raise ValueError("the legacy default stream cannot be captured: use cuda.stream()")
        self.stream = stream
        self.mode = mode
        self.graph = None  # CUgraph, once captured
        self.exec = None  # CUgraphExec, once instantiated
        self._kept: list = []
        self._capturing = False

    def keep(self, *objects) -> None:
        """Keep ``objects`` (typically the arrays the captured launches use) alive."""
        self._kept.extend(objects)

    def __enter__(self) -> Self:
        if self.graph is not None:
            raise RuntimeError("this graph has already been captured")
        from cujit.runtime.context import get_context

        get_context()
        mode = getattr(get_driver().CUstreamCaptureMode, _MODES[self.mode])
        call("cuStreamBeginCapture", as_cu_stream(self.stream), mode)
        self._capturing = True
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._capturing = False
        err, graph = get_driver().cuStreamEndCapture(as_cu_stream(self.stream))
        if exc_type is not None:  # the body failed: drop whatever was captured
            if err == 0 and graph is not None:
                get_driver().cuGraphDestroy(graph)
            return
        if err != 0:
            from cujit.runtime.driver import raise_error

            raise_error("cuStreamEndCapture", err)
        self.graph = graph
        self.exec = call("cuGraphInstantiate", graph, 0)
        weakref.finalize(self, _destroy, self.exec, self.graph).atexit = False

    @property
    def node_count(self) -> int:
        """How many operations (kernel launches, copies...) the graph holds."""
        self._require()
        _, count = call("cuGraphGetNodes", self.graph, 0)
        return int(count)

    def launch(self, stream=None) -> None:
        """Replay the graph on ``stream`` (by default the stream it was captured on)."""
        self._require()
        call("cuGraphLaunch", self.exec, as_cu_stream(self.stream if stream is None else stream))

    def synchronize(self) -> None:
        """Wait for the capture stream (and so the graph's last replay there)."""
        as_stream = self.stream if isinstance(self.stream, Stream) else None
        if as_stream is not None:
            as_stream.synchronize()
        else:
            call("cuStreamSynchronize", as_cu_stream(self.stream))

    def _require(self) -> None:
        if self.exec is None:
            raise RuntimeError(
                "the graph has not been captured yet: use 'with cuda.graph(s) "
                "as g:' around the launches first"
            )

    def __repr__(self) -> str:
        state = "captured" if self.exec is not None else "empty"
        return f"<Graph {state} on {self.stream!r}>"


def _destroy(graph_exec, graph) -> None:
    drv = get_driver()
    try:
        drv.cuGraphExecDestroy(graph_exec)
        drv.cuGraphDestroy(graph)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def graph(stream=None, mode: str = "thread_local") -> Graph:
    """``cuda.graph(stream)``: a graph to capture with ``with``; see the module docstring."""
    return Graph(stream, mode)
