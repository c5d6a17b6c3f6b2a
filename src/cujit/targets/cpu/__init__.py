"""The CPU target: the typed IR of stages 1-5, lowered for the host and run in-process.

    from cujit.targets.cpu import build_cpu_kernel, compile_cpu_kernel, lower_cpu_kernel
    kernel = compile_cpu_kernel(typed_fn, options)        # typed_fn: stage 5's output
    # = build_cpu_kernel(lower_cpu_kernel(typed_fn, options), options): stages llvm, native
    kernel.launch(grid, block, shmem_bytes, arg_types, args)

Same codegen as the CUDA target (``cujit.codegen.lower_to_llvm``) with other
tables: ``intrinsics`` (the CUDA thread state as hidden parameters, shared memory
as per-block buffers, atomics as ``atomicrmw``), ``libm`` (math), and for kernels
that call ``syncthreads`` or sync the grid, ``coro`` (each CUDA thread an LLVM coroutine),
with ``warp`` for warp functions and block votes (rendezvous in an exchange buffer).
``runner`` adds the compiled loop over blocks and threads, ``engine`` optimises
and JIT-compiles with llvmlite, ``launch`` runs the grid on the host's cores and
``memory`` gives device arrays backed by host memory.
"""

from __future__ import annotations

import dataclasses
import functools

from cujit.targets import Target

__all__ = [
    "CPUKernel",
    "LoweredCPUKernel",
    "build_cpu_kernel",
    "compile_cpu_kernel",
    "cpu_target",
    "lower_cpu_kernel",
]


@functools.cache
def cpu_target(
    barriers: bool, grid_sync: bool = False, warp: bool = False, fastmath: bool = False
) -> Target:
    """The host target; ``barriers=True`` is the coroutine variant for ``syncthreads``,
    ``grid_sync=True`` its variant for kernels that also sync the whole grid,
    ``warp=True`` the one for warp functions and block votes (``warp.py``), whose
    barriers all go through the exchange buffer.  ``fastmath``: the host keeps its
    precise math, but a float32 ``/`` checks no zero divisor in debug mode, as on
    the GPU."""
    from cujit.targets.cpu import coro, engine, extension_check, guard, intrinsics, libm, mma
    from cujit.targets.cpu import warp as warp_functions

    table = dict(intrinsics.INTRINSICS)
    # An extension's LLVM is checked before the JIT takes it (extension_check.py).
    for name in extension_check.EXTENSION_CALLS:
        if name in table:
            table[name] = extension_check.checked(table[name])
    table.update(mma.MMA_INTRINSICS)  # cuda.cp_async, the register packing helpers
    extra = {}
    hidden = intrinsics.HIDDEN_PARAMS
    if barriers:
        table["cuda.syncthreads"] = coro.lower_syncthreads
        extra = {"prologue": coro.coro_prologue, "lower_return": coro.coro_return}
        hidden = coro.CORO_HIDDEN_PARAMS
    if grid_sync:
        table["cuda.grid_sync"] = coro.lower_grid_sync
        hidden = coro.GRID_HIDDEN_PARAMS
    if warp:
        table.update(warp_functions.WARP_INTRINSICS)
        table.update(mma.MMA_WARP_INTRINSICS)  # cuda.mma, ldmatrix, stmatrix
        hidden = warp_functions.WARP_HIDDEN_PARAMS
    return Target(
        name="cpu",
        triple=engine.host_triple(),
        data_layout=engine.host_data_layout(),
        intrinsics=table,
        math=libm.LIBM,
        hidden_params=hidden,
        callee_hidden_params=intrinsics.HIDDEN_PARAMS,  # the thread state, not the coroutine's
        callee_prologue=guard.recursion_prologue,  # the stack guard of recursive functions
        fastmath=fastmath,
        **extra,
    )


@dataclasses.dataclass(frozen=True)
class LoweredCPUKernel:
    """Stage 6's output on the CPU target: the kernel's LLVM module for the host, and
    what lowering chose (the coroutine, grid-sync and warp variants) for ``native``."""

    fn: object  # the typed IR, as lowered (device functions that wait inlined)
    module: object  # llvmlite ir.Module; ``native`` adds the runner to it
    symbol: str
    barriers: bool
    grid_sync: bool
    warp: bool

    def __str__(self) -> str:
        return str(self.module)


