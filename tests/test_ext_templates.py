"""Typing templates of the extension API (numba's ``ConcreteTemplate``,
``AbstractTemplate``, ``CallableTemplate``), in the style of cuDF's masked_typing.py.

A library written against numba's names, imported from cujit: a masked-value type whose
constructor is typed by a ``ConcreteTemplate`` filed with ``register_global(fn,
types.Function(T))``, arithmetic, comparisons and negation typed by ``AbstractTemplate``s
filed with ``register_global(operator.add)(T)`` (their result types asked of
``self.context.resolve_function_type``) and built by ``lower`` implementations that
``compile_internal`` the scalar operation; a ``CallableTemplate``; templates filed in a
library's own ``Registry`` and ``imputils.Registry``; ``lower_getattr_generic``.
Kernels run on the CPU target and values are checked against plain Python; bad
templates and implementations are cujit errors at the user's line.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cujit
from cujit import cuda, types
from cujit.cache.key import kernel_key
from cujit.cuda import cgutils, imputils
from cujit.cuda.cudadecl import registry as cuda_decl_registry
from cujit.cuda.cudaimpl import lower as cuda_lower
from cujit.cuda.cudaimpl import lower_getattr_generic
from cujit.cuda.extending import make_attribute_wrapper, models, register_model
from cujit.cuda.typing import signature as nb_signature
from cujit.cuda.typing.templates import (
    AbstractTemplate,
    AttributeTemplate,
    CallableTemplate,
    ConcreteTemplate,
    Registry,
)
from cujit.diagnostics import LoweringError, TypingError
from cujit.options import Options


class MaskedValue:
    """The host's masked value."""

    def __init__(self, value, valid):
        self.value, self.valid = value, valid


class MType(types.Type):
    def __init__(self, value):
        self.value_type = value
        super().__init__(name=f"M({value})")


@register_model(MType)
class MModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("value", fe_type.value_type), ("valid", types.bool_)])


make_attribute_wrapper(MType, "value", "value")
make_attribute_wrapper(MType, "valid", "valid")

VALUE_TYPES = (types.int64, types.float64)


class MConstructor(ConcreteTemplate):
    key = MaskedValue
    cases = [nb_signature(MType(t), t, types.boolean) for t in VALUE_TYPES]


cuda_decl_registry.register_global(MaskedValue, types.Function(MConstructor))


def _construct(context, builder, sig, args):
    m = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    m.value, m.valid = args
    return m._getvalue()


for _t in VALUE_TYPES:
    cuda_lower(MaskedValue, _t, types.boolean)(_construct)


class MaskedArith(AbstractTemplate):
    """``M op M``: the value types' result, masked."""

    def generic(self, args, kws):
        if len(args) == 2 and all(isinstance(a, MType) for a in args):
            inner = self.context.resolve_function_type(
                self.key, (args[0].value_type, args[1].value_type), kws
            )
            return nb_signature(MType(inner.return_type), *args)
        return None


class MaskedScalar(AbstractTemplate):
    """``M op number`` (either side)."""

    def generic(self, args, kws):
        if len(args) != 2:
            return None
        if isinstance(args[0], MType) and isinstance(args[1], types.Number):
            inner = (args[0].value_type, args[1])
        elif isinstance(args[1], MType) and isinstance(args[0], types.Number):
            inner = (args[0], args[1].value_type)
        else:
            return None
        rt = self.context.resolve_function_type(self.key, inner, kws).return_type
        return nb_signature(MType(rt), *args)


class MaskedUnary(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], MType):
            rt = self.context.resolve_function_type(self.key, (args[0].value_type,), kws)
            return nb_signature(MType(rt.return_type), args[0])
        return None


def _binary_impl(op):
    def impl(context, builder, sig, args):
        (t1, t2), rt = sig.args, sig.return_type
        parts, valid = [], context.get_constant(types.boolean, 1)
        for t, v in zip((t1, t2), args, strict=True):
            if isinstance(t, MType):
                s = cgutils.create_struct_proxy(t)(context, builder, value=v)
                parts.append((t.value_type, s.value))
                valid = builder.and_(valid, s.valid)
            else:
                parts.append((t, v))
        out = cgutils.create_struct_proxy(rt)(context, builder)
        out.valid = valid
        with builder.if_then(valid):
            inner = nb_signature(rt.value_type, parts[0][0], parts[1][0])
            vals = (parts[0][1], parts[1][1])
            out.value = context.compile_internal(builder, lambda x, y: op(x, y), inner, vals)
        return out._getvalue()

    return impl


