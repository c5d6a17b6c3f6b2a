"""``cuda.jit``'s numba options that cujit checks at the decorator, and the warnings
numba gives about them and about launches.

- ``launch_bounds``: an int or up to three ints (more is a ValueError, as numba's);
- ``shared_memory_carveout``: -1 to 100 or 'default', 'MaxL1', 'MaxShared';
- ``debug=True`` with ``opt=True`` given: a ``NumbaInvalidConfigWarning`` (cujit
  compiles debug builds unoptimised, so ``opt`` is ignored);
- ``debug=True`` with ``lineinfo=True``: a ``NumbaInvalidConfigWarning`` (debug info
  holds the line tables);
- a launch of fewer than 128 blocks (``CUJIT_LOW_OCCUPANCY_WARNINGS``) and a launch
  that copies host arrays (``CUJIT_WARN_ON_IMPLICIT_COPY``): a
  ``NumbaPerformanceWarning``.  Both are off unless those variables are set (numba
  has them on by default).
"""

from __future__ import annotations

import warnings

from cujit import config
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
    """numba's warnings about contradicting ``jit`` options."""
    if debug and opt:
        warnings.warn(
            NumbaInvalidConfigWarning(
                "debug=True with opt=True is not supported by CUDA debug builds: cujit "
                "compiles debug kernels unoptimised, and ignores opt=True"
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


def warn_grid(grid: tuple[int, int, int]) -> None:
    """The low-occupancy warning, where ``CUJIT_LOW_OCCUPANCY_WARNINGS`` asks for it."""
    blocks = grid[0] * grid[1] * grid[2]
    if blocks < MIN_GRID_BLOCKS and config.LOW_OCCUPANCY_WARNINGS.get():
        warnings.warn(
            NumbaPerformanceWarning(
                f"Grid size {blocks} will likely result in GPU under-utilization due to "
                f"low occupancy (fewer than {MIN_GRID_BLOCKS} blocks)"
            ),
            stacklevel=user_stacklevel(),
        )


def warn_host_arrays(args, ndarray: type) -> None:
    """The implicit-copy warning, where ``CUJIT_WARN_ON_IMPLICIT_COPY`` asks for it: a
    plain host array (not a mapped or managed one) is copied for the launch."""
    if any(a.__class__ is ndarray for a in args) and config.WARN_ON_IMPLICIT_COPY.get():
        warnings.warn(
            NumbaPerformanceWarning(
                "Host array used in CUDA kernel will incur copy overhead to/from device: "
                "copy it once with cuda.to_device and pass the device array"
            ),
            stacklevel=user_stacklevel(),
        )
