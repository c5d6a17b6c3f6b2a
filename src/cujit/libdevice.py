"""libdevice's functions as numba.cuda's ``cuda.libdevice`` module names them: one table.

Each entry is a libdevice function (the "libdevice User's Guide" documents them):
its Python name (the symbol without ``__nv_``), its argument types and its result.
An argument written ``*t`` is an output the C function stores through a pointer; in
Python it is not passed but returned, after the C result (if any), so ``sincos(x)``
gives ``(sin, cos)`` and ``frexp(x)`` gives ``(fraction, exponent)``.  libdevice's
unsigned functions take and return the signed type of the same width, as in numba.

Type letters: ``f`` float32, ``d`` float64, ``h`` int16, ``i`` int32, ``l`` int64,
``v`` no result.  Kernels call ``cuda.libdevice.<name>(...)``; the call becomes the
intrinsic ``libdevice.<name>``, which the CUDA target lowers to a call of the
libdevice symbol and the CPU target to the host's equivalent
(``targets/cpu/libdevice.py``).
"""

from __future__ import annotations

import threading

from cujit import device_api, forksafe
from cujit.frozen import frozen
from cujit.types import Scalar, Tuple, Type, float32, float64, int16, int32, int64

_SPEC = """
abs i -> i; acos d -> d; acosf f -> f; acosh d -> d; acoshf f -> f; asin d -> d;
asinf f -> f; asinh d -> d; asinhf f -> f; atan d -> d; atan2 d d -> d; atan2f f f -> f;
atanf f -> f; atanh d -> d; atanhf f -> f; brev i -> i; brevll l -> l;
byte_perm i i i -> i; cbrt d -> d; cbrtf f -> f; ceil d -> d; ceilf f -> f; clz i -> i;
clzll l -> i; copysign d d -> d; copysignf f f -> f; cos d -> d; cosf f -> f; cosh d -> d;
coshf f -> f; cospi d -> d; cospif f -> f; dadd_rd d d -> d; dadd_rn d d -> d;
dadd_ru d d -> d; dadd_rz d d -> d; ddiv_rd d d -> d; ddiv_rn d d -> d; ddiv_ru d d -> d;
ddiv_rz d d -> d; dmul_rd d d -> d; dmul_rn d d -> d; dmul_ru d d -> d; dmul_rz d d -> d;
double2float_rd d -> f; double2float_rn d -> f; double2float_ru d -> f;
double2float_rz d -> f; double2hiint d -> i; double2int_rd d -> i; double2int_rn d -> i;
double2int_ru d -> i; double2int_rz d -> i; double2ll_rd d -> l; double2ll_rn d -> l;
double2ll_ru d -> l; double2ll_rz d -> l; double2loint d -> i; double2uint_rd d -> i;
double2uint_rn d -> i; double2uint_ru d -> i; double2uint_rz d -> i; double2ull_rd d -> l;
double2ull_rn d -> l; double2ull_ru d -> l; double2ull_rz d -> l;
double_as_longlong d -> l; drcp_rd d -> d; drcp_rn d -> d; drcp_ru d -> d; drcp_rz d -> d;
dsqrt_rd d -> d; dsqrt_rn d -> d; dsqrt_ru d -> d; dsqrt_rz d -> d; erf d -> d;
erfc d -> d; erfcf f -> f; erfcinv d -> d; erfcinvf f -> f; erfcx d -> d; erfcxf f -> f;
erff f -> f; erfinv d -> d; erfinvf f -> f; exp d -> d; exp10 d -> d; exp10f f -> f;
exp2 d -> d; exp2f f -> f; expf f -> f; expm1 d -> d; expm1f f -> f; fabs d -> d;
fabsf f -> f; fadd_rd f f -> f; fadd_rn f f -> f; fadd_ru f f -> f; fadd_rz f f -> f;
fast_cosf f -> f; fast_exp10f f -> f; fast_expf f -> f; fast_fdividef f f -> f;
fast_log10f f -> f; fast_log2f f -> f; fast_logf f -> f; fast_powf f f -> f;
fast_sincosf f *f *f -> v; fast_sinf f -> f; fast_tanf f -> f; fdim d d -> d;
fdimf f f -> f; fdiv_rd f f -> f; fdiv_rn f f -> f; fdiv_ru f f -> f; fdiv_rz f f -> f;
ffs i -> i; ffsll l -> i; finitef f -> i; float2half_rn f -> h; float2int_rd f -> i;
float2int_rn f -> i; float2int_ru f -> i; float2int_rz f -> i; float2ll_rd f -> l;
float2ll_rn f -> l; float2ll_ru f -> l; float2ll_rz f -> l; float2uint_rd f -> i;
float2uint_rn f -> i; float2uint_ru f -> i; float2uint_rz f -> i; float2ull_rd f -> l;
float2ull_rn f -> l; float2ull_ru f -> l; float2ull_rz f -> l; float_as_int f -> i;
floor d -> d; floorf f -> f; fma d d d -> d; fma_rd d d d -> d; fma_rn d d d -> d;
fma_ru d d d -> d; fma_rz d d d -> d; fmaf f f f -> f; fmaf_rd f f f -> f;
fmaf_rn f f f -> f; fmaf_ru f f f -> f; fmaf_rz f f f -> f; fmax d d -> d; fmaxf f f -> f;
fmin d d -> d; fminf f f -> f; fmod d d -> d; fmodf f f -> f; fmul_rd f f -> f;
fmul_rn f f -> f; fmul_ru f f -> f; fmul_rz f f -> f; frcp_rd f -> f; frcp_rn f -> f;
frcp_ru f -> f; frcp_rz f -> f; frexp d *i -> d; frexpf f *i -> f; frsqrt_rn f -> f;
fsqrt_rd f -> f; fsqrt_rn f -> f; fsqrt_ru f -> f; fsqrt_rz f -> f; fsub_rd f f -> f;
fsub_rn f f -> f; fsub_ru f f -> f; fsub_rz f f -> f; hadd i i -> i; half2float h -> f;
hiloint2double i i -> d; hypot d d -> d; hypotf f f -> f; ilogb d -> i; ilogbf f -> i;
int2double_rn i -> d; int2float_rd i -> f; int2float_rn i -> f; int2float_ru i -> f;
int2float_rz i -> f; int_as_float i -> f; isfinited d -> i; isinfd d -> i; isinff f -> i;
isnand d -> i; isnanf f -> i; j0 d -> d; j0f f -> f; j1 d -> d; j1f f -> f; jn i d -> d;
jnf i f -> f; ldexp d i -> d; ldexpf f i -> f; lgamma d -> d; lgammaf f -> f;
ll2double_rd l -> d; ll2double_rn l -> d; ll2double_ru l -> d; ll2double_rz l -> d;
ll2float_rd l -> f; ll2float_rn l -> f; ll2float_ru l -> f; ll2float_rz l -> f;
llabs l -> l; llmax l l -> l; llmin l l -> l; llrint d -> l; llrintf f -> l;
llround d -> l; llroundf f -> l; log d -> d; log10 d -> d; log10f f -> f; log1p d -> d;
log1pf f -> f; log2 d -> d; log2f f -> f; logb d -> d; logbf f -> f; logf f -> f;
longlong_as_double l -> d; max i i -> i; min i i -> i; modf d *d -> d; modff f *f -> f;
mul24 i i -> i; mul64hi l l -> l; mulhi i i -> i; nearbyint d -> d; nearbyintf f -> f;
nextafter d d -> d; nextafterf f f -> f; normcdf d -> d; normcdff f -> f;
normcdfinv d -> d; normcdfinvf f -> f; popc i -> i; popcll l -> i; pow d d -> d;
powf f f -> f; powi d i -> d; powif f i -> f; rcbrt d -> d; rcbrtf f -> f;
remainder d d -> d; remainderf f f -> f; remquo d d *i -> d; remquof f f *i -> f;
rhadd i i -> i; rint d -> d; rintf f -> f; round d -> d; roundf f -> f; rsqrt d -> d;
rsqrtf f -> f; sad i i i -> i; saturatef f -> f; scalbn d i -> d; scalbnf f i -> f;
signbitd d -> i; signbitf f -> i; sin d -> d; sincos d *d *d -> v; sincosf f *f *f -> v;
sincospi d *d *d -> v; sincospif f *f *f -> v; sinf f -> f; sinh d -> d; sinhf f -> f;
sinpi d -> d; sinpif f -> f; sqrt d -> d; sqrtf f -> f; tan d -> d; tanf f -> f;
tanh d -> d; tanhf f -> f; tgamma d -> d; tgammaf f -> f; trunc d -> d; truncf f -> f;
uhadd i i -> i; uint2double_rn i -> d; uint2float_rd i -> f; uint2float_rn i -> f;
uint2float_ru i -> f; uint2float_rz i -> f; ull2double_rd l -> d; ull2double_rn l -> d;
ull2double_ru l -> d; ull2double_rz l -> d; ull2float_rd l -> f; ull2float_rn l -> f;
ull2float_ru l -> f; ull2float_rz l -> f; ullmax l l -> l; ullmin l l -> l; umax i i -> i;
umin i i -> i; umul24 i i -> i; umul64hi l l -> l; umulhi i i -> i; urhadd i i -> i;
usad i i i -> i; y0 d -> d; y0f f -> f; y1 d -> d; y1f f -> f; yn i d -> d; ynf i f -> f;

"""

