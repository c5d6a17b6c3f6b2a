"""numba's configuration variables that cujit honours, by numba's names.

A numba program steers numba.cuda through ``numba.cuda.core.config``: attributes read at
each use, so that setting one (``config.DUMP_IR = 1``, numba's ``override_config``)
takes effect at the next compile or launch.  This module is that object for cujit
(under the drop-in, ``numba.cuda.core.config`` is this module); its initial values come
from numba's ``NUMBA_*`` variables (declared in ``cujit.config``):

- ``OPT``: numba's optimisation level; ``jit(opt=None)`` means ``OPT != 0``;
- ``CUDA_DEBUGINFO_DEFAULT``: ``jit(debug=None)``'s value;
- ``CUDA_LOW_OCCUPANCY_WARNINGS`` / ``CUDA_WARN_ON_IMPLICIT_COPY``: numba's performance
  warnings (off unless numba's or cujit's variable turns them on);
- ``CUDA_NVRTC_EXTRA_SEARCH_PATHS``: include directories (``:``-separated) for the CUDA
  C/C++ sources kernels link, after the toolkit's headers (``nvrtc_search_paths``);
- ``CUDA_ARRAY_INTERFACE_SYNC``: whether importing or launching with a foreign array
  synchronizes the stream its interface names (cujit's runtime reads it at each use);
- ``DUMP_BYTECODE``, ``DUMP_CFG``, ``DUMP_IR``, ``DUMP_LLVM``, ``DUMP_ASSEMBLY``: print
  cujit's own stage outputs under numba's headings (``cujit.dumps``).

A process that runs numba-cuda's own modules beside cujit (numba-cuda's test harness,
which sets numba's config on numba-cuda's module) can make that module numba's config
for cujit: ``follow(module)``; ``get`` then reads its values.
"""

from __future__ import annotations

from cujit import config

_FOLLOWED: list = []  # the module follow() named, if any

OPT = config.NUMBA_OPT.get()
# numba's simulator switch, which selects cujit's CPU target under the drop-in.
ENABLE_CUDASIM = int(bool(config.NUMBA_CUDASIM.get()))
CUDA_DEBUGINFO_DEFAULT = int(config.NUMBA_DEBUGINFO.get())
CUDA_LOW_OCCUPANCY_WARNINGS = int(bool(config.NUMBA_LOW_OCCUPANCY_WARNINGS.get()))
CUDA_WARN_ON_IMPLICIT_COPY = int(bool(config.NUMBA_WARN_ON_IMPLICIT_COPY.get()))
CUDA_ARRAY_INTERFACE_SYNC = int(config.NUMBA_CUDA_ARRAY_INTERFACE_SYNC.get())
# cujit's own variables for the performance warnings, either of which also turns one on.
_CUJIT_WARNINGS = {
    "CUDA_LOW_OCCUPANCY_WARNINGS": config.LOW_OCCUPANCY_WARNINGS,
    "CUDA_WARN_ON_IMPLICIT_COPY": config.WARN_ON_IMPLICIT_COPY,
}
CUDA_NVRTC_EXTRA_SEARCH_PATHS = config.NUMBA_NVRTC_EXTRA_SEARCH_PATHS.get()
DUMP_BYTECODE, DUMP_CFG, DUMP_IR, DUMP_LLVM, DUMP_ASSEMBLY = (
    int(knob.get()) for knob in config.NUMBA_DUMPS
)
# The dumps, by numba's name -> cujit's stage whose output each prints.
DUMP_STAGES = {
    "DUMP_BYTECODE": "bytecode",
    "DUMP_CFG": "cfg",
    "DUMP_IR": "ir",
    "DUMP_LLVM": "llvm",
    "DUMP_ASSEMBLY": "asm",
}


def follow(module) -> None:
    """Read numba's config values from ``module`` (numba-cuda's own config module) from
    now on, where it has them."""
    _FOLLOWED[:] = [module]


def get(name: str):
    """numba's config value ``name``: the followed module's where ``follow`` named one
    that has it, else this module's."""
    for module in _FOLLOWED:
        if hasattr(module, name):
            return getattr(module, name)
    return globals()[name]


def warning_on(name: str) -> bool:
    """Whether numba's performance warning ``name`` is on: by numba's config, or by
    cujit's variable for it."""
    return bool(get(name)) or bool(_CUJIT_WARNINGS[name].get())


def opt_enabled() -> bool:
    """``OPT != 0``: what ``jit(opt=None)`` means (numba's ``_OptLevel`` or a string
    such as "max" count as on)."""
    value = get("OPT")
    return value != 0 and str(value).strip() not in ("0", "")


def dumps() -> frozenset[str]:
    """The stages whose outputs numba's ``DUMP_*`` settings ask to print."""
    return frozenset(stage for name, stage in DUMP_STAGES.items() if get(name))


def nvrtc_search_paths() -> tuple[str, ...]:
    """``CUDA_NVRTC_EXTRA_SEARCH_PATHS`` as a tuple of directories (empty entries dropped)."""
    value = get("CUDA_NVRTC_EXTRA_SEARCH_PATHS") or ""
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value if v)
    return tuple(p for p in str(value).split(":") if p)


def array_interface_sync() -> bool:
    """Whether a foreign array's stream is synchronized when it is imported or launched
    with: numba's ``CUDA_ARRAY_INTERFACE_SYNC`` and cujit's variable, both on."""
    return bool(get("CUDA_ARRAY_INTERFACE_SYNC")) and config.CUDA_ARRAY_INTERFACE_SYNC.get()
