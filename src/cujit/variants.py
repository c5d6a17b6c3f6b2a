"""Compiling a kernel's launch-selected variant once the kernel is launched again.

A specialisation with a plan (``cujit.coarsen.Plan``, ``cujit.index_width.Plan``) has
one variant, the kernel compiled again with other ``Options`` (``coarsen=k``,
``index32=True``), taken by launches whose facts allow it.  With ``CUJIT_VARIANTS_LAZY``
on (the default) the first launch that could take it runs the kernel as written and
compiles nothing: a kernel launched once pays its own compile only (on the CPU target
the variant's compile costs about twice the kernel's own), and nothing competes with it
for the GIL or the CPU.  Then:

- on the GPU target the second such launch runs the kernel as written too, and once it
  is enqueued (``start_deferred``, which the dispatcher calls after each launch that
  asked for one) the variant's compile starts in a thread of its own.  The third waits
  for that thread, and from then on every such launch runs the variant;
- on the CPU target, whose LLVM JIT shares one context between threads, the second
  such launch compiles the variant in the launching thread and runs it.

With the knob off the first such launch compiles the variant and runs it, on either
target.

libNVVM and nvJitLink compile distinct programs in separate threads safely, and
cuda.bindings lets go of the GIL while they work: the variant's back end runs beside
the launches and whatever the process does next.  The thread is not a daemon, so a
process that ends meanwhile waits for it to finish rather than stopping the toolchain
mid-call.  A compile asked for and not yet started (its launch failed) starts when the
next launch starts those waiting, or when a launch waits for it.

A variant whose compile fails in the thread leaves the kernel's launches on the kernel
as written, with one ``NumbaPerformanceWarning`` naming the kernel and the error.  Compiled in
the launching thread, its error is raised there, as any compile's.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings

from cujit import config, forksafe

_lock = forksafe.renewed(threading.Lock())  # two launches of one kernel at once start one compile
deferred: list = []  # compiles asked for by launches, started once those are enqueued


class _Pending:
    """A variant compiling in its thread."""

    def __init__(self, plan, options):
        self.error: BaseException | None = None
        self.warned = False
        self.started = False
        name = f"cujit-variant-{plan.kernel.__name__}"
        self.thread = threading.Thread(target=self._run, args=(plan, options), name=name)

    def _run(self, plan, options) -> None:
        try:
            compile_variant(plan, options)
        except BaseException as exc:  # noqa: BLE001 -- reported by the next launch that waits
            self.error = exc

    def start(self) -> None:
        with _lock:
            if self.started:
                return
            self.started = True
            self.thread.start()

    def join(self) -> None:
        self.start()  # not started yet (its launch failed): now, and wait for it
        self.thread.join()


def start_deferred() -> None:
    """Start the variant compiles that launches asked for (after those launches)."""
    while deferred:
        try:
            pending = deferred.pop()
        except IndexError:  # another thread took the last one
            return
        pending.start()


def background(kernel) -> bool:
    """Whether ``kernel``'s variants compile in a thread."""
    return kernel.target == "cuda" and config.VARIANTS_LAZY.get()


def _launched_before(plan) -> bool:
    """Whether a launch that could take ``plan``'s variant came before this one (and
    note that one has now)."""
    if plan.asked:
        return True
    plan.asked = True
    return False


def variant(plan, **changes):
    """``plan``'s variant for a launch whose facts allow it: its Specialization, or None
    where this launch runs the kernel as written (the first such launch, the second,
    whose launch starts the compile, or any after a failed one)."""
    wide = plan.wide
    if wide is not None:
        return wide
    if plan.pending is None:
        if not config.VARIANTS_LAZY.get():
            return compile_variant(plan, _options(plan, changes))
        if not background(plan.kernel):  # the CPU target: later, in the launching thread
            if not _launched_before(plan):
                return None
            return compile_variant(plan, _options(plan, changes))
        with _lock:
            if not _launched_before(plan):  # launched once: nothing compiles yet
                return None
            if plan.pending is None:
                pending = _Pending(plan, _options(plan, changes))
                plan.pending = pending  # seen without the lock: set after it is whole
                deferred.append(pending)
                return None
    pending = plan.pending
    pending.join()
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


def _options(plan, changes: dict):
    """The variant's options.  Read in the launching thread: the architecture is its
    device's, and a thread of its own has no current context."""
    return dataclasses.replace(plan.kernel._options(), **changes)


def wait(plan) -> None:
    """Wait for ``plan``'s variant compiling in a thread, if one is (for inspection)."""
    pending = plan.pending
    if pending is not None and pending.thread is not threading.current_thread():
        pending.join()


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
    wide.let_go()  # as the kernel's own specialisation does
    wide.coarse = plan
    plan.wide = wide
    return wide
