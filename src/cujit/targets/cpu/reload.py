"""A CPU kernel as data, and back: what the disk cache keeps of a ``CPUKernel`` and how a
later process rebuilds it from its object code without running any stage.

``kernel_state`` is the launch metadata (JSON data): the names, the runner's symbol,
the static shared bytes and which scheduler the grid needs.  ``rebuild`` loads the object
code into a fresh engine (``engine.LoadedModule``) and makes the ``CPUKernel`` that
``build_cpu_kernel`` made from it, error record included.
"""

from __future__ import annotations

from cujit.targets.cpu.debug import HostRecord
from cujit.targets.cpu.engine import LoadedModule
from cujit.targets.cpu.launch import CPUKernel

STATE_FIELDS = {
    "name": str,
    "runner": str,
    "static_shared": int,
    "barriers": bool,
    "grid_sync": bool,
    "warp": bool,
    "arg_names": list,
}


def kernel_state(kernel: CPUKernel) -> dict:
    """The launch metadata of ``kernel`` besides its code and its argument types."""
    return {
        "name": kernel.name,
        "runner": kernel.runner_symbol,
        "static_shared": int(kernel.static_shared),
        "barriers": bool(kernel.barriers),
        "grid_sync": bool(kernel.grid_sync),
        "warp": bool(kernel.warp),
        "arg_names": list(kernel.arg_names),
    }


def valid_state(state) -> bool:
    """Whether ``state`` has every field ``rebuild`` reads, each of its type."""
    if not isinstance(state, dict):
        return False
    for name, kind in STATE_FIELDS.items():
        value = state.get(name)
        if type(value) is not kind or (kind is int and value < 0):
            return False
    return all(isinstance(a, str) for a in state["arg_names"]) and bool(state["runner"])


def rebuild(
    state: dict,
    arg_types: tuple,
    object_code: bytes,
    texts: tuple[str, str],
    written: tuple[bool, ...],
    sites: dict,
) -> CPUKernel:
    """The ``CPUKernel`` of ``state`` for ``arg_types``: ``object_code`` loaded, ``texts``
    its LLVM IR before and after optimisation (for inspection), ``written`` per argument,
    ``sites`` its error record's codes (empty: no checks that report)."""
    llvm_ir, optimised = texts
    jit = LoadedModule(object_code, optimised)
    kernel = CPUKernel(
        state["name"],
        jit,
        state["runner"],
        tuple(arg_types),
        state["static_shared"],
        state["barriers"],
        llvm_ir,
        state["grid_sync"],
        state["warp"],
    )
    kernel.written = tuple(written)
    kernel.arg_names = tuple(state["arg_names"])
    if sites:
        kernel.debug_sites = sites
        kernel.debug_record = HostRecord(jit, sites)
    return kernel
