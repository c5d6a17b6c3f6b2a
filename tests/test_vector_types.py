"""CUDA vector types (cuda.float4, cuda.int32x2...): numba's names, constructors from scalars
and smaller vectors with conversion to the base type, .x/.y/.z/.w, device functions and
kernel arguments; on the CPU target, and on the GPU (marked gpu)."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError
from cujit.vector_types import NAMES, VECTOR_TYPES


def test_numbas_vector_type_names_and_aliases():
    try:
        from numba.cuda import vector_types as numbas
    except Exception as exc:  # numba-cuda absent, or not importable with this NumPy
        pytest.skip(f"numba-cuda's vector_types cannot be imported here: {exc!r}")
    vt = numbas.vector_types
    assert set(vt) == set(VECTOR_TYPES)
    for name, v in vt.items():
        ours = getattr(cuda, name)
        assert ours.num_elements == v.num_elements and str(ours.base_type) == str(v.base_type)
        for alias in v.user_facing_object.aliases:
            assert getattr(cuda, alias) is ours
    assert len(NAMES) == 40 + 40 + 8  # long/longlong and ulong/ulonglong both alias int64s


def _mixed(target):
    @cuda.jit(target=target)
    def k(out):
        i = cuda.grid(1)
        one = cuda.float1(i)
        two = cuda.float2(one, 2)
        v = cuda.float4(two, cuda.float1(3.5), 4)
        w = cuda.float3(1, two)
        out[i, 0] = v.x
        out[i, 1] = v.y
        out[i, 2] = v.z
        out[i, 3] = v.w
        out[i, 4] = w.x + w.y + w.z

    return k


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_constructors_take_scalars_and_smaller_vectors(target):
    out = np.full((4, 5), -1.0, np.float32)
    _mixed(target)[1, 4](out)
    i = np.arange(4)
    assert np.array_equal(
        out[:, :4], np.stack([i, np.full(4, 2), np.full(4, 3.5), np.full(4, 4)], axis=1)
    )
    assert np.array_equal(out[:, 4], 1 + i + 2)


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_elements_convert_to_the_base_type(target):
    @cuda.jit(target=target)
    def k(out, f):
        u = cuda.uchar2(300, -1)  # wrap as a uint8 cast does
        h = cuda.float1(f[0])  # float64 -> float32 rounds
        out[0] = u.x
        out[1] = u.y
        out[2] = h.x == f[0]
        out[3] = cuda.int2(7.9, -7.9).y  # float -> int truncates

    out = np.zeros(4, np.int64)
    k[1, 1](out, np.array([0.1]))
    assert list(out) == [300 % 256, 255, 0, -7]


@pytest.mark.parametrize("target", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_vectors_through_device_functions_and_kernel_arguments(target):
    @cuda.jit(device=True, target=target)
    def scale(v, s):
        return cuda.double2(v.x * s, v.y * s)

    @cuda.jit(target=target)
    def k(out, v):
        r = scale(v, 3.0)
        out[0] = r.x
        out[1] = r.y

    out = np.zeros(2)
    k[1, 1](out, cuda.double2(1.5, -2.0))
    assert list(out) == [4.5, -6.0]


def test_wrong_element_count_is_a_typing_error():
    def k(out):
        out[0] = cuda.float4(1.0, 2.0).x

    with pytest.raises(TypingError, match=r"float32x4\(\) needs 4 elements, got 2"):
        cuda.jit(target="cpu")(k)[1, 1](np.zeros(1, np.float32))

    def mixed_family(out):
        out[0] = cuda.float2(cuda.int1(1), 2.0).x

    with pytest.raises(TypingError, match="float32 scalars and float32 vectors"):
        cuda.jit(target="cpu")(mixed_family)[1, 1](np.zeros(1, np.float32))
