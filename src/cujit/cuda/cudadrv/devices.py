"""``cuda.cudadrv.devices`` (also ``cuda.devices``): the current target's devices and
contexts by numba's names, ``gpus`` and ``get_context(devnum=None)``."""

from __future__ import annotations

from cujit.runtime.boundary import host_api


def _target_module():
    from cujit import config

    if config.TARGET.get() == "cpu":
        from cujit.targets.cpu import device

        return device
    from cujit.runtime import context

    return context


@host_api("cuda.cudadrv.devices.get_context()")
def get_context(devnum: int | None = None):
    """The calling thread's context (device ``devnum``'s, made current, when given)."""
    return _target_module().current_context(devnum)


def __getattr__(name: str):
    if name == "gpus":
        from cujit import cuda

        return cuda.gpus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["get_context", "gpus"]  # noqa: F822 - gpus: given by __getattr__