def _neg_impl(context, builder, sig, args):
    m = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    out = cgutils.create_struct_proxy(sig.return_type)(context, builder)
    out.valid = m.valid
    out.value = context.compile_internal(
        builder,
        lambda x: -x,
        nb_signature(sig.return_type.value_type, sig.args[0].value_type),
        (m.value,),
    )
    return out._getvalue()


BINARY = (operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.ge)
for _op in BINARY:
    # one template class for every operator: each filing is keyed by its operator
    cuda_decl_registry.register_global(_op)(MaskedArith)
    cuda_decl_registry.register_global(_op)(MaskedScalar)
    cuda_lower(_op, MType, MType)(_binary_impl(_op))
    cuda_lower(_op, MType, types.Number)(_binary_impl(_op))
    cuda_lower(_op, types.Number, MType)(_binary_impl(_op))
cuda_decl_registry.register_global(operator.neg)(MaskedUnary)
cuda_lower(operator.neg, MType)(_neg_impl)


def _unary_impl(fn):
    def impl(context, builder, sig, args):
        (t,), rt = sig.args, sig.return_type
        m = cgutils.create_struct_proxy(t)(context, builder, value=args[0])
        out = cgutils.create_struct_proxy(rt)(context, builder)
        out.valid = m.valid
        with builder.if_then(m.valid):
            inner = nb_signature(rt.value_type, t.value_type)
            out.value = context.compile_internal(builder, lambda x: fn(x), inner, (m.value,))
        return out._getvalue()

    return impl


# built-ins cujit types itself take a masked value through the library's templates; the
# result type is what kernels give fn(value) (resolve_function_type)
for _fn in (abs, math.sqrt, math.floor):
    cuda_decl_registry.register_global(_fn)(MaskedUnary)
    cuda_lower(_fn, MType)(_unary_impl(_fn))


def cpu(fn):
    return cuda.jit(target="cpu")(fn)


def _poisoned(n):
    return np.full(n, np.nan), np.zeros(n, np.bool_)


def _py_masked(op, a, b):
    """Plain Python's masked arithmetic (an invalid result's value is not checked)."""
    valid = all(getattr(v, "valid", True) for v in (a, b))
    values = [getattr(v, "value", v) for v in (a, b)]
    return MaskedValue(op(*values) if valid else None, valid)


def _check(out_v, out_ok, want):
    np.testing.assert_array_equal(out_ok, [m.valid for m in want])
    for got, m in zip(out_v, want, strict=True):
        if m.valid:
            assert got == pytest.approx(m.value, rel=1e-15), (got, m.value)


def _arith(out_v, out_ok, x, n, vx):
    i = cuda.grid(1)
    if i < x.size:
        a = MaskedValue(x[i], vx[i])
        b = MaskedValue(n[i], True)
        r = -(a * b - a / 4.0) + (2 + b)  # M(float64) and M(int64) and numbers
        out_v[i] = r.value
        out_ok[i] = r.valid


X = np.array([1.5, -2.25, 3.0, 0.5, 8.0])
N = np.array([3, -1, 4, 1, -5], np.int64)
VX = np.array([1, 1, 0, 1, 1], np.bool_)


ARITH_SIG = (
    types.float64[::1],
    types.bool_[::1],
    types.float64[::1],
    types.int64[::1],
    types.bool_[::1],
)


def _want_arith():
    want = []
    for i in range(5):
        a, b = MaskedValue(X[i], bool(VX[i])), MaskedValue(int(N[i]), True)
        r = _py_masked(
            operator.sub, _py_masked(operator.mul, a, b), _py_masked(operator.truediv, a, 4.0)
        )
        r = MaskedValue(-r.value if r.valid else None, r.valid)
        want.append(_py_masked(operator.add, r, _py_masked(operator.add, 2, b)))
    return want


def test_operators_typed_by_abstract_templates_cpu():
    out_v, out_ok = _poisoned(5)
    cpu(_arith)[1, 8](out_v, out_ok, X, N, VX)
    _check(out_v, out_ok, _want_arith())


