"""The CPU target lays device memory out as cudaMalloc does: each allocation 256-byte
aligned, its size rounded up to 512 bytes, so that a kernel's short overrun through a raw
pointer (numba-cuda's own dispatcher test writes 16 elements into 10) lands in the
allocation's slack as on a GPU, not in other objects' memory."""

import numpy as np
import pytest

from cujit import types
from cujit.cuda import jit
from cujit.targets.cpu import memory


@pytest.mark.parametrize("n", [1, 10, 127, 1000])
def test_allocations_are_256_byte_aligned_and_exactly_sized(n):
    a = memory.device_array(n, np.int32)
    assert a.ctypes.data % memory.DEVICE_ALIGN == 0
    assert a.alloc_size == 4 * n and a.nbytes == 4 * n


def test_a_short_overrun_through_a_pointer_stays_in_the_allocation():
    ptr = types.CPointer(types.int32)

    @jit(types.void(ptr, ptr, types.uint32), target="cpu")
    def fill(r, x, n):
        i = 0
        while i < n:
            r[i] = x[i % 10] * 3
            i += 1

    x = memory.to_device(np.arange(1, 11, dtype=np.int32))
    neighbours = [memory.to_device(np.full(10, 7, np.int32)) for _ in range(8)]
    r = memory.device_array(10, np.int32)
    fill[1, 1](r.ctypes.data, x.ctypes.data, 16)  # 6 elements past r's end
    np.testing.assert_array_equal(r.copy_to_host(), 3 * np.arange(1, 11))
    for other in neighbours:  # nothing else was written
        np.testing.assert_array_equal(other.copy_to_host(), np.full(10, 7))
