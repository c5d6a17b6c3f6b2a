"""numba's argument hints and launch extensions: how a launch moves host arrays.

``cuda.In(a)``, ``cuda.Out(a)`` and ``cuda.InOut(a)`` wrap a host array passed to a
kernel: ``In`` copies it to the device only, ``Out`` allocates it on the device and
copies it back only, ``InOut`` does both (a plain host array is copied in, and back
when the kernel writes it).

A kernel's ``extensions`` (``jit(extensions=[...])`` or ``kernel.extensions.append``)
are objects with ``prepare_args(ty, val, stream=..., retr=...)`` returning ``(ty,
val)``: each launch passes every argument through them, last to first, before it is
typed; ``retr`` is a list of no-argument callables the launch calls once the kernel
has been launched (copies back, clean-ups).

Launches with hints or extensions take the general launch path: ``prepare`` turns
their arguments into plain ones and collects the work to do after the launch.
"""

from __future__ import annotations

from collections.abc import Callable


class ArgHint:
    """A host array with how a launch should move it (the base of ``In``/``Out``/``InOut``)."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"cuda.{type(self).__name__}({self.value!r})"

    def to_device(self, retr: list, stream=0):
        """The device-side value the kernel receives; appends copies back to ``retr``."""
        raise NotImplementedError

    def to_host_kernel(self):
        """What a CPU-target kernel receives: the host array itself (its stores land
        there), or for ``In`` a copy of it."""
        return self.value


class In(ArgHint):
    """Copy to the device before the launch; never back."""

    __slots__ = ()

    def to_host_kernel(self):
        import numpy as np

        return np.array(self.value, copy=True)

    def to_device(self, retr: list, stream=0):
        from cujit.runtime.memory import to_device

        return to_device(self.value, stream=stream)


class Out(ArgHint):
    """Allocate on the device; copy back after the launch (the host contents are not sent)."""

    __slots__ = ()

    def to_device(self, retr: list, stream=0):
        from cujit.runtime.memory import to_device

        dev = to_device(self.value, stream=stream, copy=False)
        retr.append(lambda: dev.copy_to_host(self.value, stream=stream))
        return dev


class InOut(ArgHint):
    """Copy to the device before the launch and back after it."""

    __slots__ = ()

    def to_device(self, retr: list, stream=0):
        from cujit.runtime.memory import to_device

        dev = to_device(self.value, stream=stream)
        retr.append(lambda: dev.copy_to_host(self.value, stream=stream))
        return dev


def wrap_arg(value, default=InOut):
    """numba's ``wrap_arg``: ``value`` if it is a hint already, else ``default(value)``."""
    return value if isinstance(value, ArgHint) else default(value)


def has_hint(args) -> bool:
    return any(isinstance(a, ArgHint) for a in args)


def prepare(args, extensions, stream, typeof: Callable, target: str) -> tuple[tuple, list]:
    """The plain arguments a launch passes for ``args`` (through ``extensions``, then
    hints turned into device arrays, or host arrays on the CPU ``target``) and the
    callables to run after the launch."""
    retr: list = []
    out = []
    for value in args:
        if extensions:
            try:
                ty = typeof(value)
            except TypeError:  # an extension may turn it into something typeable
                ty = None
            for extension in reversed(extensions):
                ty, value = extension.prepare_args(ty, value, stream=stream, retr=retr)
        if isinstance(value, ArgHint):
            value = value.to_host_kernel() if target == "cpu" else value.to_device(retr, stream)
        out.append(value)
    return tuple(out), retr