def test_comparisons_typed_by_templates_cpu():
    @cpu
    def k(out_v, out_ok, x, n):
        i = cuda.grid(1)
        if i < x.size:
            c = MaskedValue(x[i], True) < MaskedValue(n[i], n[i] > 0)
            d = MaskedValue(x[i], True) >= 1
            out_v[i] = c.value + 2 * d.value
            out_ok[i] = c.valid and d.valid

    out_v, out_ok = _poisoned(5)
    k[1, 5](out_v, out_ok, X, N)
    want = [MaskedValue(float(X[i] < N[i]) + 2 * (X[i] >= 1), bool(N[i] > 0)) for i in range(5)]
    _check(out_v, out_ok, want)


def test_concrete_template_picks_the_case_the_arguments_convert_to_cpu():
    @cpu
    def k(out_v, out_ok, small, f32):
        i = cuda.grid(1)
        if i < small.size:
            a = MaskedValue(small[i], True)  # int32: the int64 case (without loss)
            b = MaskedValue(f32[i], False)  # float32: the float64 case
            out_v[i] = a.value + b.value
            out_ok[i] = a.valid and not b.valid

    small = np.array([7, -3, 100], np.int32)
    f32 = np.array([0.5, 0.25, -1.5], np.float32)
    out_v, out_ok = _poisoned(3)
    k[1, 3](out_v, out_ok, small, f32)
    np.testing.assert_array_equal(out_v, small.astype(np.float64) + f32.astype(np.float64))
    assert out_ok.all()


@cuda_decl_registry.register_global(operator.truth)
class MaskedTruth(AbstractTemplate):
    """``if m:``: true where ``m`` is valid and its value is."""

    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], MType):
            return nb_signature(types.boolean, args[0])
        return None


@cuda_lower(operator.truth, MType)
def _truth(context, builder, sig, args):
    m = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
    value = context.cast(builder, m.value, sig.args[0].value_type, types.boolean)
    return builder.and_(m.valid, value)


def test_conditions_on_masked_values_use_their_truth_template_cpu():
    @cpu
    def k(out, x, vx):
        i = cuda.grid(1)
        if i < x.size:
            m = MaskedValue(x[i], vx[i])
            if m >= 2.0:  # an M(bool) as a condition
                out[i] = 1.0
            elif not m:
                out[i] = 2.0
            else:
                out[i] = 3.0

    out = np.full(5, np.nan)
    k[1, 5](out, X, VX)
    want = []
    for v, ok in zip(X, VX, strict=True):
        want.append(1.0 if ok and v >= 2.0 else 2.0 if not (ok and v != 0) else 3.0)
    np.testing.assert_array_equal(out, want)


def test_builtins_of_masked_values_typed_by_templates_cpu():
    @cpu
    def k(out_v, out_ok, x, n, vx):
        i = cuda.grid(1)
        if i < x.size:
            a = abs(MaskedValue(n[i], vx[i]))  # M(int64)
            r = math.sqrt(abs(MaskedValue(x[i], True))) + math.floor(MaskedValue(x[i], True)) + a
            out_v[i] = r.value
            out_ok[i] = r.valid

    out_v, out_ok = _poisoned(5)
    k[1, 5](out_v, out_ok, X, N, VX)
    want = [
        MaskedValue(math.sqrt(abs(X[i])) + math.floor(X[i]) + abs(int(N[i])), bool(VX[i]))
        for i in range(5)
    ]
    _check(out_v, out_ok, want)


def clamp01(x):
    """A library function typed by a CallableTemplate and built by its lowering."""
    return min(max(x, 0.0), 1.0)


@cuda_decl_registry.register_global(clamp01)
class Clamp01(CallableTemplate):
    def generic(self):
        def typer(x):
            if isinstance(x, types.Float):
                return x  # the result type: a signature of (x,) -> x
            return None

        return typer


@cuda_lower(clamp01, types.Float)
def _clamp01(context, builder, sig, args):
    return context.compile_internal(builder, lambda x: min(max(x, 0.0), 1.0), sig, args)


def test_callable_template_cpu():
    @cpu
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = clamp01(x[i])

    x = np.array([-0.5, 0.25, 1.75, 1.0])
    out = np.full(4, np.nan)
    k[1, 4](out, x)
    np.testing.assert_array_equal(out, [clamp01(v) for v in x])


# A library's own registries (numba.core.typing.templates.Registry, numba.core.imputils.Registry)
lib_typing = Registry("my library")
lib_lowering = imputils.Registry("my library")


def weighted(a, b):
    return 0.25 * a + 0.75 * b


