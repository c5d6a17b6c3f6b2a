"""Extension types (``cujit.extending``): a library's own type subclassing
``cujit.types.Type``, its struct data model, typeof, attributes, and a constructor
called in kernels whose lowering builds the value with an llvmlite builder.

Kernels run on the CPU target (``target="cpu"``) and, marked ``gpu``, on the CUDA
target; ``compile_ptx`` checks the CUDA lowering without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from cujit import cuda, extending, types
from cujit.cuda import cgutils
from cujit.diagnostics import TypingError
from cujit.types import extension, int32, void


class Pair:
    """The library's Python class: kernels build values of it."""

    def __init__(self, a, b):
        self.a = a
        self.b = b


class PairType(types.Type):
    def __init__(self):
        super().__init__(name="PairType")


pair_type = PairType()


@extending.typeof_impl.register(Pair)
def _typeof_pair(val, c):
    return pair_type


@extending.register_model(PairType)
class PairModel(extending.models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("first", types.int32), ("second", types.float64)])


# The attributes read other member names than the attributes' own.
extending.make_attribute_wrapper(PairType, "first", "a")
extending.make_attribute_wrapper(PairType, "second", "b")


@extending.type_callable(Pair)
def _type_pair(context):
    def typer(a, b):
        if isinstance(a, types.Integer) and isinstance(b, types.Float):
            return pair_type
        return None

    return typer


@extending.lower_builtin(Pair, types.Integer, types.Float)
def _lower_pair(context, builder, sig, args):
    p = cgutils.create_struct_proxy(pair_type)(context, builder)
    p.first = args[0]
    p.second = args[1]
    return p._getvalue()


def _fill(out_a, out_b):
    arr = cuda.local.array(8, dtype=pair_type)
    for i in range(8):
        arr[i] = Pair(int32(i * 3 - 4), float(i) * 0.5 + 1.0)
    for i in range(8):
        out_a[i] = arr[7 - i].a
        out_b[i] = arr[7 - i].b


def _reverse_shared(out_a, out_b):
    s = cuda.shared.array(32, dtype=pair_type)
    i = cuda.threadIdx.x
    s[i] = Pair(int32(i * i), float(i) + 0.25)
    cuda.syncthreads()
    out_a[i] = s[31 - i].a
    out_b[i] = s[31 - i].b


SIG = void(int32[::1], types.float64[::1])


def _expected_fill():
    i = np.arange(8)[::-1]
    return (i * 3 - 4).astype(np.int32), i * 0.5 + 1.0


def _expected_reverse():
    i = np.arange(32)[::-1]
    return (i * i).astype(np.int32), i + 0.25


def test_type_base_is_constructed_with_a_name():
    assert str(pair_type) == "PairType" and pair_type.name == "PairType"
    assert pair_type == PairType() and hash(pair_type) == hash(PairType())
    assert pair_type != types.int32
    with pytest.raises(TypeError):
        PairType.__bases__[0](3)  # a name is a str


def test_struct_type_is_stored_as_its_aligned_record():
    rec = extension.record_of(pair_type)
    assert rec.origin is pair_type
    assert rec.dtype == np.dtype([("first", np.int32), ("second", np.float64)], align=True)
    arr = pair_type[::1]
    assert arr.dtype == rec and arr.layout == "C" and arr.ndim == 1
    sig = void(pair_type[:])
    assert sig.args[0].dtype == rec


def test_typeof_uses_the_table():
    assert types.typeof(Pair(1, 2.0)) is pair_type
    assert extending.typeof_impl(Pair(1, 2.0), None) is pair_type
    with pytest.raises(TypeError, match="Python type object"):
        types.typeof(object())


def test_registration_checks_its_arguments():
    with pytest.raises(TypeError, match="subclass of cujit.types.Type"):
        extending.make_attribute_wrapper(int, "x", "x")
    with pytest.raises(TypeError, match="not a data model"):
        extending.register_model(PairType)(dict)
    with pytest.raises(TypeError, match="takes a class"):
        extending.typeof_impl.register(3)


