"""The compile options of one kernel specialisation: one frozen dataclass.

Its value is part of every specialisation's identity (and so of the cache key).
"""

from __future__ import annotations

from cujit.frozen import frozen

DEFAULT_ARCH = (9, 0)


@frozen
class Options:
    """The options one specialisation is compiled with (part of its identity)."""

    arch: tuple[int, int] = DEFAULT_ARCH
    opt: int = 3
    fastmath: bool = False
    # assert/raise/division checks (codegen/checks.py) and DWARF debug info (libNVVM -g)
    debug: bool = False
    lineinfo: bool = False  # line tables only: PTX .loc/.file naming Python lines
    # Run the IR verifier between stages; the dispatcher sets it from CUJIT_VERIFY.
    verify: bool = False
    target: str = "cuda"  # "cuda" (PTX and cubin) or "cpu" (host code, run in-process)
    # Array bounds checks (debug mode implies none): None is the target's default (on for the
    # CPU target, where a stray store corrupts the Python process; off on the GPU).
    boundscheck: bool | None = None
    # Foreign code linked into the kernel (``jit(link=...)``): ``linking.LinkFile``s, whose
    # reprs (kind, name, content digest) put them in the cache key.
    link: tuple = ()
    # Include directories for the CUDA C/C++ sources linked (numba's
    # CUDA_NVRTC_EXTRA_SEARCH_PATHS), searched after the toolkit's own headers.
    include_paths: tuple[str, ...] = ()
    # numba's jit(lto=True): the kernel links with its foreign code as LTO-IR, under
    # nvJitLink's link-time optimisation (the foreign functions inlined into it).
    lto: bool = False
    # The coarsened variant (docs/coarsening.md): 0 is the kernel as written; k > 1 has
    # each thread run k consecutive indices with 16-byte loads and stores.
    coarsen: int = 0
    # The 32-bit index variant (docs/index32.md): int64 index arithmetic whose values the
    # launch's facts keep within int32 also computed, compared and divided in int32.
    index32: bool = False
    # numba's jit(launch_bounds=...): (max threads per block[, min blocks per
    # multiprocessor[, max blocks per cluster]]), PTX .maxntid/.minnctapersm/.maxclusterrank.
    launch_bounds: tuple[int, ...] = ()
    # Nested functions passed as arguments may capture run-time values (cujit passes
    # them along); numba refuses those, and so does cujit unless this is set
    # (``jit(escaping_captures=True)``; ``infer/escapes.py``).
    escaping_captures: bool = False
