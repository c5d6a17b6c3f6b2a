"""Robustness, launches: bad launch configurations, bad arguments, read-only
buffers, and faults inside running kernels on the CPU target (bounds, debug-mode
asserts and division by zero).  Each gives one of cujit's errors (or, for a fault
in a running kernel, the Python exception with the user's line, thread and block),
names no cujit file, and leaves the process able to run a correct kernel."""

from __future__ import annotations

import mmap

import numpy as np
import pytest
from robust_helpers import expect_failure, marked_line, still_works
from robust_kernels import d_assert_in_if, d_assert_message

from cujit import cuda
from cujit.diagnostics import LaunchError


@cuda.jit(target="cpu")
def fill(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i + 0.5


@cuda.jit("void(float64[::1], int32)", target="cpu")
def eager(x, n):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = n


@cuda.jit(device=True)
def dev(x):
    x[0] = 2.0


def data(n=16):
    return np.full(n, -1.0)


# -- launch configurations ----------------------------------------------------------

CONFIGS = [
    ((0, 32), "positive"),
    ((1, 0), "positive"),
    ((-1, 32), "positive"),
    ((1.5, 32), "integers"),
    ((True, 32), "integers"),
    (("1", 32), "integers"),
    ((None, 32), "integers"),
    (((1, 2, 3, 4), 32), "1, 2 or 3 integers"),
    (((), 32), "1, 2 or 3 integers"),
    ((1, 2048), "1024"),
    ((1, (1, 1, 65)), "64"),
    ((1, (32, 32, 2)), "1024"),
    ((2**31, 32), "limit"),
    ((1, 32, 0, -4), ">= 0"),
    ((1, 32, 0, 1 << 20), "shared memory"),
    ((1, 32, "fast"), "must be a stream"),
    ((1, 32, object()), "must be a stream"),
    ((1, 32, -1), "negative"),
    ((1, 32, 1.5), "must be a stream"),
    ((1, 32, [0]), "must be a stream"),
    ((1, 32, True), "must be a stream"),
    ((1,), "kernel[grid, block]"),
    ((1, 2, 0, 0, 5), "kernel[grid, block]"),
]


@pytest.mark.parametrize("config,words", CONFIGS, ids=[repr(c)[:28] for c, _ in CONFIGS])
def test_bad_launch_configuration(config, words):
    expect_failure(lambda: fill[config](data()), LaunchError, None, words)


def test_a_single_int_configuration():
    expect_failure(lambda: fill[5](data()), LaunchError, None, "kernel[grid, block]")


# -- arguments ----------------------------------------------------------------------


def _readonly():
    a = data()
    a.flags.writeable = False
    return a


def _bytes_backed():
    return np.frombuffer(bytes(128), np.float64)


def _memmap(tmp_path):
    path = tmp_path / "ro.bin"
    np.full(16, 3.0).tofile(path)
    return np.memmap(path, np.float64, mode="r")


ARGS = [
    (lambda: fill[1, 16](), "takes 1 arguments, 0 given"),
    (lambda: fill[1, 16](data(), data()), "takes 1 arguments, 2 given"),
    (lambda: fill[1, 16](x=data()), "keyword arguments (x)"),
    (lambda: fill[1, 16](data(), x=data()), "positional arguments only"),
    (lambda: fill[1, 16](None), "None"),
    (lambda: fill[1, 16]("text"), "str"),
    (lambda: fill[1, 16]({"a": 1}), "dict"),
    (lambda: fill[1, 16](object()), "object"),
    (lambda: fill[1, 16](fill), "kernels and device functions are not values"),
    (lambda: fill[1, 16](dev), "kernels and device functions are not values"),
    (lambda: fill(data()), "needs a launch configuration"),
    (lambda: dev[1, 32](data()), "device function"),
    (lambda: dev[1](data()), "cannot be launched"),
    (lambda: eager[1, 16](data(), 2**40), "cannot hold"),
    (lambda: eager[1, 16](data().astype(np.float32), 1), "compiled for"),
    (lambda: eager[1, 16](np.zeros((4, 4)), 1), "compiled for"),
    (lambda: eager[1, 16](data()[::2], 1), "compiled for"),
    (lambda: fill[1, 16](_readonly()), "read-only"),
    (lambda: fill[1, 16](_bytes_backed()), "read-only"),
]


@pytest.mark.parametrize("run,words", ARGS, ids=[w[:24] for _, w in ARGS])
def test_bad_arguments(run, words):
    expect_failure(run, Exception, None, words)


def test_errors_are_cujit_errors():
    from cujit.diagnostics import CujitError

    for run, _ in ARGS:
        with pytest.raises(CujitError):
            run()


# -- read-only memory is never written ------------------------------------------------


@cuda.jit(target="cpu")
def add_into(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] += src[i]


@cuda.jit(target="cpu")
def into_pair(pair):
    pair[1][0] = 5.0


def test_bytes_object_stays_unchanged():
    raw = bytes(np.arange(16.0).tobytes())
    view = np.frombuffer(raw, np.float64)
    expect_failure(lambda: add_into[1, 16](data(), view), LaunchError, None, "'dst'")
    assert raw == np.arange(16.0).tobytes()


def test_memmap_opened_read_only_is_refused(tmp_path):
    ro = _memmap(tmp_path)
    expect_failure(lambda: add_into[1, 16](data(), ro), LaunchError, None, "read-only")
    assert (np.fromfile(tmp_path / "ro.bin") == 3.0).all()
    src = data()
    out = np.memmap(tmp_path / "ro.bin", np.float64, mode="r+")  # writeable: allowed
    add_into[1, 16](ro, out)  # read from the read-only map: allowed
    np.testing.assert_array_equal(np.asarray(out), 6.0)
    assert src[0] == -1.0


def test_read_only_inputs_are_fine_where_only_read():
    src = np.arange(16.0)
    src.flags.writeable = False
    dst = np.ones(16)
    add_into[1, 16](src, dst)
    np.testing.assert_array_equal(dst, np.arange(16.0) + 1)


def test_read_only_array_inside_a_tuple_argument():
    ro = _readonly()
    expect_failure(lambda: into_pair[1, 1]((data(), ro)), LaunchError, None, "read-only")
    assert (ro == -1.0).all()


def test_mmap_of_a_read_only_file_mapping(tmp_path):
    path = tmp_path / "m.bin"
    path.write_bytes(np.arange(16.0).tobytes())
    with open(path, "rb") as fh:  # the map outlives the file object; the view keeps it
        view = np.frombuffer(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), np.float64)
    expect_failure(lambda: add_into[1, 16](data(), view), LaunchError, None, "read-only")
    np.testing.assert_array_equal(view, np.arange(16.0))


