"""The launch configuration a compilation was started by (numba's ``launchconfig``).

A launch that compiles (a new kind of arguments reaching a lazily compiled kernel)
makes its ``LaunchConfig`` current on its thread while ``Kernel._compile_for_args``
runs, so code taking part in the compilation can read the grid and block it will
launch with, and mark the kernel as depending on them
(``kernel.mark_launch_config_sensitive()``).  Outside such a compilation there is
none.  Per thread: two threads compiling at once each see their own launch.
"""

from __future__ import annotations

import contextlib
import threading
from types import MethodType

_state = threading.local()


def current_launch_config():
    """The ``LaunchConfig`` whose launch is compiling on this thread, or None."""
    stack = getattr(_state, "stack", None)
    return stack[-1][0] if stack else None


def current_args(config) -> tuple | None:
    """The arguments of ``config``'s launch compiling on this thread, or None."""
    for cfg, args, _ in reversed(getattr(_state, "stack", None) or ()):
        if cfg is config:
            return args
    return None


def ensure_current_launch_config():
    """``current_launch_config()``, raising RuntimeError where there is none."""
    config = current_launch_config()
    if config is None:
        raise RuntimeError("No launch config set for this thread")
    return config


@contextlib.contextmanager
def compiling(config, args):
    """Make ``config`` (launching ``args``) current on this thread; yields a dict whose
    ``"sensitive"`` the compilation sets to mark the kernel launch-config sensitive."""
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    marks = {"sensitive": False}
    stack.append((config, args, marks))
    try:
        yield marks
    finally:
        stack.pop()


NO_LAUNCH_CONFIG = "no launch config"  # the key of a compile no launch started


def config_key(config) -> tuple | str:
    """What makes one launch configuration's code differ from another's, for a kernel
    marked sensitive: its grid, block and dynamic shared memory (``NO_LAUNCH_CONFIG``
    for ``None``)."""
    if config is None:
        return NO_LAUNCH_CONFIG
    return (tuple(config.grid), tuple(config.block), int(config.shmem))


def current_key() -> tuple | str:
    """``config_key`` of the launch compiling on this thread."""
    return config_key(current_launch_config())


def marked_sensitive() -> bool:
    """Whether the compilation under way on this thread was marked sensitive."""
    stack = getattr(_state, "stack", None)
    return bool(stack) and stack[-1][2]["sensitive"]


def note_sensitive() -> None:
    """Mark the compilation under way on this thread (if a launch started one) as
    sensitive: what the disk cache does when the entry it loads was."""
    stack = getattr(_state, "stack", None)
    if stack:
        stack[-1][2]["sensitive"] = True


def mark_sensitive(kernel) -> None:
    """Record that the compilation running on this thread for ``kernel`` depends on its
    launch configuration."""
    stack = getattr(_state, "stack", None)
    if not stack or stack[-1][0] is None or stack[-1][0].kernel is not kernel:
        raise RuntimeError(
            "mark_launch_config_sensitive() must be called while a launch of this "
            "kernel is compiling it"
        )
    stack[-1][2]["sensitive"] = True


@contextlib.contextmanager
def capture_compile_config(dispatcher):
    """Record, in the yielded dict's ``"config"``, the launch configuration current when
    ``dispatcher`` compiles for a launch (None if nothing compiles)."""
    if dispatcher is None:
        raise TypeError("dispatcher is required")
    record = {"config": None}
    had = "_compile_for_args" in dispatcher.__dict__
    saved = dispatcher.__dict__.get("_compile_for_args")
    original = dispatcher._compile_for_args

    def wrapped(self, *args, **kwargs):
        record["config"] = current_launch_config()
        return original(*args, **kwargs)

    dispatcher._compile_for_args = MethodType(wrapped, dispatcher)
    try:
        yield record
    finally:
        if had:
            dispatcher._compile_for_args = saved
        else:
            del dispatcher._compile_for_args


__all__ = ["capture_compile_config", "current_launch_config", "ensure_current_launch_config"]
