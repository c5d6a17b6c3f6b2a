"""numba's ``driver`` object and ``_have_nvjitlink`` (``cuda.cudadrv.driver``): the
current target's devices and the driver's version, also through the numba drop-in, as
a library such as numba.cuda.kernels.transpose reads them."""

import json
import subprocess
import sys

import pytest
from test_numba_drop_in import child_env

from cujit import config
from cujit.cuda.cudadrv.driver import _have_nvjitlink, driver
from cujit.diagnostics import NoGPUError


@pytest.fixture
def cpu_target(monkeypatch):
    monkeypatch.setenv(config.TARGET.name, "cpu")


def test_cpu_target_has_one_device_with_numbas_attributes(cpu_target):
    from cujit.targets.cpu import device

    assert driver.is_available and driver.get_device_count() == 1
    dev = driver.get_device()
    assert dev.MAX_THREADS_PER_BLOCK == device.get_current_device().MAX_THREADS_PER_BLOCK > 0
    assert dev.compute_capability == (9, 0)
    assert driver.list_devices() == [dev]
    assert driver.get_active_context() is not None


def test_cpu_target_version_is_the_toolkits(cpu_target):
    from cujit.cuda.cudadrv.runtime import get_version

    major, minor = driver.get_version()
    assert (major, minor) == get_version() and major >= 12


def test_a_device_past_the_last_is_an_error_naming_it(cpu_target):
    with pytest.raises(NoGPUError, match="no device 3: this machine has 1"):
        driver.get_device(3)


def test_raw_driver_functions_point_at_cuda_bindings():
    with pytest.raises(AttributeError, match=r"cuda\.bindings\.driver\.cuMemGetInfo"):
        driver.cuMemGetInfo  # noqa: B018 -- the attribute access is the test
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        driver.bogus  # noqa: B018


def test_nvjitlink_is_there():
    # the wheel is one of cujit's dependencies: every kernel links through it
    assert _have_nvjitlink() is True


def test_through_the_drop_in(tmp_path):
    code = (
        "import json, cujit; cujit.install_numba_drop_in()\n"
        "from numba.cuda.cudadrv.driver import driver, _have_nvjitlink\n"
        "d = driver.get_device()\n"
        "print(json.dumps({'tpb': d.MAX_THREADS_PER_BLOCK, 'n': driver.get_device_count(),\n"
        "                  'lto': _have_nvjitlink(), 'cls': type(driver).__module__}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=child_env(CUJIT_TARGET="cpu"),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got == {"tpb": 1024, "n": 1, "lto": True, "cls": "cujit.cuda.cudadrv.driver"}


def test_the_target_is_read_at_each_call_and_cuda_gpus_is_left_alone(monkeypatch):
    from cujit import cuda

    served = cuda.__dict__.get("gpus")
    monkeypatch.setenv(config.TARGET.name, "cpu")
    assert driver.get_device_count() == 1
    monkeypatch.setenv(config.TARGET.name, "cuda")
    from cujit.runtime import devices

    assert driver.get_device_count() == len(devices.gpus)
    assert cuda.__dict__.get("gpus") is served  # the facade's cache is not filled by it


@pytest.mark.gpu
def test_on_the_gpu():
    from cujit import cuda

    assert driver.is_available and driver.get_device_count() == len(cuda.gpus) >= 1
    dev = driver.get_device(0)
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.compute_capability >= (7, 0)
    major, minor = driver.get_version()
    assert major >= 12 and 0 <= minor < 100
