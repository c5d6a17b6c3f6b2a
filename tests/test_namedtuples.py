"""Namedtuples (``collections.namedtuple`` and ``typing.NamedTuple`` classes) as kernel
arguments and as values in kernels and device functions: run on the CPU target
everywhere and on the GPU where there is one (marked ``gpu``) from the same test
bodies, compiled to PTX and a cubin for sm_90, and their typing errors pinned to the
user's line.
"""

from __future__ import annotations

import collections
import inspect
import math
import typing

import numpy as np
import pytest

from cujit import cuda
from cujit.cache.key import kernel_key
from cujit.diagnostics import CompileError, TypingError
from cujit.ir.printer import format_function
from cujit.options import Options
from cujit.pipeline import compile_kernel
from cujit.targets.cpu import memory as cpu_memory
from cujit.types import NamedTuple, NamedUniTuple, Tuple, float32, float64, int64, typeof, void

TARGETS = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


class Params(typing.NamedTuple):
    alpha: float
    n: int


class Mixed(typing.NamedTuple):
    values: object  # an array
    scale: float
    offset: int
    flip: bool


Point = collections.namedtuple("Point", "x y")
Pair = collections.namedtuple("Pair", "x y")  # the same fields as Point: another type
Scaled = collections.namedtuple("Scaled", "value factor", defaults=[2.0])
Segment = collections.namedtuple("Segment", "a b")

ORIGIN = Point(0.5, -1.5)  # a global namedtuple constant


def to_device(target: str):
    return cuda.to_device if target == "cuda" else cpu_memory.to_device


# -- running ---------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_params_argument(target):
    @cuda.jit(target=target)
    def axpy(p, x, y, out):
        i = cuda.grid(1)
        if i < p.n:
            out[i] = p.alpha * x[i] + y[i]

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(100), rng.standard_normal(100)
    out = np.zeros(100)
    axpy[1, 128](Params(alpha=2.5, n=70), x, y, out)
    expected = np.zeros(100)
    expected[:70] = 2.5 * x[:70] + y[:70]
    np.testing.assert_allclose(out, expected)
    (types,) = axpy.overloads
    assert types[0] == NamedTuple((float64, int64), Params)


@pytest.mark.parametrize("where", ["host", "device"])
@pytest.mark.parametrize("target", TARGETS)
def test_heterogeneous_fields_with_arrays(target, where):
    @cuda.jit(target=target)
    def apply(m, io):
        i = cuda.grid(1)
        if i < m.values.size:
            v = m.values[i] * m.scale + m.offset
            io.y[i] = -v if m.flip else v
            io.x[i] = len(m) + len(io)

    rng = np.random.default_rng(2)
    values = rng.standard_normal(50).astype(np.float32)
    ys, xs = np.zeros(50, np.float32), np.zeros(50, np.int32)
    if where == "device":
        dev = to_device(target)
        args = (Mixed(dev(values), np.float32(3.0), np.int32(-2), True), Point(dev(xs), dev(ys)))
    else:
        args = (Mixed(values, np.float32(3.0), np.int32(-2), True), Point(xs, ys))
    apply[2, 32](*args)
    got_x, got_y = args[1]
    if where == "device":
        got_x, got_y = got_x.copy_to_host(), got_y.copy_to_host()
    # float32 * float32 rounds to float32; adding the int32 computes in float64
    expected = -((values * np.float32(3.0)).astype(np.float64) - 2)
    np.testing.assert_allclose(got_y, expected.astype(np.float32), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got_x, 6)
    (types,) = apply.overloads
    assert [str(t) for t in types[0].items[1:]] == ["float32", "int32", "bool"]


@cuda.jit(device=True)
def rotate(p, angle):
    """A namedtuple in, a namedtuple of another class out."""
    c, s = math.cos(angle), math.sin(angle)
    return Pair(c * p.x - s * p.y, y=s * p.x + c * p.y)


@cuda.jit(device=True)
def norm2(q):
    x, y = q  # unpacking
    return x * x + y * y


