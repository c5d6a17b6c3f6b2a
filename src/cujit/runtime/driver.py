"""The CUDA driver API, reached through ``cuda.bindings.driver``.

Every driver function in cuda.bindings returns ``(CUresult, *outputs)``;
:func:`call` checks the result and raises :class:`CudaDriverError` naming the
call and the CUDA error name, the form every runtime module uses.

The bindings are imported on first use (``import cujit`` stays light), and
``cuInit`` runs once.  A machine without the driver library or without a
device gets :class:`~cujit.diagnostics.NoGPUError` instead of the bindings'
own loader exception.
"""

from __future__ import annotations

import os
import threading

from cujit import startup
from cujit.diagnostics import CujitError, NoGPUError

_drv = None  # cuda.bindings.driver, once imported and cuInit has succeeded
_init_error: str | None = None  # the NoGPUError message, once init has failed
_lock = threading.Lock()


class CudaDriverError(CujitError):
    """A CUDA driver call failed: ``cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (...)``."""

    def __init__(self, call: str, code: int, name: str, description: str = ""):
        self.call = call
        self.code = code
        self.name = name
        self.description = description
        text = f"{call} failed: {name}"
        if description:
            text += f" ({description})"
        super().__init__(text)

    def __reduce__(self):
        # Rebuilt from its parts (a process pool sends a worker's error back pickled).
        return (type(self), (self.call, self.code, self.name, self.description))


def error_name(code) -> tuple[str, str]:
    """The CUDA error name (``CUDA_ERROR_INVALID_VALUE``) and description of a CUresult."""
    drv = _import_bindings()
    try:
        name = drv.CUresult(int(code)).name  # the enum knows names without a driver call
    except Exception:  # noqa: BLE001 - a code newer than these bindings
        name = f"CUresult {int(code)}"
    try:
        err, desc = drv.cuGetErrorString(code)
        desc = _text(desc) if err == 0 else ""
    except Exception:  # noqa: BLE001 - the driver itself may be what is broken
        desc = ""
    return name, desc


def _text(s) -> str:
    return s.decode(errors="replace") if isinstance(s, (bytes, bytearray)) else str(s)


def raise_error(call: str, code) -> None:
    """Raise the CudaDriverError for ``code`` returned by ``call``."""
    name, desc = error_name(code)
    raise CudaDriverError(call, int(code), name, desc)


def check(result, call: str):
    """Check a bindings result tuple ``(CUresult, *values)``; return the values.

    One output comes back bare, several as a tuple, none as ``None``.
    """
    err = result[0]
    if err != 0:
        raise_error(call, err)
    n = len(result)
    if n == 1:
        return None
    if n == 2:
        return result[1]
    return result[1:]


def call(name: str, *args):
    """``call('cuMemAlloc', n)``: run the named driver function and check it."""
    drv = get_driver()
    return check(getattr(drv, name)(*args), name)


def _import_bindings():
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise NoGPUError(
            f"no CUDA GPU available: the cuda-bindings package is missing ({exc}); "
            "install 'cuda-bindings'"
        ) from None
    return driver


def get_driver():
    """``cuda.bindings.driver`` after a successful ``cuInit``; NoGPUError if impossible."""
    if _drv is not None:
        return _drv
    return _initialise()


_forked = False  # set in a child forked after cuInit, whose CUDA state is unusable


def _after_fork_in_child() -> None:
    global _drv, _forked
    _drv, _forked = None, True


def _initialise():
    global _drv, _init_error
    with _lock:
        if _drv is not None:
            return _drv
        if _forked:
            # The driver's state does not survive fork(): a call would fail or hang.
            raise CudaDriverError(
                "cuInit",
                0,
                "CUDA initialized before forking",
                "this process was forked from one that had started CUDA; start it with "
                "multiprocessing's 'spawn' method instead",
            )
        if _init_error is not None:  # fail the same way, fast, every later time
            raise NoGPUError(_init_error)
        drv = _import_bindings()
        # Whoever waits for the driver's start may use it (cujit.startup).
        startup.run_before_init()
        _init_error = _start(drv)
        if _init_error is not None:
            startup.run_arch_known(None)  # no device
            raise NoGPUError(_init_error)
        _drv = drv
        os.register_at_fork(after_in_child=_after_fork_in_child)
        return drv


def _start(drv) -> str | None:
    """``cuInit`` and a device count; the NoGPUError message if either fails."""
    # With libcuda.so absent the bindings' loader raises; cuInit never runs.
    try:
        result = drv.cuInit(0)
    except Exception as exc:  # noqa: BLE001
        return (
            "no CUDA GPU found: the CUDA driver library (libcuda.so) could not be "
            f"loaded. Is an NVIDIA driver installed? ({type(exc).__name__}: {exc})"
        )
    err = result[0]
    if err != 0:
        name, desc = error_name(err)
        return f"no CUDA GPU found: cuInit failed with {name}" + (f" ({desc})" if desc else "")
    err, count = drv.cuDeviceGetCount()
    if err != 0 or count == 0:
        return "no CUDA GPU found: the driver reports no CUDA devices"
    return None


def is_available() -> bool:
    """True when the driver initialises and at least one device exists."""
    try:
        get_driver()
    except NoGPUError:
        return False
    return True


def driver_version() -> tuple[int, int]:
    """The driver's CUDA version, e.g. (13, 0)."""
    v = call("cuDriverGetVersion")
    return v // 1000, (v % 1000) // 10