# -- faults in running kernels: bounds (on by default on the CPU target) --------------


@cuda.jit(target="cpu")
def oob_write(x):
    i = cuda.grid(1)
    x[i] = 1.0  # <-


@cuda.jit(target="cpu")
def oob_read(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i + 3]  # <-


@cuda.jit(target="cpu")
def oob_negative(x):
    x[-x.size - 1] = 1.0  # <-


@cuda.jit(target="cpu")
def oob_axis1(a):
    i, j = cuda.grid(2)
    if i < a.shape[0]:
        a[i, j] = 1.0  # <-


@cuda.jit(device=True)
def _store(x, i):
    x[i] = 7.0  # <-


@cuda.jit(target="cpu")
def oob_in_device_function(x):
    _store(x, cuda.grid(1))


@cuda.jit(target="cpu")
def oob_with_barrier(x):
    buf = cuda.shared.array(8, np.float64)
    t = cuda.threadIdx.x
    buf[t] = 1.0  # <-
    cuda.syncthreads()
    x[0] = buf[0]


@cuda.jit(target="cpu")
def oob_local(x):
    loc = cuda.local.array(4, np.float64)
    loc[cuda.threadIdx.x] = 1.0  # <-
    x[0] = loc[0]


@cuda.jit(target="cpu")
def oob_big_grid(x):
    i = cuda.grid(1)
    x[i] = 2.0  # <-


BOUNDS = [
    (lambda: oob_write[1, 16](np.zeros(8)), oob_write, "index 8 is out of bounds", "tid=[0, 0, 8]"),
    (lambda: oob_read[1, 8](np.zeros(8), np.zeros(8)), oob_read, "index 8 is out", "tid=[0, 0, 5]"),
    (lambda: oob_negative[1, 1](np.zeros(8)), oob_negative, "index -9", "tid=[0, 0, 0]"),
    (
        lambda: oob_axis1[(1, 1), (4, 8)](np.zeros((4, 5))),
        oob_axis1,
        "axis 1 with size 5",
        "tid=[0, 5, 0]",
    ),
    (lambda: oob_in_device_function[1, 16](np.zeros(4)), _store, "index 4", "tid=[0, 0, 4]"),
    (lambda: oob_with_barrier[1, 16](np.zeros(1)), oob_with_barrier, "index 8", "tid=[0, 0, 8]"),
    (lambda: oob_local[1, 8](np.zeros(1)), oob_local, "index 4", "tid=[0, 0, 4]"),
    (
        lambda: oob_big_grid[64, 1024](np.zeros(64 * 1024 - 1)),
        oob_big_grid,
        "index 65535",
        "ctaid=[0, 0, 63]",
    ),
]


