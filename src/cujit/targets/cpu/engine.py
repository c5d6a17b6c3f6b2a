"""The host JIT: optimise an LLVM module for this machine and load it in-process.

The module is optimised by LLVM's default pipeline through llvmlite's new pass
manager (``PassBuilder``) for the host CPU (its own features, so AVX where
present), then compiled by MCJIT.  The level is at least 1 even when the
options ask for 0: the coroutine passes that split barrier kernels run only in
the optimising pipelines.  Each kernel keeps its own engine alive for as long as
its :class:`~cujit.targets.cpu.launch.CPUKernel` lives.

MCJIT hands the object code it made to the engine's object cache, which ``JitModule``
keeps (``object``) for the disk cache; ``LoadedModule`` loads such code in a later process.

Compiling a kernel leaves next to nothing behind once its CPUKernel is gone
(``tests/test_memory_growth.py``).  The pass pipeline would stay for good:
llvmlite (0.50 here) never frees it, because ``ModulePassManager``'s bases put
``ObjectRef``'s empty ``_dispose`` ahead of the one that deletes it (about 55 KB
per kernel); ``_free_pipeline`` calls the right one.
"""

from __future__ import annotations

import functools

from llvmlite import binding as llvm
from llvmlite import ir as ll

from cujit.targets.cpu import guard


def host_machine() -> llvm.TargetMachine:
    """A new target machine for this process's CPU, with its features (vector units).

    New each time: an MCJIT engine takes ownership of its target machine and
    deletes it with itself, so one machine must never serve two engines.
    """
    _initialise()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=llvm.get_host_cpu_features().flatten(),
        opt=3,
        codemodel="jitdefault",
        jit=True,
    )


@functools.cache
def _initialise() -> None:
    from cujit.targets.cpu import libm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libm.register_symbols()


def host_triple() -> str:
    return llvm.get_process_triple()


@functools.cache
def host_data_layout() -> str:
    return str(host_machine().target_data)


class JitModule:
    """An optimised, loaded module: symbol addresses and the optimised IR text."""

    def __init__(self, module: ll.Module, opt: int, text: str | None = None):
        """``text``: ``str(module)``, where the caller has made it already (printing a
        large kernel's module takes as long as a small kernel's whole compile)."""
        tm = host_machine()
        guard.support()  # the symbols kernels link against (guard.py)
        mod = llvm.parse_assembly(str(module) if text is None else text)
        mod.verify()
        pto = llvm.create_pipeline_tuning_options(speed_level=min(max(opt, 1), 3))
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pipeline = pb.getModulePassManager()
        pipeline.run(mod, pb)
        _free_pipeline(pipeline)
        self.llvm_ir = str(mod)
        self.engine = llvm.create_mcjit_compiler(mod, tm)
        found: list[bytes] = []
        # MCJIT hands over the object code it made: what the disk cache keeps.
        self.engine.set_object_cache(lambda _module, data: found.append(bytes(data)))
        self.engine.finalize_object()
        self.object = found[0] if len(found) == 1 else None

    def address(self, symbol: str) -> int:
        addr = self.engine.get_function_address(symbol)
        if not addr:
            raise AssertionError(f"the JIT has no symbol {symbol!r}")
        return addr


class LoadedModule:
    """Object code made by a ``JitModule`` of an earlier process (the disk cache's CPU
    entry), loaded into a fresh MCJIT engine: no optimisation, no code generation.
    Same interface as ``JitModule``; ``llvm_ir`` is the optimised IR the entry kept."""

    def __init__(self, object_code: bytes, llvm_ir: str):
        from cujit.targets.cpu import elfcheck

        needed = elfcheck.check(object_code, host_triple())  # ValueError, not LLVM's crash
        tm = host_machine()
        guard.support()  # the symbols kernels link against (guard.py)
        missing = [name for name in needed if not _resolvable(name)]
        if missing:  # MCJIT would abort the process on the first of them
            raise LookupError(f"the object code needs symbols this process lacks: {missing}")
        empty = llvm.parse_assembly("")
        empty.triple = host_triple()
        empty.data_layout = str(tm.target_data)
        self.engine = llvm.create_mcjit_compiler(empty, tm)
        self.engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
        self.engine.finalize_object()
        self.llvm_ir = llvm_ir
        self.object = object_code

    def address(self, symbol: str) -> int:
        addr = self.engine.get_function_address(symbol)
        if not addr:
            raise LookupError(f"the loaded object code has no symbol {symbol!r}")
        return addr


def _resolvable(name: str) -> bool:
    """Whether MCJIT can resolve ``name``: a symbol registered with LLVM (``libm``'s
    aliases) or one the process has loaded (the C library's)."""
    import ctypes

    if llvm.address_of_symbol(name):
        return True
    try:
        ctypes.CDLL(None)[name]
    except AttributeError:
        return False
    return True


@functools.cache
def host_identity() -> str:
    """What machine code made here depends on: the triple, the CPU and its features,
    the data layout and llvmlite's LLVM.  The disk cache keys CPU entries by it and
    loads none made under another: object code for another ISA would crash."""
    import llvmlite

    _initialise()
    return (
        f"{host_triple()} cpu={llvm.get_host_cpu_name()} "
        f"features={llvm.get_host_cpu_features().flatten()} "
        f"layout={host_data_layout()} llvmlite={llvmlite.__version__} "
        f"llvm={'.'.join(map(str, llvm.llvm_version_info))}"
    )


def _free_pipeline(pipeline) -> None:
    """Delete a pass pipeline now.  In llvmlite's ``ModulePassManager`` the MRO finds
    ``ObjectRef._dispose`` (which does nothing) before ``NewPassManager._dispose``
    (which deletes the pipeline), so closing it would leak it; call the deleting one
    where it is shadowed, then detach the Python object from the freed pointer."""
    from llvmlite.binding import newpassmanagers

    owner = newpassmanagers.NewPassManager
    if type(pipeline)._dispose is owner._dispose:  # a fixed llvmlite: close() frees it
        pipeline.close()
        return
    owner._dispose(pipeline)
    pipeline.detach()
