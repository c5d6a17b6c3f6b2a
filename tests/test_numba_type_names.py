"""numba's names in cuda.types: the scalar spellings against numba's own, and the
tuple, kind, literal and omitted types, used in signatures on the CPU target."""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda
from cujit.types import ALIASES, SCALAR_BY_NAME

types = cuda.types


def test_every_scalar_spelling_of_numba_is_the_same_scalar():
    nt = pytest.importorskip("numba.cuda.types")
    from numba.core.types import Boolean, Number

    checked = 0
    for name in dir(nt):
        value = getattr(nt, name)
        if isinstance(value, (Number, Boolean)) and str(value) in SCALAR_BY_NAME:
            assert getattr(types, name) is SCALAR_BY_NAME[str(value)], name
            checked += 1
    assert checked >= len(ALIASES)


def test_domains_match_numbas():
    nt = pytest.importorskip("numba.cuda.types")
    for name in (
        "integer_domain",
        "real_domain",
        "complex_domain",
        "number_domain",
        "signed_domain",
        "unsigned_domain",
    ):
        assert {str(t) for t in getattr(types, name)} == {str(t) for t in getattr(nt, name)}


def test_kinds_match_scalars_by_isinstance():
    assert isinstance(types.int32, types.Integer) and isinstance(types.uint8, types.Integer)
    assert not isinstance(types.float32, types.Integer)
    assert isinstance(types.float64, types.Float) and isinstance(types.complex64, types.Complex)
    assert isinstance(types.boolean, types.Boolean) and not isinstance(types.boolean, types.Number)
    assert all(isinstance(t, types.Number) for t in types.number_domain)
    assert not isinstance(types.float32[:], types.Number)


def test_tuples():
    assert types.UniTuple(types.float32, 3) == types.Tuple([types.float32] * 3)
    assert types.Tuple([types.int32, types.float64]).items == (types.int32, types.float64)
    with pytest.raises(TypeError):
        types.UniTuple(types.int32, -1)


def test_literal_and_omitted_types():
    lit = types.IntegerLiteral(3)
    assert lit.literal_value == 3 and lit.literal_type is types.int64
    assert lit == types.IntegerLiteral(3) and lit != types.IntegerLiteral(4)
    assert types.Omitted(None).value is None


def test_numba_spellings_in_signatures_compile_and_run():
    @cuda.jit(types.UniTuple(types.float64, 2)(types.float64), device=True, target="cpu")
    def pair(x):
        return x, 2 * x

    @cuda.jit(
        types.void(
            types.Array(types.ulonglong, 1, "C"),
            types.intc,
            types.Tuple([types.longlong, types.double]),
        ),
        target="cpu",
    )
    def k(out, n, t):
        i = cuda.grid(1)
        if i < n:
            a, b = pair(t[1] + i)
            out[i] = types.ulonglong(a + b) + t[0]

    out = np.full(8, 99, np.uint64)
    k[1, 8](out, 8, (5, 1.0))
    assert np.array_equal(out, [3 * (1 + i) + 5 for i in range(8)])


def test_cpointer_is_a_type_kernels_take_as_an_address():
    import numpy as np

    p = types.CPointer(types.int32)
    assert p == types.CPointer(types.int32) and p.dtype is types.int32
    assert str(p) == "pointer(int32)"
    sig = types.void(p)
    assert sig.args == (p,)

    def k(ptr):
        ptr[0] = 1

    kernel = cuda.jit(sig, target="cpu")(k)
    a = np.full(2, 7, np.int32)
    kernel[1, 1](a.ctypes.data)
    assert list(a) == [1, 7]


def test_underlying_float_of_complex_types():
    assert types.complex64.underlying_float is types.float32
    assert types.complex128.underlying_float is types.float64
    assert types.float32(types.complex64).args == (types.complex64,)
    with pytest.raises(AttributeError):
        _ = types.float32.underlying_float