@lib_typing.register
class Weighted(ConcreteTemplate):
    key = weighted
    cases = [nb_signature(types.float64, types.float64, types.float64)]


@lib_lowering.lower(weighted, types.float64, types.float64)
def _weighted(context, builder, sig, args):
    return context.compile_internal(builder, lambda a, b: 0.25 * a + 0.75 * b, sig, args)


class Span(types.Type):
    def __init__(self):
        super().__init__(name="Span")


span = Span()


@register_model(Span)
class SpanModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("lo", types.float64), ("hi", types.float64)])


def make_span(lo, hi):
    pass


cuda_decl_registry.register_global(
    make_span,
    types.Function(
        type(
            "SpanCtor", (ConcreteTemplate,), {"key": make_span, "cases": [span(types.f8, types.f8)]}
        )
    ),
)


@cuda_lower(make_span, types.float64, types.float64)
def _make_span(context, builder, sig, args):
    s = cgutils.create_struct_proxy(span)(context, builder)
    s.lo, s.hi = args
    return s._getvalue()


@cuda_decl_registry.register_attr
class SpanAttrs(AttributeTemplate):
    key = Span

    def generic_resolve(self, ty, attr):
        return types.float64 if attr in ("width", "middle") else None


@lower_getattr_generic(Span)
def _span_attr(context, builder, ty, value, attr):
    s = cgutils.create_struct_proxy(ty)(context, builder, value=value)
    if attr == "width":
        return builder.fsub(s.hi, s.lo)
    return builder.fmul(builder.fadd(s.hi, s.lo), context.get_constant(types.float64, 0.5))


def test_library_registries_and_generic_attributes_cpu():
    @cpu
    def k(out, x, y):
        i = cuda.grid(1)
        if i < x.size:
            s = make_span(x[i], y[i])
            out[i] = weighted(s.width, s.middle)

    x, y = np.array([0.0, -2.0, 1.5]), np.array([4.0, 3.0, 1.75])
    out = np.full(3, np.nan)
    k[1, 3](out, x, y)
    np.testing.assert_allclose(
        out, [weighted(b - a, (a + b) / 2) for a, b in zip(x, y, strict=True)], rtol=1e-15
    )
    assert Weighted in lib_typing.functions
    assert [impl for impl, *_ in lib_lowering.functions] == [_weighted]


def test_templates_compile_for_the_cuda_target():
    sig = ARITH_SIG
    ptx, _ = cuda.compile_ptx(_arith, sig)
    assert ".entry" in ptx and "_arith" in ptx


@pytest.mark.gpu
def test_operators_typed_by_abstract_templates_gpu():
    out_v, out_ok = _poisoned(5)
    cuda.jit(_arith)[1, 8](out_v, out_ok, X, N, VX)
    _check(out_v, out_ok, _want_arith())


class LibraryRefusal(Exception):
    pass


def refusing(x):
    pass


@cuda_decl_registry.register_global(refusing)
class Refusing(AbstractTemplate):
    def generic(self, args, kws):
        raise LibraryRefusal(f"refusing takes no {args[0]}")


def garbage(x):
    pass


@cuda_decl_registry.register_global(garbage)
class Garbage(AbstractTemplate):
    def generic(self, args, kws):
        return 42  # neither a signature nor a type


def unlowered(x):
    pass


@cuda_decl_registry.register_global(unlowered)
class Unlowered(AbstractTemplate):
    def generic(self, args, kws):
        return nb_signature(types.float64, *args)


def wrong_type(x):
    pass


@cuda_decl_registry.register_global(wrong_type)
class WrongType(AbstractTemplate):
    def generic(self, args, kws):
        return nb_signature(types.float64, *args)


@cuda_lower(wrong_type, types.float64)
def _wrong_type(context, builder, sig, args):
    return context.get_constant(types.int32, 3)  # an i32 where a double is due


