"""On the GPU, an int launch argument that fits its parameter's bits reaches the kernel as
those bits (0xFFFFFFFF is an int32's -1, as numba passes it through ctypes) on every launch
path, the first launch and the cached launcher's; one needing more bits is refused."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import LaunchError

pytestmark = pytest.mark.gpu


def test_int32_bit_patterns_on_the_gpu():
    @cuda.jit("void(int32, int64[:])")
    def store(n, out):
        out[0] = n

    out = cuda.to_device(np.zeros(1, np.int64))
    for value, stored in ((2**32 - 1, -1), (7, 7), (2**31, -(2**31)), (2**32 - 1, -1)):
        store[1, 1](value, out)  # the first launch, then the cached launcher's path
        assert out.copy_to_host()[0] == stored, value
    with pytest.raises(LaunchError, match="cannot hold"):
        store[1, 1](2**32, out)
