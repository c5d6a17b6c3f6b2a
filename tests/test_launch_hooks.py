"""numba's launch hooks on cujit's kernels: extensions and argument hints
(cujit/arghints.py), pre-launch callbacks, the launch configuration current during a
compilation (cujit/launchconfig.py), pickling of kernels and configurations, the
ints a launch takes as bit patterns, and numba's jit-option checks and warnings
(cujit/jit_options.py).  On the CPU target, where the host arrays are the kernel's."""

from __future__ import annotations

import pickle
import threading
import warnings

import numpy as np
import pytest

from cujit import config, cuda
from cujit.arghints import wrap_arg
from cujit.cuda import launchconfig
from cujit.cuda.errors import NumbaInvalidConfigWarning, NumbaPerformanceWarning


def set_to_three(arr):
    arr[0] = 3


def _jit(fn=set_to_three, **kw):
    return cuda.jit(target="cpu", **kw)(fn)


class CopyIn:
    """An extension making every argument ``cuda.In`` and counting its calls."""

    def __init__(self):
        self.seen, self.finished = [], 0

    def prepare_args(self, ty, val, stream, retr):
        self.seen.append(str(ty))
        retr.append(self._finish)
        return ty, wrap_arg(val, default=cuda.In)

    def _finish(self):
        self.finished += 1


@pytest.mark.parametrize(
    "wrap,expected",
    [(cuda.In, 0), (cuda.InOut, 3), (cuda.Out, 3), (lambda a: a, 3)],
    ids=["In", "InOut", "Out", "plain"],
)
def test_argument_hints(wrap, expected):
    k = _jit()
    host = np.zeros(1, np.int64)
    k[1, 1](wrap(host))
    assert host[0] == expected


def test_extensions_see_each_argument_and_finish_after_the_launch():
    k = _jit()
    ext = CopyIn()
    k.extensions.append(ext)
    host = np.zeros(1, np.int64)
    k[1, 1](host)
    k[1, 1](host)
    assert host[0] == 0  # In: the kernel's store never came back
    assert ext.seen == ["array(int64, 1d, C)"] * 2 and ext.finished == 2
    k.extensions.clear()
    k[1, 1](host)
    assert host[0] == 3


def test_extensions_given_to_jit():
    ext = CopyIn()
    k = cuda.jit(target="cpu", extensions=[ext])(set_to_three)
    host = np.zeros(1, np.int64)
    k[1, 1](host)
    assert host[0] == 0 and ext.finished == 1


def test_pre_launch_callbacks_run_before_each_launch():
    k = _jit()
    cfg = k[2, 4]
    calls = []
    cfg.pre_launch_callbacks.append(lambda spec, c: calls.append((spec.arg_types, c.griddim)))
    host = np.zeros(1, np.int64)
    cfg(host)
    cfg(host)
    assert host[0] == 3
    assert [c[1] for c in calls] == [(2, 1, 1)] * 2
    assert str(calls[0][0][0]) == "array(int64, 1d, C)"
    with pytest.raises(pickle.PicklingError, match="pre-launch callbacks"):
        pickle.dumps(cfg)


def test_the_launch_config_is_current_while_a_launch_compiles():
    k = _jit()
    seen = {}
    original = k._compile_for_args

    def wrapped(*args):
        cfg = launchconfig.ensure_current_launch_config()
        seen.update(kernel=cfg.dispatcher, grid=cfg.griddim, block=cfg.blockdim, args=cfg.args)
        cfg.dispatcher.mark_launch_config_sensitive()
        return original(*args)

    k._compile_for_args = wrapped
    host = np.zeros(1, np.int64)
    cfg = k[1, (2, 3)]
    cfg(host)
    assert seen["kernel"] is k and seen["grid"] == (1, 1, 1) and seen["block"] == (2, 3, 1)
    assert seen["args"][0] is host
    assert launchconfig.current_launch_config() is None and cfg.args is None
    assert next(iter(k.overloads.values())).launch_config_sensitive
    with pytest.raises(RuntimeError):
        launchconfig.ensure_current_launch_config()
    with pytest.raises(RuntimeError, match="while a launch"):
        k.mark_launch_config_sensitive()


def test_capture_compile_config_restores_the_method():
    k = _jit()
    with launchconfig.capture_compile_config(k) as captured:
        k[1, 1](np.zeros(1, np.int64))
    assert captured["config"].dispatcher is k
    assert "_compile_for_args" not in k.__dict__


def test_each_thread_sees_its_own_launch():
    k = _jit()
    cfg = k[1, 1]
    barrier, seen = threading.Barrier(2), []
    original = k._compile_for_args

    def wrapped(*args):
        barrier.wait(timeout=30)  # both compilations under way at once
        seen.append(id(launchconfig.ensure_current_launch_config().args[0]))
        return original(*args)

    k._compile_for_args = wrapped
    arrays = [np.zeros(1, np.int64), np.zeros(1, np.int64)]
    threads = [threading.Thread(target=cfg, args=(a,)) for a in arrays]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert set(seen) == {id(a) for a in arrays}
    assert [a[0] for a in arrays] == [3, 3]


