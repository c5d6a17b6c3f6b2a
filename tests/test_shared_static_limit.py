"""A fixed-size shared array larger than a block's 48 KiB of static shared memory is a
typing error at its line (the linker would refuse it later without naming one); at the
limit it compiles, and dynamic shared memory is not limited here."""

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.types import typeof

F32 = (typeof(np.zeros(4, np.float32)),)


def _kernel(n, **options):
    def k(a):
        s = cuda.shared.array(n, np.float32)
        t = cuda.threadIdx.x
        s[t] = a[t]
        s[n - 1 - t] = a[t] * 2
        cuda.syncthreads()
        a[t] = s[t] + s[n - 1 - t]

    return cuda.jit(**options)(k)


def test_over_the_limit_names_the_line():
    with pytest.raises(TypingError) as info:
        _kernel(12289).compile(F32)  # 49,156 bytes
    text = str(info.value)
    assert "49156 bytes" in text and "49152" in text
    assert "test_shared_static_limit.py" in text and "dynamic shared memory" in text


def test_two_dimensions_count_every_element():
    @cuda.jit
    def k(a):
        s = cuda.shared.array((128, 100), np.float64)  # 102,400 bytes
        s[0, 0] = a[0]
        a[0] = s[0, 0]

    with pytest.raises(TypingError, match="102400 bytes"):
        k.compile((typeof(np.zeros(4)),))


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_at_the_limit_compiles_and_runs(target):
    k = _kernel(12288, target=target)  # exactly 48 KiB
    a = np.arange(1, 33, dtype=np.float32)
    out = a.copy()
    k[1, 32](out)
    np.testing.assert_array_equal(out, 3 * a)


def test_dynamic_shared_is_not_limited_at_compile_time():
    @cuda.jit
    def k(a):
        s = cuda.shared.array(0, np.float32)
        s[cuda.threadIdx.x] = a[cuda.threadIdx.x]
        a[cuda.threadIdx.x] = s[cuda.threadIdx.x] * 2

    k.compile(F32)