@pytest.mark.parametrize("run,fn,words,where", BOUNDS, ids=[b[1].__name__ for b in BOUNDS])
def test_out_of_bounds_is_an_index_error(run, fn, words, where):
    err = expect_failure(run, IndexError, (fn.py_func.__code__.co_filename, marked_line(fn)), words)
    assert where in str(err)
    assert err.kernel_failure.loc.line == marked_line(fn)


def test_in_bounds_writes_before_the_fault_are_kept_and_memory_is_intact():
    guard = np.full(32, 9.0)
    x = guard[8:16]  # a view: a stray store would land in guard[16:]
    with pytest.raises(IndexError):
        oob_write[1, 64](x)
    np.testing.assert_array_equal(guard[:8], 9.0)
    np.testing.assert_array_equal(guard[16:], 9.0)
    np.testing.assert_array_equal(x, 1.0)


def test_boundscheck_false_turns_the_checks_off():
    unchecked = cuda.jit(oob_write.py_func, target="cpu", boundscheck=False)
    x = np.zeros(64)
    unchecked[1, 32](x[:32])  # in bounds of its view: runs, no error reported
    np.testing.assert_array_equal(x[:32], 1.0)
    with pytest.raises(TypeError):
        cuda.jit(oob_write.py_func, target="cpu", boundscheck="yes")


def test_environment_switch_turns_the_checks_off(monkeypatch):
    monkeypatch.setenv("CUJIT_BOUNDSCHECK", "0")
    k = cuda.jit(oob_write.py_func, target="cpu")
    assert k._base_options.boundscheck is False
    monkeypatch.setenv("CUJIT_BOUNDSCHECK", "1")
    assert cuda.jit(oob_write.py_func, target="cpu")._base_options.boundscheck is True


# -- debug mode: assert, raise, integer division by zero -------------------------------


def d_floordiv(x, d):
    i = cuda.grid(1)
    x[i] = i // d  # <-


def d_mod(x, d):
    i = cuda.grid(1)
    x[i] = i % (d - d)  # <-


@cuda.jit(device=True)
def _divide(a, b):
    return a // b  # <-


def d_div_in_device(x, d):
    x[cuda.grid(1)] = _divide(7, d)


def d_raise(x):
    if cuda.grid(1) == 1:
        raise ValueError("bad value")  # <-


DEBUG = [
    (d_assert_in_if, (), 8, AssertionError, "tid=[0, 0, 3]", d_assert_in_if),
    (d_assert_message, (), 4, AssertionError, "i too big", d_assert_message),
    (d_floordiv, (0,), 4, ZeroDivisionError, "division or modulo by zero", d_floordiv),
    (d_mod, (5,), 4, ZeroDivisionError, "division or modulo by zero", d_mod),
    (d_div_in_device, (0,), 4, ZeroDivisionError, "by zero", _divide),
    (d_raise, (), 4, ValueError, "bad value", d_raise),
]


@pytest.mark.parametrize("fn,extra,n,exc,words,site", DEBUG, ids=[d[0].__name__ for d in DEBUG])
def test_debug_mode_reports(fn, extra, n, exc, words, site):
    kernel = cuda.jit(fn, target="cpu", debug=True)
    site_fn = getattr(site, "py_func", site)
    expect_failure(
        lambda: kernel[1, n](np.zeros(n), *extra),
        exc,
        (site_fn.__code__.co_filename, marked_line(site_fn)),
        words,
    )


def test_division_by_zero_outside_debug_mode_gives_numpy_zero():
    x = np.full(4, -1.0)
    cuda.jit(d_floordiv, target="cpu")[1, 4](x, 0)
    np.testing.assert_array_equal(x, 0.0)  # NumPy's integer answer, no report
    ok = np.full(4, -1.0)
    cuda.jit(d_floordiv, target="cpu", debug=True)[1, 4](ok, 2)
    np.testing.assert_array_equal(ok, [0, 0, 1, 1])
    still_works(fresh=True)


def test_forall_and_launch_refuse_bad_streams_and_keywords():
    expect_failure(lambda: fill.forall(16)(x=data()), LaunchError, None, "keyword arguments")
    expect_failure(
        lambda: fill.forall(16, stream="s")(data()), LaunchError, None, "must be a stream"
    )
    expect_failure(
        lambda: fill.launch((data(),), (1, 1, 1), (16, 1, 1), object()),
        LaunchError,
        None,
        "must be a stream",
    )
    expect_failure(lambda: fill(x=data()), LaunchError, None, "needs a launch configuration")
    x = data()
    fill.forall(16)(x)
    np.testing.assert_array_equal(x, np.arange(16) + 0.5)