@pytest.mark.parametrize("target", TARGETS)
def test_built_in_kernel_and_returned_by_device_function(target):
    @cuda.jit(target=target)
    def kernel(xs, angles, out):
        i = cuda.grid(1)
        if i < xs.size:
            p = Point(xs[i], y=1.0)  # positional and keyword
            r = rotate(p, angles[i])
            s = Scaled(r[0])  # the default factor
            out[i, 0] = r.x
            out[i, 1] = r[1]
            out[i, 2] = norm2(r)
            out[i, 3] = s.value * s.factor + len(s)
            out[i, 4] = ORIGIN.x + ORIGIN[1]

    rng = np.random.default_rng(3)
    xs, angles = rng.standard_normal(40), rng.uniform(0, 6, 40)
    out = np.zeros((40, 5))
    kernel[1, 64](xs, angles, out)
    rx = np.cos(angles) * xs - np.sin(angles)
    ry = np.sin(angles) * xs + np.cos(angles)
    close = {"rtol": 1e-9, "atol": 1e-12}  # libdevice's cos/sin, contracted multiply-adds
    np.testing.assert_allclose(out[:, 0], rx, **close)
    np.testing.assert_allclose(out[:, 1], ry, **close)
    np.testing.assert_allclose(out[:, 2], xs * xs + 1.0, **close)
    np.testing.assert_allclose(out[:, 3], rx * 2.0 + 2, **close)
    np.testing.assert_array_equal(out[:, 4], -1.0)


