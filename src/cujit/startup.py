"""Start-up hooks: callables the runtime runs around the CUDA driver's start.

The runtime knows nothing of what else wants to use that moment; whoever does
registers here (the compiler's warm-up, ``cujit/warmup.py``, overlaps loading
the compiler with ``cuInit``).  This module imports nothing, so both sides (and the compiler) can
import it without importing each other.

- ``BEFORE_INIT``: called with no argument right before ``cuInit``.
- ``ARCH_KNOWN``: called with the first device's compute capability as soon as
  it is read (before its context is created), or with None when the driver
  found no device.
- ``BEFORE_COMPILE``: called with no argument at the start of every compile
  (``pipeline.compile_kernel``), so that what the hooks above started can finish
  before the compiler's libraries are used by two threads at once.

A hook returns quickly and raises nothing: it runs inside the runtime's start.
"""

from __future__ import annotations

from collections.abc import Callable

BEFORE_INIT: list[Callable[[], None]] = []
ARCH_KNOWN: list[Callable[[tuple[int, int] | None], None]] = []
BEFORE_COMPILE: list[Callable[[], None]] = []


def register(
    before_init: Callable[[], None] | None = None,
    arch_known: Callable[[tuple[int, int] | None], None] | None = None,
    before_compile: Callable[[], None] | None = None,
) -> None:
    """Add hooks (each at most once)."""
    for hooks, hook in (
        (BEFORE_INIT, before_init),
        (ARCH_KNOWN, arch_known),
        (BEFORE_COMPILE, before_compile),
    ):
        if hook is not None and hook not in hooks:
            hooks.append(hook)


def run_before_init() -> None:
    for hook in BEFORE_INIT:
        hook()


def run_arch_known(arch: tuple[int, int] | None) -> None:
    for hook in ARCH_KNOWN:
        hook(arch)


def run_before_compile() -> None:
    for hook in BEFORE_COMPILE:
        hook()
