"""Record (structured dtype) arrays and record scalars as kernel arguments: field reads and
writes (``a[i].x``, ``a[i]['x']``, ``r.x = v``), aligned and packed layouts, nested records
and array fields, whole-record copies, records in shared and local memory, device
functions taking records, and the errors for misuse; on the CPU target against NumPy, and
on the GPU (marked gpu)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from cujit import cuda
from cujit.diagnostics import TypingError, UnsupportedError
from cujit.types import Array, NestedArray, Record, from_dtype, typeof

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]

ALIGNED = np.dtype(
    [("a", np.float64), ("b", np.int32), ("c", np.complex64), ("d", np.uint8, 5), ("e", np.bool_)],
    align=True,
)
PACKED = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.int16), ("d", np.float32)])
INNER = np.dtype([("x", np.int16), ("y", np.float32)], align=True)
NESTED = np.dtype([("id", np.int32), ("inner", INNER), ("m", np.float32, (3, 2))], align=True)


def _sample(dtype, n=5, seed=0):
    """A structured array with every field filled with distinct non-zero values."""
    rng = np.random.default_rng(seed)
    a = np.zeros(n, dtype)
    raw = a.view(np.uint8).reshape(n, dtype.itemsize)
    raw[:] = rng.integers(1, 100, raw.shape, dtype=np.uint8)  # padding too: poisoned
    for name in dtype.names:
        sub = a[name]
        if sub.dtype.names is None:
            a[name] = rng.integers(1, 50, sub.shape).astype(sub.dtype) + (
                0.5 if sub.dtype.kind in "fc" else 0
            )
    return a


def test_record_type_follows_numpys_layout():
    for dt in (ALIGNED, PACKED, NESTED):
        rec = from_dtype(dt)
        assert isinstance(rec, Record) and rec.size == dt.itemsize
        assert [(n, off) for n, _, off in rec.fields] == [(n, dt.fields[n][1]) for n in dt.names]
        assert rec.dtype == dt  # and back to the same NumPy dtype
    assert from_dtype(PACKED).field("b") == (from_dtype(np.float64), 1)
    assert from_dtype(NESTED).field("m") == (NestedArray(from_dtype(np.float32), (3, 2)), 12)
    assert typeof(np.zeros(3, ALIGNED)) == Array(from_dtype(ALIGNED), 1, "C")
    assert typeof(np.zeros(3, ALIGNED)[1]) == from_dtype(ALIGNED)
    assert typeof(np.zeros(3, ALIGNED).view(np.recarray)[1]) == from_dtype(ALIGNED)


@pytest.mark.parametrize(
    "target,dtype",
    [
        ("cpu", ALIGNED),
        pytest.param("cuda", ALIGNED, marks=pytest.mark.gpu),
    ],
    ids=["cpu-aligned", "cuda-aligned"],
)
def test_field_writes_by_attribute_and_name(target, dtype):
    @cuda.jit(target=target)
    def k(ary, v):
        i = cuda.grid(1)
        if i < ary.size and i % 2 == 1:
            ary[i].a = v * i  # cast to the field's type
            ary[i]["c"] = ary[i].b + 1  # read one field, write another by name

    got = _sample(dtype)
    expect = got.copy()
    k[1, 8](got, 3)
    for i in range(1, 5, 2):
        expect[i]["a"] = 3 * i
        expect[i]["c"] = expect[i]["b"] + 1
    assert got.tobytes() == expect.tobytes()  # padding and the other elements untouched


@pytest.mark.parametrize("target", TARGETS)
def test_field_reads_into_arrays(target):
    @cuda.jit(target=target)
    def k(ary, fa, fb, fc, fd, fe):
        i = cuda.grid(1)
        if i < ary.size:
            r = ary[i]
            fa[i] = r.a
            fb[i] = r["b"]
            fc[i] = r.c
            fd[i] = r.d[1] + r.d[4]
            fe[i] = r.e

    a = _sample(ALIGNED)
    a["e"] = [True, False, True, True, False]
    outs = [np.full(5, -1, t) for t in (np.float64, np.int32, np.complex64, np.int64, np.bool_)]
    k[1, 8](a, *outs)
    np.testing.assert_array_equal(outs[0], a["a"])
    np.testing.assert_array_equal(outs[1], a["b"])
    np.testing.assert_array_equal(outs[2], a["c"])
    np.testing.assert_array_equal(outs[3], a["d"][:, 1].astype(np.int64) + a["d"][:, 4])
    np.testing.assert_array_equal(outs[4], a["e"])


@pytest.mark.parametrize("target", TARGETS)
def test_nested_records_and_array_fields(target):
    @cuda.jit(target=target)
    def k(ary, out):
        i = cuda.grid(1)
        if i < ary.size:
            r = ary[i]
            r.inner.x = r.id * 2
            r.inner["y"] = r.m[2, 1] - r.m[0, 0]
            for p in range(3):
                for q in range(2):
                    r.m[p, q] = r.m[p, q] * (p + 1)
            out[i] = r.m.shape[0] * 10 + r.m.shape[1]

    got = _sample(NESTED)
    expect = got.copy()
    out = np.full(5, -1, np.int64)
    k[1, 8](got, out)
    expect["inner"]["x"] = expect["id"] * 2
    expect["inner"]["y"] = expect["m"][:, 2, 1] - expect["m"][:, 0, 0]
    expect["m"] *= np.array([1, 2, 3], np.float32)[None, :, None]
    assert got.tobytes() == expect.tobytes()
    np.testing.assert_array_equal(out, np.full(5, 32))


@pytest.mark.parametrize("target", TARGETS)
def test_whole_record_copies(target):
    @cuda.jit(target=target)
    def k(dst, src, perm):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[perm[i]]
            dst[i].inner = src[0].inner  # a nested record field, copied whole

    src = _sample(NESTED, seed=1)
    dst = _sample(NESTED, seed=2)
    perm = np.array([4, 0, 3, 1, 2])
    k[1, 8](dst, src, perm)
    expect = src[perm].copy()
    expect["inner"] = src[0]["inner"]  # NumPy copies the fields, cujit the bytes
    assert dst.tobytes() != expect.tobytes()
    np.testing.assert_array_equal(dst, expect)
    raw, want = dst.view(np.uint8).reshape(5, -1), src[perm].view(np.uint8).reshape(5, -1)
    inner = slice(4, 12)  # the nested record's bytes, padding too
    want[:, inner] = src[:1].view(np.uint8)[inner]
    np.testing.assert_array_equal(raw, want)


@pytest.mark.parametrize("target", TARGETS)
def test_array_field_assigned_whole(target):
    @cuda.jit(target=target)
    def k(ary, src):
        i = cuda.grid(1)
        if i < ary.size:
            ary[i]["m"] = src

    nested = _sample(NESTED)
    src = (np.arange(6, dtype=np.int64) + 11).reshape(3, 2)
    expect = nested.copy()
    k[1, 8](nested, src)
    expect["m"] = src
    assert nested.tobytes() == expect.tobytes()

    aligned = _sample(ALIGNED)

    @cuda.jit(target=target)
    def fill_d(ary):
        ary[0].d = 7  # a scalar fills every element

    expect = aligned.copy()
    fill_d[1, 1](aligned)
    expect[0]["d"] = 7
    assert aligned.tobytes() == expect.tobytes()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["void", "recarray"])
def test_record_scalar_argument_is_written_through(target, kind):
    @cuda.jit(target=target)
    def k(r, v, out):
        out[0] = r.b
        r.a = v
        r.c = r.b * 1j

    base = _sample(ALIGNED)
    if kind == "recarray":
        base = base.view(np.recarray)
    expect = base.copy()
    out = np.zeros(1, np.int32)
    k[1, 1](base[2], 2.25, out)
    assert out[0] == expect[2]["b"]
    expect[2]["a"] = 2.25
    expect[2]["c"] = expect[2]["b"] * 1j
    assert base.tobytes() == expect.tobytes()


@pytest.mark.gpu
def test_device_record_arrays_on_the_gpu():
    @cuda.jit
    def k(ary):
        i = cuda.grid(1)
        if i < ary.size:
            ary[i].inner.x = ary[i].id
            ary[i] = ary[i]

    host = _sample(NESTED)
    dev = cuda.to_device(host)
    assert typeof(dev) == Array(from_dtype(NESTED), 1, "C")
    k[1, 8](dev)
    expect = host.copy()
    expect["inner"]["x"] = expect["id"]
    np.testing.assert_array_equal(dev.copy_to_host(), expect)


@pytest.mark.parametrize("target", TARGETS)
def test_device_functions_take_and_return_records(target):
    @cuda.jit(device=True)
    def norm2(r):
        return r.a * r.a + r.b * r.b

    @cuda.jit(device=True)
    def scale(r, s):
        r.a = r.a * s

    @cuda.jit(device=True)
    def pick(ary, i):
        return ary[i]

    @cuda.jit(target=target)
    def k(ary, out):
        i = cuda.grid(1)
        if i < ary.size:
            out[i] = norm2(ary[i])
            scale(pick(ary, i), 2.0)

    a = _sample(ALIGNED)
    expect = a.copy()
    out = np.full(5, -1.0)
    k[1, 8](a, out)
    np.testing.assert_allclose(out, expect["a"] ** 2 + expect["b"].astype(float) ** 2)
    expect["a"] *= 2
    assert a.tobytes() == expect.tobytes()


@pytest.mark.parametrize("target", TARGETS)
def test_records_in_shared_and_local_memory(target):
    @cuda.jit(target=target)
    def k(ary, out):
        tid = cuda.threadIdx.x
        sm = cuda.shared.array(8, dtype=NESTED)
        loc = cuda.local.array(1, dtype=INNER)
        sm[tid] = ary[tid]
        cuda.syncthreads()
        r = sm[7 - tid]
        loc[0].x = r.inner.x
        loc[0].y = r.m[1, 1]
        out[tid] = loc[0].x + loc[0].y + r.id

    a = _sample(NESTED, n=8)
    out = np.full(8, -1.0, np.float32)
    k[1, 8](a, out)
    rev = a[::-1]
    np.testing.assert_allclose(out, rev["inner"]["x"] + rev["m"][:, 1, 1] + rev["id"])


def _packed_read(ary, out):
    out[0] = ary[0].b  # <- misaligned


def _packed_write(ary, out):
    ary[0].b = out[0]


@pytest.mark.parametrize("target", ["cuda", "cpu"])
def test_misaligned_field_is_refused_on_either_target_as_numba_does(target):
    from cujit.options import Options
    from cujit.pipeline import compile_kernel

    args = (typeof(np.zeros(2, PACKED)), typeof(np.zeros(1)))
    with pytest.raises(TypingError) as info:  # stage 6: no GPU needed
        compile_kernel(_packed_read, args, Options(target=target), stop_after="llvm")
    assert "field 'b' of type float64 is not aligned" in str(info.value)
    assert f"{__file__}:{_line_of(_packed_read, '# <- misaligned')}:" in str(info.value)
    aligned = (typeof(np.zeros(2, ALIGNED)), typeof(np.zeros(1)))
    compile_kernel(_packed_read, aligned, Options(target=target), stop_after="llvm")
    with pytest.raises(TypingError, match="field 'b' of type float64 is not aligned"):
        compile_kernel(_packed_write, args, Options(target=target), stop_after="llvm")


def test_the_cpu_target_reads_an_aligned_field_of_the_same_record():
    out = np.zeros(1)
    cuda.jit(_packed_read, target="cpu")[1, 1](_sample(ALIGNED), out)
    assert out[0] == _sample(ALIGNED)[0]["b"]


def test_numbas_record_types_convert():
    ns = pytest.importorskip("numba.np.numpy_support")
    from cujit.types import to_type

    for dt in (ALIGNED, PACKED, NESTED):
        assert to_type(ns.from_dtype(dt)) == from_dtype(dt)
        assert to_type(ns.from_dtype(dt)[:]) == Array(from_dtype(dt), 1, "A") == from_dtype(dt)[:]

    @cuda.jit((ns.from_dtype(ALIGNED)[:],), target="cpu")
    def k(a):
        a[1].a = a[1].b

    a = _sample(ALIGNED)
    k[1, 1](a)
    assert a[1]["a"] == a[1]["b"]


def _line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


def _unknown_field(ary):
    ary[0].z = 1  # <- unknown


def _unknown_field_read(ary, out):
    out[0] = ary[0]["nope"]  # <- unknown read


def _wrong_record_type(ary, other):
    ary[0] = other[0]  # <- wrong record


def _array_into_scalar_field(ary, other):
    ary[0].b = other  # <- array into scalar


@pytest.mark.parametrize(
    "fn,args,marker,words",
    [
        (_unknown_field, (np.zeros(2, ALIGNED),), "# <- unknown", "no field 'z'"),
        (
            _unknown_field_read,
            (np.zeros(2, ALIGNED), np.zeros(1)),
            "# <- unknown read",
            "no field 'nope'",
        ),
        (
            _wrong_record_type,
            (np.zeros(2, ALIGNED), np.zeros(2, PACKED)),
            "# <- wrong record",
            "of another type",
        ),
        (
            _array_into_scalar_field,
            (np.zeros(2, ALIGNED), np.zeros(2)),
            "# <- array into scalar",
            "storing into field 'b' of type int32 needs a number",
        ),
    ],
)
def test_misuse_is_an_error_at_the_users_line(fn, args, marker, words):
    k = cuda.jit(fn, target="cpu")
    with pytest.raises(TypingError) as info:
        k[1, 1](*args)
    text = str(info.value)
    assert f"{__file__}:{_line_of(fn, marker)}:" in text.splitlines()[0]
    assert words in text
    if "no field" in words:
        assert "its fields are a, b, c, d, e" in text


def test_attribute_store_on_a_non_record_is_refused():
    def k(x):
        x.shape = 3

    with pytest.raises(UnsupportedError, match="only a record's fields"):
        cuda.jit(k, target="cpu")[1, 1](np.zeros(3, np.int32))


# Aligned: the CUDA target refuses a misaligned float64 field, as numba does.
CONST_TABLE = np.array(
    [(1, 2.5, [1, 2]), (3, 4.5, [5, 6])],
    dtype=np.dtype([("k", np.uint8), ("v", np.float64), ("w", np.int16, 2)], align=True),
)


@pytest.mark.parametrize("target", TARGETS)
def test_constant_record_arrays_are_read(target):
    @cuda.jit(target=target)
    def k(out):
        c = cuda.const.array_like(CONST_TABLE)
        i = cuda.grid(1)
        if i < len(c):
            out[i] = c[i].k + c[i]["v"] + c[i].w[1]

    out = np.full(2, np.nan)
    k[1, 2](out)
    np.testing.assert_array_equal(out, CONST_TABLE["k"] + CONST_TABLE["v"] + CONST_TABLE["w"][:, 1])


def _writes_constant_record(out):
    c = cuda.const.array_like(CONST_TABLE)
    c[0].v = 1.0  # <- constant


def test_storing_into_a_constant_record_is_refused():
    with pytest.raises(TypingError) as info:
        cuda.jit(_writes_constant_record, target="cpu")[1, 1](np.zeros(1))
    assert "a constant array" in str(info.value)
    assert f":{_line_of(_writes_constant_record, '# <- constant')}:" in str(info.value)


@pytest.mark.parametrize("target", TARGETS)
def test_augmented_field_assignment_and_shared_record_reduction(target):
    @cuda.jit(target=target)
    def k(data, out):
        sm = cuda.shared.array(32, dtype=INNER)
        acc = cuda.local.array(1, dtype=INNER)
        idx = cuda.threadIdx.x
        sm[idx].x = data.x + idx
        sm[idx]["y"] = data.y * idx
        cuda.syncthreads()
        if idx == 0:
            acc[0].x = 0
            acc[0].y = 0.0
            for i in range(32):
                acc[0].x += sm[i].x
                acc[0]["y"] += sm[i]["y"]
            out[0] = acc[0]

    data = np.array([(3, 1.5)], INNER)
    out = np.zeros(1, INNER)
    k[1, 32](data[0], out)
    i = np.arange(32)
    assert out[0]["x"] == (3 + i).sum() and out[0]["y"] == (1.5 * i).sum()
