"""Debug-mode kernels on the CPU target: the error record is host memory.

``codegen.checks`` puts the record (``cujit.abi``'s ``DEBUG_*``) in the kernel's
module as an external global; once MCJIT has loaded the module, that global
is a fixed host address, which the runtime's reader takes as it is.  Worker
threads claim it with the same compare-and-swap as GPU threads, and the launch
returns only after every worker has finished, so reading it then is race-free.
"""

from __future__ import annotations

from cujit.abi import DEBUG_RECORD_SYMBOL, ErrorSite


class HostRecord:
    """The error record of one JIT-compiled debug kernel."""

    def __init__(self, jit, sites: dict[int, ErrorSite]):
        self.sites = sites
        self.jit = jit  # the engine owns the global's memory
        self.address = jit.engine.get_global_value_address(DEBUG_RECORD_SYMBOL)
        if not self.address:
            raise AssertionError(f"the JIT has no global {DEBUG_RECORD_SYMBOL!r}")

    def check(self, kernel: str) -> None:
        """Raise what the launch that just ended reported, if anything; reset the record."""
        from cujit.runtime.debug import check_host

        check_host(self.address, self.sites, kernel)
