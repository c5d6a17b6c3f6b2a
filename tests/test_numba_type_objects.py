"""numba's type objects and Signatures where cujit takes a type (cujit.types.foreign):
converted by their shape, so stand-ins named as numba names its classes convert too
(cujit never imports numba for this); numba's real objects where numba is installed,
in signatures and inside kernels, run on the CPU target and checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.types import (
    Array,
    Signature,
    Tuple,
    float32,
    float64,
    int32,
    parse_signature,
    to_type,
    void,
)
from cujit.types.foreign import from_numba_type, is_numba_type


def _stand_in(class_name: str, module: str, **attrs):
    """An object of a class named and placed as numba's, with no numba behind it."""
    base = type("Type", (), {"__module__": "numba.core.types.abstract"})
    cls = type(class_name, (base,), {"__module__": module})
    obj = cls()
    for key, value in attrs.items():
        setattr(obj, key, value)
    return obj


def test_stand_ins_convert_by_shape_without_numba():
    f4 = _stand_in("Float", "numba.core.types.scalars", name="float32")
    i8 = _stand_in("Integer", "numba.core.types.scalars", name="int64")
    arr = _stand_in("Array", "numba.core.types.npytypes", dtype=f4, ndim=3, layout="F")
    tup = _stand_in("UniTuple", "numba.core.types.containers", dtype=i8, count=2)
    assert to_type(f4) is float32
    assert to_type(arr) == Array(float32, 3, "F")
    assert to_type(tup) == Tuple((to_type(i8),) * 2)


def test_a_class_named_like_numbas_elsewhere_is_not_numbas():
    fake = type("Float", (), {"__module__": "mylib.types"})()
    assert not is_numba_type(fake)
    with pytest.raises(TypeError):
        to_type(fake)


def test_numba_types_convert():
    numba = pytest.importorskip("numba")
    from numba.core import types as nt

    assert to_type(numba.float32) is float32
    assert to_type(numba.boolean).name == "bool"
    assert to_type(nt.intp).name == "int64"
    assert to_type(nt.float32[:, ::1]) == Array(float32, 2, "C")
    assert to_type(nt.float64[::1, :]) == Array(float64, 2, "F")
    assert to_type(nt.int32[:]) == Array(int32, 1, "A")
    assert to_type(nt.UniTuple(nt.int32, 3)) == Tuple((int32,) * 3)
    assert to_type(nt.Tuple((nt.int32, nt.float64))) == Tuple((int32, float64))
    with pytest.raises(TypeError, match="no cujit equivalent"):
        from_numba_type(nt.unicode_type)


def test_numba_signatures_convert():
    numba = pytest.importorskip("numba")
    from numba.core import types as nt
    from numba.core.typing import signature

    assert parse_signature(numba.void(numba.float32[:])) == Signature(
        void, (Array(float32, 1, "A"),)
    )
    sig = parse_signature(signature(nt.float64, nt.int32, nt.float32[:, ::1]))
    assert sig.return_type is float64 and sig.args == (int32, Array(float32, 2, "C"))
    assert parse_signature((numba.int32, numba.float64)).args == (int32, float64)


def test_numba_types_in_signatures_and_kernels_on_the_cpu_target():
    numba = pytest.importorskip("numba")
    from numba.core import types as nt

    @cuda.jit(nt.int32(nt.int32, nt.int32), device=True)
    def mix(a, b):
        return a * 3 - b

    @cuda.jit(numba.void(nt.float32[::1], nt.int32[::1]), target="cpu")
    def kernel(x, out):
        i = cuda.grid(1)
        tmp = cuda.local.array(2, numba.float32)  # numba's type as an array dtype
        tmp[0] = x[i] * numba.float32(2)  # and as a cast
        tmp[1] = tmp[0] + 1
        out[i] = mix(numba.int32(tmp[1]), numba.int32(i))

    x = np.arange(1, 65, dtype=np.float32) / 4
    out = np.full(64, -99, np.int32)
    kernel[2, 32](x, out)
    ref = (np.floor(x * 2 + 1)).astype(np.int32) * 3 - np.arange(64, dtype=np.int32)
    np.testing.assert_array_equal(out, ref)
    assert list(kernel.overloads) == [(Array(float32, 1, "C"), Array(int32, 1, "C"))]
