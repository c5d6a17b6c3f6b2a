"""Observers of the compiler: callbacks told of every kernel compilation and launch.

A tool that needs to know what cujit did (a conformance runner counting the kernels
cujit compiled during a test, a profiler) registers a callback; the compile path and
the launch path call ``notify`` once each.  With no callback registered the cost is
one truth test of an empty list.

    from cujit import events
    seen = []
    events.subscribe(lambda kind, name, target: seen.append((kind, name)))
"""

from __future__ import annotations

from collections.abc import Callable

Callback = Callable[[str, str, str], None]

COMPILE = "compile"  # a kernel (and the device functions it calls) went through the stages
LAUNCH = "launch"  # a kernel was launched

_callbacks: list[Callback] = []


def subscribe(callback: Callback) -> Callback:
    """Call ``callback(kind, name, target)`` on every compile and launch; returns it."""
    _callbacks.append(callback)
    return callback


def unsubscribe(callback: Callback) -> None:
    """Stop calling ``callback`` (no error if it was not subscribed)."""
    if callback in _callbacks:
        _callbacks.remove(callback)


def notify(kind: str, name: str, target: str) -> None:
    """Tell every subscriber; an observer's error never reaches the compiled program."""
    for callback in tuple(_callbacks):
        try:
            callback(kind, name, target)
        except Exception:  # an observer must not change what the program does
            pass
