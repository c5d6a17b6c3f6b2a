"""``cuda.jit``'s numba options that cujit checks at the decorator, and the warnings
numba gives about them and about launches.

- ``launch_bounds``: an int or up to three ints (more is a ValueError, as numba's);
- ``shared_memory_carveout``: -1 to 100 or 'default', 'MaxL1', 'MaxShared';
- ``debug=True`` with ``opt=True`` given, or ``opt`` left at numba's default (its
  config's ``OPT`` != 0): a ``NumbaInvalidConfigWarning`` (cujit compiles debug builds
  unoptimised, so ``opt`` is ignored);
- ``debug=True`` with ``lineinfo=True``: a ``NumbaInvalidConfigWarning`` (debug info
  holds the line tables);
- a launch of fewer than 128 blocks (``CUDA_LOW_OCCUPANCY_WARNINGS``) and a launch
  that copies host arrays (``CUDA_WARN_ON_IMPLICIT_COPY``): a ``NumbaPerformanceWarning``.
  Both are off unless numba's config (``cujit.numba_config``) or the variables
  ``CUJIT_LOW_OCCUPANCY_WARNINGS`` / ``CUJIT_WARN_ON_IMPLICIT_COPY`` turn them on
  (numba has them on by default).
"""

from __future__ import annotations

import warnings

from cujit import numba_config
from cujit.diagnostics import NumbaInvalidConfigWarning, NumbaPerformanceWarning
from cujit.guards import user_stacklevel

MIN_GRID_BLOCKS = 128  # numba's threshold: fewer blocks leave most of a large GPU idle
_CARVEOUTS = ("default", "maxl1", "maxshared")


def check_carveout(carveout) -> None:
    """Refuse a ``shared_memory_carveout`` the driver has no setting for."""
    if carveout is None:
        return
    if isinstance(carveout, str):
        if carveout.lower() not in _CARVEOUTS:
            raise ValueError(
                f"Invalid carveout value: {carveout!r}: give -1 to 100 (percent of the "
                "unified memory kept for shared memory) or 'default', 'MaxL1', 'MaxShared'"
            )
    elif isinstance(carveout, int) and not isinstance(carveout, bool):
        if not -1 <= carveout <= 100:
            raise ValueError(f"shared_memory_carveout must be between -1 and 100, got {carveout}")
    else:
        raise TypeError(
            f"shared_memory_carveout must be a str or an int, got {type(carveout).__name__}"
        )


def warn_config(debug: bool, opt, lineinfo: bool) -> None:
    """numba's warnings about contradicting ``jit`` options; ``opt=None`` is numba's
    default, on unless numba's config ``OPT`` is 0."""
    if debug and (opt or (opt is None and numba_config.opt_enabled())):
        given = "opt=True" if opt else "opt left at numba's default (config OPT != 0)"
        warnings.warn(
            NumbaInvalidConfigWarning(
                f"debug=True with {given} is not supported by CUDA debug builds: cujit "
                "compiles debug kernels unoptimised; pass opt=False to say so"
            ),
            stacklevel=user_stacklevel(),
        )
    if debug and lineinfo:
        warnings.warn(
            NumbaInvalidConfigWarning(
                "debug and lineinfo are mutually exclusive: debug=True already "
                "emits line tables; lineinfo is ignored"
            ),
            stacklevel=user_stacklevel(),
        )


def warn_grid(grid: tuple[int, int, int], target: str = "cuda") -> None:
    """The low-occupancy warning, where numba's config or ``CUJIT_LOW_OCCUPANCY_WARNINGS``
    asks for it.  On the CPU target it speaks of the kernel's GPU launches: it is there
    to find them before the kernel runs on a GPU."""
    blocks = grid[0] * grid[1] * grid[2]
    if blocks < MIN_GRID_BLOCKS and numba_config.warning_on("CUDA_LOW_OCCUPANCY_WARNINGS"):
        where = "" if target == "cuda" else " when it runs on the CUDA target"
        warnings.warn(
            NumbaPerformanceWarning(
                f"Grid size {blocks} will likely result in GPU under-utilization due to "
                f"low occupancy (fewer than {MIN_GRID_BLOCKS} blocks){where}"
            ),
            stacklevel=user_stacklevel(),
        )


def warn_host_arrays(args, ndarray: type, target: str = "cuda") -> None:
    """The implicit-copy warning, where numba's config or ``CUJIT_WARN_ON_IMPLICIT_COPY``
    asks for it: a plain host array (pinned included; not a mapped or managed one) is
    copied for the launch.  The CPU target reads host arrays in place: there it warns of
    the copies the kernel's launches make on the CUDA target."""
    if not any(a.__class__ is ndarray for a in args):
        return
    if numba_config.warning_on("CUDA_WARN_ON_IMPLICIT_COPY"):
        where = "" if target == "cuda" else " on the CUDA target (the CPU target reads it in place)"
        warnings.warn(
            NumbaPerformanceWarning(
                f"Host array used in CUDA kernel will incur copy overhead to/from device"
                f"{where}: copy it once with cuda.to_device and pass the device array"
            ),
            stacklevel=user_stacklevel(),
        )