def lower_cpu_kernel(typed_fn, options=None) -> LoweredCPUKernel:
    """Stage 6 on the CPU target: typed IR -> the kernel's LLVM module for this host."""
    from cujit.codegen import kernel_symbol, lower_to_llvm
    from cujit.ir import verify
    from cujit.ir.analysis import uses_grid_sync
    from cujit.options import Options
    from cujit.passes.inline import inline_calls
    from cujit.targets.cpu import coro, guard
    from cujit.targets.cpu.warp import uses_warp_functions

    options = options or Options()
    if any(coro.suspends(c) for c in typed_fn.callees):
        # Only the kernel can suspend: device functions that wait become part of it.
        # The pipeline does this in stage 5 already; this is for typed IR from elsewhere.
        typed_fn = inline_calls(typed_fn, coro.suspends, keep_raise=options.debug)
        if options.verify:
            verify(typed_fn)
    warp = uses_warp_functions(typed_fn)
    barriers = warp or coro.uses_barrier(typed_fn)
    grid_sync = uses_grid_sync(typed_fn)
    target = cpu_target(barriers, grid_sync, warp, options.fastmath)
    # In the host's one namespace a kernel called ``sin`` or ``free`` would capture the
    # C library's calls (the GPU's math is ``__nv_*``): prefix the kernel's symbol.
    fn = dataclasses.replace(typed_fn, name=f"cujit_cpu_{typed_fn.name}")
    module = lower_to_llvm(
        fn,
        target,
        debug=options.debug,
        bounds=options.boundscheck is not False,
        index32=options.index32,
    )
    # Ctrl-C reaches a spinning thread at its next loop iteration (guard.py).
    guard.poll_loops(module, list(module.functions))
    return LoweredCPUKernel(typed_fn, module, kernel_symbol(fn), barriers, grid_sync, warp)


def build_cpu_kernel(lowered: LoweredCPUKernel, options=None):
    """The CPU target's last stage: add the compiled grid runner, optimise and JIT."""
    from cujit.codegen.checks import error_sites
    from cujit.ir.analysis import written_arguments
    from cujit.options import Options
    from cujit.targets.cpu import intrinsics, runner
    from cujit.targets.cpu.debug import HostRecord
    from cujit.targets.cpu.engine import JitModule
    from cujit.targets.cpu.launch import CPUKernel

    options = options or Options()
    module, barriers, grid_sync, warp = (
        lowered.module,
        lowered.barriers,
        lowered.grid_sync,
        lowered.warp,
    )
    target = cpu_target(barriers, grid_sync, warp, options.fastmath)
    kernel = module.get_global(lowered.symbol)
    flat = [a.type for a in kernel.args[len(target.hidden_params) :]]  # the ABI's parameters
    size = module.globals.get(intrinsics.STATIC_SHARED_SIZE)
    static_shared = size.initializer.constant if size is not None else 0
    run = runner.build_runner(module, kernel, flat, barriers, grid_sync, static_shared, warp)
    text = str(module)
    jit = JitModule(module, options.opt, text)
    typed_fn = lowered.fn
    kernel = CPUKernel(
        typed_fn.name,
        jit,
        run,
        tuple(p.type for p in typed_fn.args),
        static_shared,
        barriers,
        text,
        grid_sync,
        warp,
    )
    # Read-only arrays are refused where the kernel may store (as the GPU launch does).
    kernel.written = written_arguments(typed_fn)
    kernel.arg_names = tuple(typed_fn.arg_names)
    sites = error_sites(module)
    if sites:  # checks that may fail (bounds, debug mode): read the record after each launch
        kernel.debug_sites = sites
        kernel.debug_record = HostRecord(jit, sites)
    return kernel


def compile_cpu_kernel(typed_fn, options=None):
    """Lower, optimise and JIT the typed IR function ``typed_fn`` for this host."""
    return build_cpu_kernel(lower_cpu_kernel(typed_fn, options), options)


def __getattr__(name):  # CPUKernel without importing llvmlite at package import
    if name == "CPUKernel":
        from cujit.targets.cpu.launch import CPUKernel

        return CPUKernel
    raise AttributeError(name)