def test_local_kernels_and_configurations_pickle():
    # A local function's code travels by value through cloudpickle (cujit.pickling),
    # which the dask extra brings; without it only importable kernels pickle.
    pytest.importorskip("cloudpickle")

    @cuda.jit(device=True)
    def inner(a):
        return a + 1

    @cuda.jit(target="cpu")
    def bump(arr):
        arr[0] = inner(arr[0])

    arr = np.array([100])
    again = pickle.loads(pickle.dumps(bump))
    again[1, 1](arr)
    assert arr[0] == 101
    cfg = pickle.loads(pickle.dumps(bump[5, 8]))
    assert cfg.griddim == (5, 1, 1) and cfg.blockdim == (8, 1, 1) and cfg.dispatcher is bump
    pickle.loads(pickle.dumps(bump[1, 1]))(arr)
    assert arr[0] == 102


def test_ints_of_the_parameters_bits_are_taken_as_those_bits():
    @cuda.jit("void(int32, int64[::1])", target="cpu")
    def store(n, out):
        out[0] = n

    out = np.zeros(1, np.int64)
    store[1, 1](0xFFFFFFFF, out)
    assert out[0] == -1
    store[1, 1](0x80000000, out)
    assert out[0] == -(2**31)


def test_as_bits():
    from cujit.runtime.launch import as_bits

    assert as_bits("int32", 2**32 - 1) == -1 and as_bits("uint8", -1) == 255
    assert as_bits("int8", 300) == 300  # needs more bits: left for packing to refuse
    assert as_bits("float32", 2**40) == 2**40


def test_jit_option_checks():
    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        cuda.jit("void()", launch_bounds=(128, 2, 4, 8))
    for bad in (150, -2, 101):
        with pytest.raises(ValueError, match="must be between -1 and 100"):
            cuda.jit(shared_memory_carveout=bad)
    with pytest.raises(ValueError, match="Invalid carveout value"):
        cuda.jit(shared_memory_carveout="InvalidOption")
    cuda.jit(shared_memory_carveout="MaxL1")  # accepted


def test_config_warnings():
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(debug=True, opt=True)
    with pytest.warns(NumbaInvalidConfigWarning, match="mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True, opt=False)
    # numba: opt left out is its config's OPT != 0, on by default
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(debug=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.jit(debug=True, opt=False)


def test_performance_warnings_follow_their_variables(monkeypatch):
    from cujit.jit_options import warn_grid, warn_host_arrays

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_grid((1, 1, 1))  # off by default
        warn_host_arrays((np.zeros(2),), np.ndarray)
    monkeypatch.setenv(config.LOW_OCCUPANCY_WARNINGS.name, "1")
    monkeypatch.setenv(config.WARN_ON_IMPLICIT_COPY.name, "1")
    with pytest.warns(NumbaPerformanceWarning, match="Grid size 8 will likely"):
        warn_grid((2, 2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_grid((128, 1, 1))
        warn_host_arrays((np.zeros(2).view(np.recarray), 3), np.ndarray)  # not a plain one
    with pytest.warns(NumbaPerformanceWarning, match="Host array used in CUDA kernel"):
        warn_host_arrays((np.zeros(2), 3), np.ndarray)


class FakeDeviceArray:
    __cuda_array_interface__ = {"shape": (3,), "typestr": "<f4", "data": (0, False), "version": 3}


CAPTURED = FakeDeviceArray()


def _uses_global(out):
    out[0] = CAPTURED[0]


def test_cache_true_refuses_a_kernel_using_a_device_array():
    from cujit.cache import _key_or_none
    from cujit.cache.key import kernel_key
    from cujit.options import Options

    with pytest.warns(RuntimeWarning, match="without the disk cache"):
        assert kernel_key(_uses_global, (), Options()) is None  # CUJIT_CACHE=1: uncached
    with pytest.raises(pickle.PicklingError, match="global device arrays"):
        _key_or_none(_uses_global, (), Options(), strict=True)


def test_device_function_inspect_asm_follows_opt():
    from cujit.types import float64

    def fma_like(x, y, z):
        return x * y + z

    sig = (float64, float64, float64)
    try:
        fused = cuda.jit(sig, device=True)(fma_like).inspect_asm(sig)
    except Exception as exc:  # noqa: BLE001 - no libNVVM on this machine
        pytest.skip(f"libNVVM unavailable: {exc}")
    assert "fma.rn.f64" in fused
    assert "fma.rn.f64" not in cuda.jit(sig, device=True, opt=False)(fma_like).inspect_asm(sig)


def test_the_drop_in_serves_numbas_error_module():
    import subprocess
    import sys

    code = (
        "from cujit.numba_drop_in import install_numba_drop_in\n"
        "install_numba_drop_in()\n"
        "from numba.cuda.core.errors import NumbaPerformanceWarning, TypingError\n"
        "from numba.cuda import launchconfig\n"
        "import cujit.diagnostics as d\n"
        "assert NumbaPerformanceWarning is d.NumbaPerformanceWarning\n"
        "assert TypingError is d.TypingError\n"
        "assert launchconfig.current_launch_config() is None\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
