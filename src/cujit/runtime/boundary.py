"""The host API's boundary: ``cuda.to_device``, ``cuda.stream``... as the user calls them.

Without a GPU the driver's load fails deep inside the runtime (``driver.get_driver``);
at the boundary that failure becomes one short error naming the call the user made and
how to run without a GPU, raised with the user's frames only:

    cujit.diagnostics.NoGPUError: cuda.to_device(): no CUDA GPU found: ...
    To run without a GPU, set CUJIT_TARGET=cpu (CUJIT_TARGET=cpu python program.py) ...
    guide: docs/guide/cpu-target.md

Other user-facing errors pass through it with cujit's frames dropped too.
``CUJIT_SHOW_INTERNALS=1`` leaves every traceback untouched.
"""

from __future__ import annotations

import functools

from cujit.diagnostics import NoGPUError, api_boundary
from cujit.hints import GUIDE

CPU_HINT = (
    "To run without a GPU, set CUJIT_TARGET=cpu (CUJIT_TARGET=cpu python program.py): "
    "kernels, device arrays, streams and events then run on the CPU."
)


def no_gpu(call: str, error: NoGPUError) -> NoGPUError:
    """``error`` (the driver's reason) as the error of ``call``: three lines."""
    reason = str(error).split("\n", 1)[0]
    return NoGPUError(f"{call}: {reason}\n{CPU_HINT}\nguide: {GUIDE}cpu-target.md")


def host_api(call: str):
    """Decorate a host function the user calls as ``call`` (``"cuda.to_device()"``): a
    missing GPU becomes ``no_gpu``'s error, and ``api_boundary`` shows the user's frames."""

    def decorate(fn):
        @functools.wraps(fn)
        def translated(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except NoGPUError as error:
                raise no_gpu(call, error) from None

        entry = api_boundary(translated)
        entry.__wrapped__ = fn  # the runtime's own function, one step down
        entry.__cujit_host_api__ = call
        return entry

    return decorate


def wrap(module: str, name: str, value):
    """``value``, the attribute ``name`` of the runtime's ``module``, as ``cujit.cuda``
    serves it: a plain function behind the boundary (``cuda.name`` for pickle), anything
    else (classes, ``cuda.gpus``) as it is."""
    if not callable(value) or isinstance(value, type) or hasattr(value, "__cujit_host_api__"):
        return value
    if getattr(value, "__module__", None) != module:  # re-exported from elsewhere
        return value
    entry = host_api(f"cuda.{name}()")(value)
    entry.__module__, entry.__qualname__ = "cujit.cuda", name
    return entry
