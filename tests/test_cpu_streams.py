"""Streams, events and pinned memory under the CPU target (``targets/cpu/streams.py``):
GPU-runtime programs run unchanged, and the objects keep their promises (an event's
elapsed time, pinned arrays' shapes and strides)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from cujit.cuda import _CPU_NAMES, _RUNTIME_NAMES
from cujit.targets.cpu import streams


def test_every_stream_event_and_pinned_name_has_a_cpu_form():
    names = [
        n
        for n, m in _RUNTIME_NAMES.items()
        if m
        in (
            "cujit.runtime.stream",
            "cujit.runtime.event",
            "cujit.runtime.host",
            "cujit.runtime.profiling",
        )
    ]  # external_stream too: a handle the CPU target's CUDA Array Interface names
    assert sorted(names) == sorted(
        n for n, m in _CPU_NAMES.items() if m == "cujit.targets.cpu.streams"
    )
    for n in names:
        assert callable(getattr(streams, n))


def test_event_elapsed_time_measures_host_time_between_records():
    start, end = streams.event(), streams.event()
    start.record()
    time.sleep(0.02)
    end.record(streams.stream())
    ms = streams.event_elapsed_time(start, end)
    assert 15.0 <= ms < 5000.0  # slept 20 ms; the bound only catches a wrong unit
    assert start.query() and end.query()
    with pytest.raises(ValueError, match="recorded"):
        streams.event().elapsed_time(end)
    with pytest.raises(ValueError, match="timing=True"):
        streams.event(timing=False).record().elapsed_time(end)


def test_pinned_arrays_are_host_arrays_of_the_asked_layout():
    a = streams.pinned_array((3, 4), np.float32, order="F")
    assert a.shape == (3, 4) and a.dtype == np.float32 and a.flags.f_contiguous
    b = streams.pinned_array((3, 4), np.int16, strides=(16, 2))
    assert b.strides == (16, 2) and type(b) is np.ndarray
    c = streams.pinned_array_like(b)
    assert c.shape == b.shape and c.dtype == b.dtype
    with streams.pinned(a, b):
        a[...] = 1.5
    assert (a == 1.5).all()


def test_gpu_runtime_program_runs_unchanged_under_the_cpu_target():
    # A fresh process: the cuda namespace picks its names once, from CUJIT_TARGET.
    code = (
        "import numpy as np\n"
        "from cujit import cuda\n"
        "@cuda.jit\n"
        "def k(x, y):\n"
        "    i = cuda.grid(1)\n"
        "    if i < x.shape[0]:\n"
        "        y[i] = 2 * x[i] + 1\n"
        "s = cuda.stream()\n"
        "start, end = cuda.event(), cuda.event()\n"
        "h = cuda.pinned_array(100, np.float32)\n"
        "h[:] = np.arange(100)\n"
        "with s.auto_synchronize():\n"
        "    start.record(s)\n"
        "    x = cuda.to_device(h, stream=s)\n"
        "    y = cuda.device_array_like(x, stream=s)\n"
        "    k[4, 32, s](x, y)\n"
        "    end.record(s)\n"
        "end.synchronize()\n"
        "assert cuda.event_elapsed_time(start, end) >= 0\n"
        "assert (y.copy_to_host(stream=s) == 2 * np.arange(100) + 1).all()\n"
        "print(type(s).__module__)\n"
    )
    env = dict(os.environ, CUJIT_TARGET="cpu")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cujit.targets.cpu.streams"
