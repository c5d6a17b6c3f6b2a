"""Launch-selected variants compiled in a thread (cujit/variants.py): the first launch
that could take one runs the kernel as written and compiles nothing; the second runs it
as written too and, once enqueued (``start_deferred``, as the dispatcher calls it),
starts the variant's compile in a thread; the third waits for it; a failed compile falls
back with a warning.  On the CPU target the second launch compiles it in the
launching thread; with the knob off the first does, on either target.
GPU-target kernels are compiled here without a GPU (stages 1-7); ``Plan.select`` is
what a launch calls, so no device is needed."""

import threading
import warnings

import numpy as np
import pytest
from test_index32 import stencil

from cujit import config, cuda, variants
from cujit.diagnostics import NumbaPerformanceWarning
from cujit.types import typeof


def saxpy(out, a, x, y, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = a * x[i] + y[i]


def planned(fn, args, **flags):
    """A GPU-target kernel of ``fn`` compiled for ``args``: (kernel, plain spec, plan)."""
    k = cuda.jit(**flags)(fn)
    spec = k.compile(tuple(typeof(a) for a in args))
    assert spec.coarse is not None, "the kernel should have a launch-selected variant"
    return k, spec, spec.coarse


def saxpy_args(n=4096):
    out = np.zeros(n, np.float32)
    x = np.arange(n, dtype=np.float32)
    return (out, np.float32(2.0), x, x + 1, n)


def test_a_kernel_launched_once_compiles_no_variant(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    chosen, grid = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    assert chosen is spec and grid == (16, 1, 1)  # the kernel as written
    variants.start_deferred()  # what the dispatcher does after the launch
    assert plan.asked and plan.pending is None and plan.wide is None
    assert not [t for t in threading.enumerate() if t.name.startswith("cujit-variant-saxpy")]


def test_the_second_launch_starts_the_compile_and_the_third_takes_it(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    assert plan.select(spec, args, (16, 1, 1), (256, 1, 1)) == (spec, (16, 1, 1))
    chosen, grid = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    assert chosen is spec and grid == (16, 1, 1)  # the second runs as written too
    pending = plan.pending
    assert pending is not None and pending.thread.name.startswith("cujit-variant-saxpy")
    assert not pending.started and pending in variants.deferred  # not before the launch
    variants.start_deferred()  # after it
    assert pending.started and pending not in variants.deferred
    assert not pending.thread.daemon  # an exiting process waits for it
    # The third launch waits for the thread and takes the variant, on a grid k times
    # smaller; so does every later one, without a second compile.
    chosen, grid = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    assert chosen is plan.wide and chosen is not spec
    assert not pending.thread.is_alive() and pending.error is None
    assert grid == (-(-16 // plan.k), 1, 1) and plan.k > 1
    assert ".v4.f32" in chosen.result.ptx and ".v4.f32" not in spec.result.ptx  # 16-byte
    again, _ = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    assert again is chosen and plan.pending is pending


def test_a_compile_whose_launch_failed_starts_when_a_launch_waits(monkeypatch):
    # The second launch asked for the compile and then failed before start_deferred: the
    # third starts the compile itself and waits for it.
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    pending = plan.pending
    try:
        assert not pending.started
        chosen, _ = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
        assert pending.started and chosen is plan.wide and chosen is not spec
    finally:
        variants.start_deferred()  # leaves nothing waiting for the next test
    assert not variants.deferred


def test_a_launch_the_facts_refuse_starts_no_compile(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    # The grid does not cover n: the variant's threads would not be the kernel's.
    assert plan.select(spec, args, (2, 1, 1), (256, 1, 1)) == (spec, (2, 1, 1))
    assert plan.pending is None and plan.wide is None


def test_the_index32_variant_compiles_in_a_thread_too(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = (np.ones((64, 64), np.float32), np.zeros((64, 64), np.float32))
    _, spec, plan = planned(stencil, args)
    from cujit import index_width

    assert isinstance(plan, index_width.Plan)
    assert plan.select(spec, args, (4, 4), (16, 16)) == (spec, (4, 4))
    assert plan.pending is None  # launched once: nothing compiles
    assert plan.select(spec, args, (4, 4), (16, 16)) == (spec, (4, 4))
    assert plan.pending is not None
    variants.start_deferred()
    chosen, grid = plan.select(spec, args, (4, 4), (16, 16))
    assert chosen is plan.wide and chosen is not spec and grid == (4, 4)
    assert chosen.result.ptx != spec.result.ptx  # its int32 index arithmetic


def test_knob_off_compiles_before_the_first_launch(monkeypatch):
    monkeypatch.setenv(config.VARIANTS_LAZY.name, "0")
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    chosen, _ = plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    assert chosen is plan.wide and chosen is not spec and plan.pending is None


def test_cpu_target_compiles_at_the_second_launch_in_the_launching_thread(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args(1000)
    k, spec, plan = planned(saxpy, args, target="cpu")
    assert not variants.background(k)
    assert plan.select(spec, args, (8, 1, 1), (128, 1, 1)) == (spec, (8, 1, 1))
    assert plan.wide is None and plan.pending is None  # launched once: nothing more
    chosen, _ = plan.select(spec, args, (8, 1, 1), (128, 1, 1))
    assert chosen is plan.wide and chosen is not spec and plan.pending is None
    out, a, x, y, _ = args
    for _ in range(3):  # plain, then the variant: both against NumPy
        out[:] = np.nan
        k[8, 128](*args)
        np.testing.assert_array_equal(out, a * x + y)


def test_cpu_target_launched_once_runs_as_written(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args(1000)
    k = cuda.jit(target="cpu")(saxpy)
    k[8, 128](*args)
    (spec,) = k.overloads.values()
    assert spec.coarse is not None and spec.coarse.wide is None
    out, a, x, y, _ = args
    np.testing.assert_array_equal(out, a * x + y)
    k[8, 128](*args)  # the second launch compiles the variant and runs it
    assert spec.coarse.wide is not None


def test_knob_off_compiles_before_the_first_launch_on_the_cpu_too(monkeypatch):
    monkeypatch.setenv(config.VARIANTS_LAZY.name, "0")
    args = saxpy_args(1000)
    _, spec, plan = planned(saxpy, args, target="cpu")
    chosen, _ = plan.select(spec, args, (8, 1, 1), (128, 1, 1))
    assert chosen is plan.wide and chosen is not spec


def test_a_failed_variant_falls_back_with_one_warning(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)

    def broken(plan, options):
        raise RuntimeError("libNVVM said no")

    monkeypatch.setattr(variants, "compile_variant", broken)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    assert plan.select(spec, args, (16, 1, 1), (256, 1, 1))[0] is spec
    assert plan.select(spec, args, (16, 1, 1), (256, 1, 1))[0] is spec
    variants.start_deferred()
    with pytest.warns(NumbaPerformanceWarning, match=r"'saxpy'.*libNVVM said no"):
        assert plan.select(spec, args, (16, 1, 1), (256, 1, 1)) == (spec, (16, 1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once only
        assert plan.select(spec, args, (16, 1, 1), (256, 1, 1)) == (spec, (16, 1, 1))
    assert plan.wide is None


def test_concurrent_launches_start_one_compile(monkeypatch):
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    starts = []
    real = variants.compile_variant

    def counted(plan, options):
        starts.append(threading.current_thread().name)
        return real(plan, options)

    monkeypatch.setattr(variants, "compile_variant", counted)
    args = saxpy_args()
    _, spec, plan = planned(saxpy, args)
    got = []
    barrier = threading.Barrier(4)

    errors = []

    def launch():
        barrier.wait()
        try:
            got.append(plan.select(spec, args, (16, 1, 1), (256, 1, 1))[0])
        except BaseException as exc:  # a launch thread's error fails the test
            errors.append(exc)

    threads = [threading.Thread(target=launch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    variants.start_deferred()
    variants.wait(plan)
    assert not errors and len(starts) == 1 and plan.wide is not None
    # One launch came first and compiled nothing, one asked for the compile; both ran
    # plain.  The other two waited for it (starting it, as no launch had yet).
    assert got.count(spec) == 2 and got.count(plan.wide) == 2


def test_the_variants_options_are_read_in_the_launching_thread(monkeypatch):
    # A thread of its own has no current CUDA context: the architecture (of the device the
    # launching thread uses) must come from the launch, not from the compile's thread.
    monkeypatch.delenv(config.VARIANTS_LAZY.name, raising=False)
    args = saxpy_args()
    k, spec, plan = planned(saxpy, args)
    readers = []
    real = type(k)._options

    def options(self):
        readers.append(threading.current_thread())
        return real(self)

    monkeypatch.setattr(type(k), "_options", options)
    plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    plan.select(spec, args, (16, 1, 1), (256, 1, 1))
    variants.start_deferred()
    variants.wait(plan)
    assert plan.wide is not None and readers == [threading.current_thread()]
