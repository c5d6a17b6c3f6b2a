"""Checks at the API's edge: the mistakes a kernel's caller can make before any compile.

Each function here either returns quietly or raises one of cujit's errors that
says what to do instead: a kernel whose parameter list a kernel cannot have, a
launch with keyword arguments, a device function launched like a kernel, a
stream argument that is not a stream, a signature that does not parse.  The
dispatcher calls them; they import nothing heavy (no llvmlite, no CUDA).
"""

from __future__ import annotations

import inspect
import sys

from cujit.diagnostics import (
    DeviceFunctionLaunchError,
    LaunchError,
    Loc,
    UnsupportedError,
    def_loc,
)

_STREAM_ATTRS = ("cu", "handle", "__cuda_stream__", "cuda_stream", "ptr")
# Modules whose classes are streams by construction: cuda-bindings' CUstream,
# CuPy's streams, and the CPU target's stand-in.
_STREAM_MODULES = ("cuda.", "cupy", "cujit.targets.cpu.streams", "cujit.runtime.stream")


def check_parameters(pyfunc) -> None:
    """A kernel's parameters must all be positional: refuse ``*args``, ``**kwargs``
    and keyword-only parameters at the ``def`` line, before any launch counts them."""
    code = getattr(pyfunc, "__code__", None)
    if code is None:
        return
    message = parameters_message(code)
    if message is not None:
        raise UnsupportedError(message, def_loc(Loc(code.co_filename, code.co_firstlineno, 0)))


def parameters_message(code) -> str | None:
    """What is wrong with a kernel's parameter list (``*args``, ``**kwargs``,
    keyword-only parameters), or None: every parameter must be positional."""
    at = code.co_argcount + code.co_kwonlyargcount  # *args, then **kwargs, come next
    star = []
    if code.co_flags & inspect.CO_VARARGS:
        star.append(f"*{code.co_varnames[at]}")
        at += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        star.append(f"**{code.co_varnames[at]}")
    if star:
        what = " and ".join(f"'{s}'" for s in star)
        return (
            f"{what}: *args and **kwargs parameters are not supported in kernels; "
            "declare each parameter by name"
        )
    if code.co_kwonlyargcount:
        names = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        return (
            f"keyword-only parameters ({', '.join(names)}) are not supported in "
            "kernels; declare them before the '*'"
        )
    return None


def boundscheck_flag(flags: dict, default) -> bool | None:
    """``jit(boundscheck=...)`` when given, else ``default`` (``CUJIT_BOUNDSCHECK``)."""
    value = flags.get("boundscheck")
    if value is None:
        return default
    if not isinstance(value, bool):
        raise TypeError(f"boundscheck must be True, False or None, not {value!r}")
    return value


def check_stream(stream) -> None:
    """A launch's stream must be one: 0 or None (the default stream), a non-negative
    int handle, or a stream object (cujit's, cuda-bindings', CuPy's, PyTorch's, or
    anything with ``__cuda_stream__``)."""
    if stream is None:
        return
    if isinstance(stream, int) and not isinstance(stream, bool):
        if stream < 0:
            raise LaunchError(f"a stream handle cannot be negative, got {stream}")
        return
    cls = type(stream)
    if cls.__module__.startswith(_STREAM_MODULES) or any(hasattr(stream, a) for a in _STREAM_ATTRS):
        return
    raise LaunchError(
        f"the third item of kernel[grid, block, stream] must be a stream, got "
        f"{cls.__name__} {stream!r}; pass cuda.stream(), cuda.default_stream(), 0, or "
        "an object with __cuda_stream__ (the dynamic shared memory size comes fourth)"
    )


def kwargs_error(name: str, argnames, kwargs: dict) -> LaunchError:
    """The error for ``kernel[grid, block](x=...)``: kernels take positional arguments."""
    order = ", ".join(argnames)
    return LaunchError(
        f"kernel {name!r} was called with keyword arguments "
        f"({', '.join(kwargs)}); kernels take positional arguments only: "
        f"{name}[grid, block]({order})"
    )


def launch_device_function(fn, config) -> None:
    """``device_fn[grid, block]``: a device function cannot be launched."""
    raise DeviceFunctionLaunchError(
        f"Cannot compile a device function as a kernel: {fn.__name__!r} is a device "
        "function (@cuda.jit(device=True)), which cannot be launched; call it from a "
        "kernel, or remove device=True to make it a kernel"
    )


def user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside cujit, for a ``warnings.warn`` made
    by this function's caller (so warnings name the user's line)."""
    import os

    root = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level