@pytest.mark.parametrize("target", TARGETS)
def test_specialised_by_class(target):
    @cuda.jit(target=target)
    def first_minus_second(p, out):
        out[0] = p[0] - p[1]

    out = np.zeros(1)
    results = []
    for arg in (Point(5.0, 2.0), Pair(7.0, 1.0), (3.0, 1.0), Point(1, 4)):
        first_minus_second[1, 1](arg, out)
        results.append(out[0])
    assert results == [3.0, 6.0, 2.0, -3.0]
    keys = [types[0] for types in first_minus_second.overloads]
    assert keys == [
        NamedTuple((float64, float64), Point),
        NamedTuple((float64, float64), Pair),
        Tuple((float64, float64)),
        NamedTuple((int64, int64), Point),
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_nested_merged_and_closure_class(target):
    Acc = collections.namedtuple("Acc", "total count")  # a closure class

    @cuda.jit(device=True)
    def length(seg):
        dx, dy = seg.b.x - seg.a.x, seg.b.y - seg.a.y
        return math.sqrt(dx * dx + dy * dy)

    @cuda.jit(target=target)
    def kernel(segs, flags, out):
        i = cuda.grid(1)
        if i < flags.size:
            acc = Acc(0, 0)  # int64 items, merged below with float64 ones
            if flags[i]:
                acc = Acc(length(segs) * i, 1)
            out[i] = acc.total + acc.count

    seg = Segment(Point(0.0, 0.0), Point(3.0, 4.0))
    flags = np.array([1, 0, 1, 1, 0], np.int32)
    out = np.zeros(5)
    kernel[1, 8](seg, flags, out)
    np.testing.assert_allclose(out, np.where(flags, 5.0 * np.arange(5) + 1, 0))


# -- types -------------------------------------------------------------------------


def test_types_are_keyed_on_class_and_items():
    a = NamedTuple((float64, int64), Point)
    assert a == NamedTuple([float64, int64], Point) and hash(a) == hash(
        NamedTuple((float64, int64), Point)
    )
    assert a != NamedTuple((float64, int64), Pair)
    assert a != Tuple((float64, int64)) and Tuple((float64, int64)) != a
    assert a != NamedTuple((float64, float64), Point)
    assert NamedUniTuple(float32, 2, Point) == NamedTuple((float32, float32), Point)
    assert str(a) == "Point(x: float64, y: int64)"
    assert typeof(Params(1.0, 2)) == NamedTuple((float64, int64), Params)
    assert typeof(Segment(Point(1, 2), 3.0)).items[0] == NamedTuple((int64, int64), Point)
    assert typeof((1.0, 2)) == Tuple((float64, int64))
    assert cuda.types.NamedTuple is NamedTuple
    with pytest.raises(TypeError, match="Point has 2 fields, not 3"):
        NamedTuple((float64,) * 3, Point)


def test_eager_signature():
    @cuda.jit(void(NamedTuple((float64, int64), Params), float64[:]), target="cpu")
    def fill(p, out):
        i = cuda.grid(1)
        if i < p.n:
            out[i] = p.alpha

    out = np.zeros(4)
    fill[1, 4](Params(1.5, 3), out)
    np.testing.assert_array_equal(out, [1.5, 1.5, 1.5, 0.0])


def test_cache_key_covers_the_fields():
    def kernel_reading(cls):
        def read_x(out):
            out[0] = cls(1.0, 2.0).x

        return read_x

    def key(cls):
        return kernel_key(kernel_reading(cls), (float64[:],), Options())

    assert key(collections.namedtuple("C", "x y")) == key(collections.namedtuple("C", "x y"))
    assert key(collections.namedtuple("C", "x y")) != key(collections.namedtuple("C", "y x"))
    with_default = collections.namedtuple("C", "x y", defaults=[3.0])
    assert key(collections.namedtuple("C", "x y")) != key(with_default)


# -- compiling for sm_90 -------------------------------------------------------------


def axpy_params(p, x, out):
    i = cuda.grid(1)
    if i < p.n:
        q = rotate(Point(x[i], p.alpha), 0.5)
        out[i] = q.x + norm2(q)


AXPY_TYPES = (NamedTuple((float64, int64), Params), float64[::1], float64[::1])


def test_ptx_and_cubin_sm90():
    result = compile_kernel(axpy_params, AXPY_TYPES, Options(arch=(9, 0), verify=True))
    assert ".target sm_90" in result.ptx and result.cubin[:4] == b"\x7fELF"
    params = [
        line
        for line in result.ptx.splitlines()
        if line.strip().startswith(".param") and result.symbol in line
    ]
    # The ABI: a double and an int64; the C-contiguous arrays: pointer and extent each.
    # Of those the kernel reads all but the arrays' extents (i is in [0, p.n)).
    assert result.kept == (True, True, True, False, True, False)
    assert len(params) == 4
    assert ".param .f64" in params[0] and ".param .u64" in params[1]


def test_typed_ir_reads_fields_by_index():
    fn = compile_kernel(axpy_params, AXPY_TYPES, Options(verify=True), stop_after="typed").outputs[
        "typed"
    ]
    assert fn.args[0].type == AXPY_TYPES[0]
    typed = format_function(fn)
    assert "getattr" not in typed
    assert "int64 = tupleget %0 1" in typed  # p.n
    assert "Point(x: float64, y: float64) = buildtuple" in typed
    assert "callfunction 'norm2(Pair(x: float64, y: float64))'" in typed


def test_compile_ptx_with_namedtuple_signature():
    ptx, rt = cuda.compile_ptx(axpy_params, void(*AXPY_TYPES), cc=(9, 0))
    assert ".target sm_90" in ptx and rt == void


# -- errors at the user's line -------------------------------------------------------


def unknown_field(p, out):
    out[0] = p.beta  # <-


def too_many_fields(p, out):
    q = Params(1.0, 2, 3)  # <-
    out[0] = q.alpha


def too_few_fields(p, out):
    q = Params(1.0)  # <-
    out[0] = q.alpha


def unexpected_keyword(p, out):
    q = Params(alpha=1.0, m=2)  # <-
    out[0] = q.alpha


def field_given_twice(p, out):
    q = Params(1.0, alpha=2.0)  # <-
    out[0] = q.alpha


def missing_without_default(p, out):
    q = Scaled(factor=3.0)  # <-
    out[0] = q.value


def holds_a_function(p, out):
    q = Params(math.sqrt, 2)  # <-
    out[0] = q.n


def assigns_into(p, out):
    p[0] = 1.0  # <-


def mixes_classes(p, out):
    q = Point(1.0, 2.0)
    if out[0] > 0:
        q = Pair(1.0, 2.0)  # <-
    out[0] = q.x


ERROR_CASES = [
    (
        unknown_field,
        "namedtuple 'Params' has no field 'beta'",
        "p.beta",
        "Params has the fields alpha, n",
    ),
    (too_many_fields, "Params() takes 2 arguments (3 given)", "Params", None),
    (too_few_fields, "Params() takes 2 arguments (1 given)", "Params", None),
    (unexpected_keyword, "Params() got an unexpected keyword argument 'm'", "Params", None),
    (field_given_twice, "Params() got multiple values for 'alpha'", "Params", None),
    (missing_without_default, "Scaled() is missing its 'value' argument", "Scaled", None),
    (holds_a_function, "Params field 'alpha' cannot hold pyobject(math.sqrt)", "Params", None),
    (assigns_into, "tuples are immutable", "p[0]", None),
    (
        mixes_classes,
        (
            "variable 'q' holds Point(x: float64, y: float64) on one path and "
            "Pair(x: float64, y: float64) on another; give it one type on every path"
        ),
        "Pair(",
        None,
    ),
]


@pytest.mark.parametrize(
    "fn,message,at,hint", ERROR_CASES, ids=[c[0].__name__ for c in ERROR_CASES]
)
def test_typing_error_at_user_line(fn, message, at, hint):
    kernel = cuda.jit(fn, target="cpu")
    with pytest.raises(CompileError) as info:
        kernel.compile(void(NamedTuple((float64, int64), Params), float64[:]))
    err = info.value
    assert type(err) is TypingError
    lines, first = inspect.getsourcelines(fn)
    offset = next(k for k, text in enumerate(lines) if "# <-" in text)
    source = lines[offset].rstrip("\n")
    col = source.index(at) + 1
    out = str(err).splitlines()
    assert out[0] == f"{__file__}:{first + offset}:{col}: {TypingError.kind}: {message}"
    assert out[1] == "    " + source.strip()
    assert out[3:] == ([f"hint: {hint}"] if hint else [])
