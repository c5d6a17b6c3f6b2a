"""A kernel configured for launch: ``kernel[grid, block, stream, shmem]`` (``LaunchConfig``,
whose call launches through the launchers it keeps) and ``kernel.forall(n)`` (``ForAll``).

The kernel (``cujit.dispatcher.Kernel``) makes and keeps these; this module holds the
per-configuration fast path of a launch and never imports the dispatcher.
"""

from __future__ import annotations

import pickle

from cujit import guards, launchconfig
from cujit.argtypes import fast_typeof
from cujit.diagnostics import api_boundary, hide_internals, user_facing
from cujit.frozen import frozen


@frozen
class ForAll:
    """``kernel.forall(ntasks, tpb, stream, sharedmem)``, waiting for its arguments."""

    kernel: object  # a cujit.dispatcher.Kernel
    ntasks: int
    tpb: int = 0
    stream: object = 0
    sharedmem: int = 0

    @api_boundary
    def __call__(self, *args, **kwargs) -> None:
        if kwargs:
            raise guards.kwargs_error(self.kernel.__name__, self.kernel._argnames, kwargs)
        if self.ntasks == 0:
            return
        tpb = self.tpb or self.kernel._forall_block_size(args, self.stream, self.sharedmem)
        blocks = (self.ntasks + tpb - 1) // tpb
        self.kernel.launch(args, (blocks, 1, 1), (tpb, 1, 1), self.stream, self.sharedmem)


class LaunchConfig:
    """``kernel[grid, block, stream, shmem]``: calling it launches the kernel.

    Made once per configuration (``Kernel._configs``).  The first launch with a new
    kind of arguments takes the general path (``Kernel._launch``) and leaves behind a
    launcher made for exactly this configuration, specialisation and device
    (``runtime.launch.make_launcher``); later launches with the same kinds of
    arguments go through it alone.
    """

    __slots__ = ("block", "grid", "kernel", "launchers", "pre_launch_callbacks", "shmem", "stream")

    def __init__(self, kernel, grid, block, stream=0, shmem: int = 0):
        self.kernel, self.grid, self.block, self.stream, self.shmem = (
            kernel,
            grid,
            block,
            stream,
            shmem,
        )
        self.launchers: list = []  # newest first, a few at most
        # numba's hook: callables(specialisation, launch config) run before each launch.
        self.pre_launch_callbacks: list = []

    # numba's names for the configuration
    dispatcher = property(lambda self: self.kernel)
    griddim = property(lambda self: self.grid)
    blockdim = property(lambda self: self.block)
    sharedmem = property(lambda self: self.shmem)

    @property
    def args(self) -> tuple | None:
        """The arguments of this configuration's launch compiling on this thread (None
        outside such a compilation)."""
        return launchconfig.current_args(self)

    def __reduce__(self):
        if self.pre_launch_callbacks:
            raise pickle.PicklingError(
                "Cannot pickle configured launches with pre-launch callbacks: "
                f"{self!r} has {len(self.pre_launch_callbacks)}"
            )
        return (_configured, (self.kernel, self.grid, self.block, self.stream, self.shmem))

    def __repr__(self) -> str:
        return (
            f"<launch of {self.kernel.__name__}: grid {self.grid}, block {self.block}, "
            f"stream {self.stream!r}, {self.shmem} bytes of dynamic shared memory>"
        )

    def __call__(self, *args, **kwargs) -> None:
        try:  # an API boundary, inline: see api_boundary
            if kwargs:
                raise guards.kwargs_error(self.kernel.__name__, self.kernel._argnames, kwargs)
            kernel = self.kernel
            if kernel.extensions or self.pre_launch_callbacks:  # the general path, always
                return kernel._launch_prepared(
                    args, self.grid, self.block, self.stream, self.shmem, self
                )
            for launcher in self.launchers:
                if launcher(args):
                    return
            made = kernel._launch(args, self.grid, self.block, self.stream, self.shmem, self)
            if made is not None:
                self._remember(args, *made)
        except Exception as error:
            if not user_facing(error):
                raise
            hide_internals(error)  # cujit frames: CUJIT_SHOW_INTERNALS=1
            raise  # bare: adds no frame of this function

    def _remember(self, args, spec, dev: int, fn, context, rt_launch) -> None:
        stream = self.stream
        if not (
            stream is None or (stream.__class__ is int and stream == 0) or hasattr(stream, "cu")
        ):  # only streams whose handle cannot change
            return
        plan = spec.coarse
        launcher = rt_launch.make_launcher(
            fn,
            self.grid if plan is None else plan.launch_grid(spec, self.grid),
            self.block,
            stream,
            self.shmem,
            spec.packer,
            spec.arg_types,
            args,
            dev,
            context.get_context(),
            fast_typeof,
            spec.launcher_code,
            spec.record.passed_mask,
        )
        if plan is not None:  # one selector in front: cujit.coarsen_select
            launcher = plan.selector(self, spec, launcher)
        if launcher is not None:
            del self.launchers[3:]
            self.launchers.insert(0, launcher)


def _configured(kernel, grid, block, stream, shmem) -> LaunchConfig:
    """The receiving end of ``LaunchConfig.__reduce__``."""
    return kernel[grid, block, stream, shmem]
