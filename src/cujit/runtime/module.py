"""Loading cubins and looking up their kernels.

Stage 7 always produces a cubin for one exact ``sm_XY`` (see ``cujit.ptx``),
so loading never involves the driver's PTX JIT.  A :class:`Function` carries
what launch validation needs: the kernel's own thread limit (registers can
lower it below the device's) and its static shared memory.
"""

from __future__ import annotations

import struct
import weakref

from cujit.diagnostics import LaunchError
from cujit.runtime.context import get_context
from cujit.runtime.driver import CudaDriverError, call, get_driver

_NO_BINARY_FOR_GPU = 209
_INVALID_IMAGE = 200


def cubin_arch(image: bytes) -> tuple[int, int] | None:
    """The sm_XY a cubin was built for, read from its ELF header (``e_flags`` bits 8-15)."""
    if len(image) < 52 or image[:4] != b"\x7fELF" or struct.unpack_from("<H", image, 18)[0] != 190:
        return None
    sm = (struct.unpack_from("<I", image, 48)[0] >> 8) & 0xFF
    return sm // 10, sm % 10


class Module:
    """A loaded cubin; unloaded when garbage collected."""

    def __init__(self, image: bytes):
        self.context = get_context()
        try:
            self.handle = call("cuModuleLoadData", image)
        except CudaDriverError as exc:
            if exc.code in (_NO_BINARY_FOR_GPU, _INVALID_IMAGE):
                arch = cubin_arch(image)
                cc = self.context.device.compute_capability
                built = f"sm_{arch[0]}{arch[1]}" if arch else "an unknown target"
                note = f"the cubin is for {built}, the device is sm_{cc[0]}{cc[1]}"
                exc.args = (f"{exc.args[0]}: {note}",)
            raise
        weakref.finalize(self, _unload, self.handle).atexit = False
        self._functions: dict[str, Function] = {}

    def get_function(self, name: str) -> Function:
        fn = self._functions.get(name)
        if fn is None:
            handle = call("cuModuleGetFunction", self.handle, name.encode())
            fn = self._functions[name] = Function(self, handle, name)
        return fn


def _unload(handle) -> None:
    try:
        get_driver().cuModuleUnload(handle)
    except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
        pass


def load_module(image: bytes) -> Module:
    """Load a cubin into the current context."""
    return Module(image)


load_cubin = load_module


class Function:
    """One kernel of a loaded module, with the limits launch checks against."""

    __slots__ = (
        "checked",
        "cooperative",
        "cu_launch",
        "device",
        "handle",
        "local_bytes",
        "max_dynamic_shared",
        "max_threads_per_block",
        "module",
        "name",
        "num_regs",
        "static_shared_bytes",
    )

    def __init__(self, module: Module, handle, name: str):
        drv = get_driver()
        A = drv.CUfunction_attribute
        self.module = module  # keeps the module loaded while the function lives
        self.handle = handle
        self.name = name
        self.device = module.context.device
        self.max_threads_per_block = self._attr(A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        self.num_regs = self._attr(A.CU_FUNC_ATTRIBUTE_NUM_REGS)
        self.static_shared_bytes = self._attr(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        self.local_bytes = self._attr(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        self.max_dynamic_shared = self._attr(A.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        # (grid, block, shared bytes) as passed -> normalised 3-tuples, once validated;
        # lets repeated launches skip the checks (see cujit.runtime.launch).
        self.checked: dict = {}
        self.cu_launch = drv.cuLaunchKernel
        self.cooperative = False

    def make_cooperative(self) -> None:
        """Launch through ``cuLaunchCooperativeKernel`` from now on: the kernel syncs the
        grid, so every block must be resident at once and the driver must give the grid
        its barrier workspace (``cujit.targets.cuda.cg``).  Launch checks then also bound
        the grid (``occupancy.max_cooperative_blocks``), once per launch shape."""
        drv = get_driver()
        cooperative, capturing = drv.cuLaunchCooperativeKernel, drv.cuStreamIsCapturing
        idle = drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE
        name = self.name

        def launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
            err, status = capturing(stream)
            if not err and status != idle:
                raise LaunchError(
                    f"kernel '{name}' syncs the grid and needs a cooperative "
                    "launch, which cujit does not capture into CUDA graphs; "
                    "launch it outside 'with cuda.graph(...)'"
                )
            return cooperative(f, gx, gy, gz, bx, by, bz, shared, stream, params)

        self.cu_launch = launch
        self.cooperative = True

    def _attr(self, which) -> int:
        return call("cuFuncGetAttribute", which, self.handle)

    def ensure_dynamic_shared(self, nbytes: int) -> None:
        """Opt the kernel in to ``nbytes`` of dynamic shared memory where past 48 KiB."""
        if nbytes <= self.max_dynamic_shared:
            return
        drv = get_driver()
        call(
            "cuFuncSetAttribute",
            self.handle,
            drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            nbytes,
        )
        self.max_dynamic_shared = nbytes

    def __repr__(self) -> str:
        return f"<Function {self.name} on {self.device!r}>"