_TYPES = {"f": float32, "d": float64, "h": int16, "i": int32, "l": int64}


@frozen
class LibdeviceFunction:
    """One libdevice function: ``symbol(*args, *outs) -> result``."""

    name: str
    args: tuple[Scalar, ...]  # the Python arguments, in order
    outs: tuple[Scalar, ...]  # the pointer outputs, in order (after the arguments)
    result: Scalar | None  # the C result, None for void
    out_positions: tuple[int, ...]  # where each output sits in the C argument list

    @property
    def symbol(self) -> str:
        """The libdevice symbol."""
        return "__nv_" + self.name

    @property
    def returns(self) -> Type:
        """What the Python call returns: the result, or a tuple of result and outputs."""
        items = ((self.result,) if self.result is not None else ()) + self.outs
        return items[0] if len(items) == 1 else Tuple(items)


def _parse(spec: str) -> dict[str, LibdeviceFunction]:
    table = {}
    for entry in spec.replace("\n", " ").split(";"):
        if not entry.strip():
            continue
        lhs, result = entry.split("->")
        name, *params = lhs.split()
        args = tuple(_TYPES[p] for p in params if not p.startswith("*"))
        outs = tuple(_TYPES[p[1:]] for p in params if p.startswith("*"))
        positions = tuple(k for k, p in enumerate(params) if p.startswith("*"))
        r = result.strip()
        table[name] = LibdeviceFunction(
            name, args, outs, None if r == "v" else _TYPES[r], positions
        )
    return table


