"""``pinned_array_like`` lays out its array as ``device_array_like`` does (NumPy's
``zeros_like`` order of a view's strides), on the CPU target and (marked gpu) on the GPU,
where it returns a plain host array, never a device array."""

from __future__ import annotations

import numpy as np
import pytest

from cujit.targets.cpu import memory as cpu_memory
from cujit.targets.cpu import streams

VIEWS = [
    ("C", lambda a: a[::2, ::2]),
    ("F", lambda a: a[::2, ::2]),
    ("F", lambda a: a[1:, ::-2]),
    ("C", lambda a: a[:, 1::3]),
]


@pytest.mark.parametrize("order,view", VIEWS)
def test_cpu_pinned_array_like_of_a_device_view(order, view):
    ref = np.zeros_like(view(np.zeros((10, 12), order=order)))
    got = streams.pinned_array_like(view(cpu_memory.device_array((10, 12), order=order)))
    assert type(got) is np.ndarray
    assert got.shape == ref.shape and got.strides == ref.strides


@pytest.mark.gpu
@pytest.mark.parametrize("order,view", VIEWS)
def test_gpu_pinned_array_like_of_a_device_view(order, view):
    from cujit.runtime import host, memory

    ref = np.zeros_like(view(np.zeros((10, 12), order=order)))
    got = host.pinned_array_like(view(memory.device_array((10, 12), order=order)))
    assert isinstance(got, np.ndarray)
    assert got.shape == ref.shape and got.strides == ref.strides
    got[...] = 2.5  # the pinned memory is writable host memory
    assert (got == 2.5).all()