def _line(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def _caller(fn):
    def k(out, x):
        out[0] = fn(x[0])  # the call

    return k


@pytest.mark.parametrize(
    "fn, error, message",
    [
        (refusing, LibraryRefusal, "LibraryRefusal: refusing takes no float64"),
        (garbage, TypingError, "returned 42, not a signature"),
        (unlowered, TypingError, r"unlowered is typed \(float64\) -> float64 but has no impl"),
        (wrong_type, LoweringError, "returned a value of LLVM type i32, not a value of float64"),
    ],
)
def test_bad_templates_and_implementations_are_errors_at_the_users_line(fn, error, message):
    k = _caller(fn)
    with pytest.raises(error, match=message) as err:
        cpu(k)[1, 1](np.zeros(1), np.ones(1))
    assert isinstance(err.value, (TypingError, LoweringError))
    assert err.value.loc.file == __file__ and err.value.loc.line == _line(k, "# the call")
    assert os.path.dirname(cujit.__file__) not in str(err.value)
    out_v, out_ok = _poisoned(5)  # the process goes on
    cpu(_arith)[1, 8](out_v, out_ok, X, N, VX)
    _check(out_v, out_ok, _want_arith())


def test_templates_are_part_of_the_cache_key():
    sig = ARITH_SIG
    before = kernel_key(_arith, sig, Options())
    assert before is not None and before == kernel_key(_arith, sig, Options())

    class MaskedPow(AbstractTemplate):
        def generic(self, args, kws):
            return None

    cuda_decl_registry.register_global(operator.pow)(MaskedPow)  # an operator's template
    after = kernel_key(_arith, sig, Options())
    assert after != before

    def calls_clamp(out, x):
        out[0] = clamp01(x[0])

    args = (types.float64[::1], types.float64[::1])
    clamp_before = kernel_key(calls_clamp, args, Options())

    @cuda_decl_registry.register_global(clamp01)
    class Clamp01Again(CallableTemplate):
        def generic(self):
            return None

    assert kernel_key(calls_clamp, args, Options()) != clamp_before


DROP_IN = textwrap.dedent("""
    import json, operator
    import cujit; cujit.install_numba_drop_in()
    import numpy as np
    from numba import cuda
    from numba.cuda import cgutils, types
    from numba.cuda.cudadecl import registry as decl
    from numba.cuda.cudaimpl import lower, registry as impl_registry
    from numba.cuda.core.imputils import Registry as ImplRegistry
    from numba.cuda.extending import make_attribute_wrapper, models, register_model
    from numba.cuda.typing import signature
    from numba.cuda.typing.templates import AbstractTemplate, ConcreteTemplate

    class Box:
        pass

    class BoxType(types.Type):
        def __init__(self):
            super().__init__(name="Box")

    box = BoxType()

    @register_model(BoxType)
    class BoxModel(models.StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, [("v", types.float64)])

    make_attribute_wrapper(BoxType, "v", "v")

    @decl.register_global(Box)
    class BoxCtor(ConcreteTemplate):
        cases = [signature(box, types.float64)]

    @lower(Box, types.float64)
    def box_ctor(context, builder, sig, args):
        b = cgutils.create_struct_proxy(box)(context, builder)
        b.v = args[0]
        return b._getvalue()

    @decl.register_global(operator.add)
    class BoxAdd(AbstractTemplate):
        def generic(self, args, kws):
            if all(isinstance(a, BoxType) for a in args):
                return signature(box, *args)

    @lower(operator.add, BoxType, BoxType)
    def box_add(context, builder, sig, args):
        a = cgutils.create_struct_proxy(box)(context, builder, value=args[0])
        b = cgutils.create_struct_proxy(box)(context, builder, value=args[1])
        out = cgutils.create_struct_proxy(box)(context, builder)
        out.v = builder.fadd(a.v, b.v)
        return out._getvalue()

    @impl_registry.lower_cast(types.Float, BoxType)
    def float_to_box(context, builder, fromty, toty, val):
        out = cgutils.create_struct_proxy(box)(context, builder)
        out.v = context.cast(builder, val, fromty, types.float64)
        return out._getvalue()

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < x.size:
            b = Box(x[i]) + Box(1.5)
            if x[i] < 0:
                b = x[i] * 4  # a float64 merged into a Box
            out[i] = b.v

    x = np.array([2.0, -1.0, 0.25])
    out = np.full(3, np.nan)
    k[1, 3](out, x)
    print(json.dumps({"out": out.tolist(), "imputils": ImplRegistry.__module__}))
""")


def test_a_library_written_for_numba_cuda_runs_under_the_drop_in(tmp_path):
    path = tmp_path / "numba_style_library.py"
    path.write_text(DROP_IN)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(cujit.__file__)))
    env.update(NUMBA_ENABLE_CUDASIM="1")
    env.pop("CUJIT_TARGET", None)
    proc = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["out"] == [2.0 + 1.5, -1.0 * 4, 0.25 + 1.5]
    assert got["imputils"] == "cujit.cuda.imputils"