def arities() -> dict[str, int]:
    """Each function's name and how many arguments Python passes it, read off the
    table without making its entries (the intrinsic table's rows need no more)."""
    table = {}
    for entry in _SPEC.replace("\n", " ").split(";"):
        if entry.strip():
            name, *params = entry.split("->")[0].split()
            table[name] = sum(not p.startswith("*") for p in params)
    return table


class Placeholder(device_api.DeviceOnly):
    """``cuda.libdevice.<name>``: pickled by name, as the other placeholders are, and
    unpickled through this module, which makes the placeholders where they are not yet
    made (a process that has not used ``cuda.libdevice``)."""

    def __reduce__(self):
        return (placeholder, (self.__name__,))


def placeholder(name: str) -> Placeholder:
    """The placeholder of libdevice function ``name`` (pickle's way back to it)."""
    return __getattr__("PLACEHOLDERS")[name]


def _placeholder(fn: LibdeviceFunction) -> Placeholder:
    params = ", ".join(str(a) for a in fn.args)
    stub = Placeholder(f"libdevice.{fn.name}", f"libdevice's {fn.symbol}({params}) -> {fn.returns}")
    device_api.ALL[stub.key] = stub  # found by its key like the other placeholders
    return stub


FUNCTIONS: dict[str, LibdeviceFunction]  # made by __getattr__, below
PLACEHOLDERS: dict[str, device_api.DeviceOnly]
_made = forksafe.renewed(threading.Lock())


def __getattr__(name: str):
    """``FUNCTIONS`` (the table: name -> ``LibdeviceFunction``) and ``PLACEHOLDERS``
    (the objects kernels call, ``cuda.libdevice.<name>``; on the host they raise),
    made at their first use: a process that calls no libdevice function makes
    neither.  The placeholders are made here, beside the table, so that stage 4 finds
    them without importing the user API; once each per process (under a lock: a
    kernel's callee is the very object the call table keys)."""
    if name not in ("FUNCTIONS", "PLACEHOLDERS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _made:
        if "FUNCTIONS" not in globals():
            functions = _parse(_SPEC)
            placeholders = {n: _placeholder(fn) for n, fn in functions.items()}
            globals().update(FUNCTIONS=functions, PLACEHOLDERS=placeholders)
    return globals()[name]
