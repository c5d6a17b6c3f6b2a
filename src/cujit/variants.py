"""Compiling a kernel's launch-selected variant: at first need, in a thread on the GPU.

A specialisation with a plan (``cujit.coarsen.Plan``, ``cujit.index_width.Plan``) has
one variant, the kernel compiled again with other ``Options`` (``coarsen=k``,
``index32=True``), taken by launches whose facts allow it.  Nothing compiles it until a
launch could take it.  That launch then:

- on the GPU target with ``CUJIT_VARIANTS_BACKGROUND`` on (the default), starts its
  compile in a thread of its own and runs the kernel as written;
- otherwise (the knob off, or the CPU target, whose LLVM JIT shares one context between
  threads) compiles it first and runs it.

The next launch that could take it waits for the thread, so from the second such launch
on a kernel runs its variant exactly as it would have from the first.  A kernel launched
once pays its own compile only.  libNVVM and nvJitLink compile distinct programs in
separate threads safely, and cuda.bindings lets go of the GIL while they work: the
variant's back end runs beside the first launch and whatever the process does next.
The thread is not a daemon, so a process that ends meanwhile waits for it to finish
rather than stopping the toolchain mid-call.

A variant whose compile fails in the thread leaves the kernel's launches on the kernel
as written, with one ``NumbaPerformanceWarning`` naming the kernel and the error.  Compiled before
the launch, its error is raised there, as any compile's.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings

from cujit import config

_lock = threading.Lock()  # two launches of one kernel at once start one compile


class _Pending:
    """A variant compiling in its thread."""

    def __init__(self, plan, options):
        self.error: BaseException | None = None
        self.warned = False
        name = f"cujit-variant-{plan.kernel.__name__}"
        self.thread = threading.Thread(target=self._run, args=(plan, options), name=name)

    def _run(self, plan, options) -> None:
        try:
            compile_variant(plan, options)
        except BaseException as exc:  # noqa: BLE001 -- reported by the next launch that waits
            self.error = exc


def background(kernel) -> bool:
    """Whether ``kernel``'s variants compile in a thread."""
    return kernel.target == "cuda" and config.VARIANTS_BACKGROUND.get()


def variant(plan, **changes):
    """``plan``'s variant for a launch whose facts allow it: its Specialization, or None
    where this launch runs the kernel as written (its compile has just started in a
    thread, or failed there)."""
    wide = plan.wide
    if wide is not None:
        return wide
    pending = plan.pending
    if pending is None:
        # The options (the architecture of the launching thread's device among them) are
        # read here: a thread of its own has no current context.
        options = dataclasses.replace(plan.kernel._options(), **changes)
        if not background(plan.kernel):
            return compile_variant(plan, options)
        with _lock:
            if plan.pending is None:
                started = _Pending(plan, options)
                started.thread.start()
                plan.pending = started  # seen without the lock: started before it is seen
                return None
        pending = plan.pending
    pending.thread.join()
    if plan.wide is None and pending.error is not None and not pending.warned:
        pending.warned = True
        from cujit.diagnostics import NumbaPerformanceWarning

        err = pending.error
        warnings.warn(
            f"kernel {plan.kernel.__name__!r}: its launch-selected variant did not compile "
            f"({type(err).__name__}: {err}); its launches run the kernel as written",
            NumbaPerformanceWarning,
            stacklevel=4,
        )
    return plan.wide


def wait(plan) -> None:
    """Wait for ``plan``'s variant compiling in a thread, if one is (for inspection)."""
    pending = plan.pending
    if pending is not None and pending.thread is not threading.current_thread():
        pending.thread.join()


def compile_variant(plan, options):
    """Compile ``plan``'s kernel for its plain specialisation's argument types with
    ``options``, through the disk cache where the kernel uses it; the result becomes
    ``plan.wide``, a Specialization whose ``coarse`` is ``plan``."""
    from cujit.pipeline import compile_kernel

    kernel, types = plan.kernel, plan.plain.arg_types
    if (kernel.cache or config.CACHE.get()) and not options.debug:
        from cujit.cache import compile_cached

        result = compile_cached(kernel.py_func, types, options)
    else:
        result = compile_kernel(kernel.py_func, types, options)
    record = result.record
    make = type(plan.plain)  # the dispatcher's Specialization
    wide = make(types, result, record, record.param_kinds(types), {})
    wide.coarse = plan
    plan.wide = wide
    return wide