def test_constructor_and_attributes_in_local_memory_cpu():
    out_a = np.full(8, -99, np.int32)
    out_b = np.full(8, np.nan)
    cuda.jit(SIG, target="cpu")(_fill)[1, 1](out_a, out_b)
    want_a, want_b = _expected_fill()
    np.testing.assert_array_equal(out_a, want_a)
    np.testing.assert_array_equal(out_b, want_b)


def test_constructor_in_shared_memory_across_threads_cpu():
    out_a = np.full(32, -99, np.int32)
    out_b = np.full(32, np.nan)
    cuda.jit(SIG, target="cpu")(_reverse_shared)[1, 32](out_a, out_b)
    want_a, want_b = _expected_reverse()
    np.testing.assert_array_equal(out_a, want_a)
    np.testing.assert_array_equal(out_b, want_b)


def test_cuda_lowering_compiles_to_ptx():
    ptx, ret = cuda.compile_ptx(_fill, SIG)
    assert ret == void
    # LLVM folds the struct's stores and loads away: what reaches global memory are the
    # constants the constructor received (out_b[0] = 4.5, out_b[7] = 1.0, as int bits).
    assert ".entry" in ptx
    for value in (4.5, 1.0):
        assert str(np.float64(value).view(np.int64)) in ptx


def _bad_args(out_a, out_b):
    p = Pair(1.5, 2)
    out_a[0] = p.a


def _no_such_attribute(out_a, out_b):
    p = Pair(int32(1), 2.0)
    out_a[0] = p.first  # a member, but no attribute declares it


def _write_attribute(out_a, out_b):
    p = Pair(int32(1), 2.0)
    p.a = 3


@pytest.mark.parametrize(
    "fn, message",
    [
        (_bad_args, r"Pair\(\) cannot be called with \(float64, int64\)"),
        (_no_such_attribute, "PairType has no attribute 'first'"),
        (_write_attribute, "attributes of PairType are read-only"),
    ],
)
def test_user_errors_name_the_line(fn, message):
    with pytest.raises(TypingError, match=message) as info:
        cuda.jit(SIG, target="cpu")(fn)
    assert "test_extension_types.py" in str(info.value)


class Unlowered:
    def __init__(self, v):
        self.v = v


@extending.type_callable(Unlowered)
def _type_unlowered(context):
    return lambda v: pair_type


def _call_unlowered(out_a, out_b):
    out_a[0] = Unlowered(int32(1)).a


def test_missing_lowering_is_a_typing_error():
    with pytest.raises(TypingError, match=r"Unlowered\(\) has no implementation"):
        cuda.jit(SIG, target="cpu")(_call_unlowered)


@pytest.mark.gpu
def test_constructor_and_attributes_gpu():
    out_a = np.full(8, -99, np.int32)
    out_b = np.full(8, np.nan)
    cuda.jit(SIG)(_fill)[1, 1](out_a, out_b)
    want_a, want_b = _expected_fill()
    np.testing.assert_array_equal(out_a, want_a)
    np.testing.assert_array_equal(out_b, want_b)
    out_a = np.full(32, -99, np.int32)
    out_b = np.full(32, np.nan)
    cuda.jit(SIG)(_reverse_shared)[1, 32](out_a, out_b)
    want_a, want_b = _expected_reverse()
    np.testing.assert_array_equal(out_a, want_a)
    np.testing.assert_array_equal(out_b, want_b)


def test_cache_key_covers_the_lowering(monkeypatch):
    from cujit.cache.key import kernel_key
    from cujit.options import Options

    args = (int32[::1], types.float64[::1])
    before = kernel_key(_fill, args, Options())
    assert before is not None and before == kernel_key(_fill, args, Options())

    def other_lowering(context, builder, sig, args):
        return _lower_pair(context, builder, sig, args)

    monkeypatch.setitem(extension.LOWERINGS, Pair, [((types.Integer, types.Float), other_lowering)])
    assert kernel_key(_fill, args, Options()) != before
