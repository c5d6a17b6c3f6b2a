"""The libdevice math table: (math function, float type) -> libdevice function.

libdevice (``libdevice.10.bc``, linked by stage 7) implements the C math
library for NVPTX; single-precision variants carry an ``f`` suffix (see the
"libdevice User's Guide", function reference).  Each entry's argument and result
types are the float type it is keyed by.  ``fmod`` serves ``math.fmod`` and codegen
(with ``floor`` and ``copysign``) for Python's float ``//`` and ``%``.
"""

from cujit.targets import MathFn

LIBDEVICE: dict[tuple[str, str], MathFn] = {
    ("sqrt", "float32"): MathFn("__nv_sqrtf"),
    ("sqrt", "float64"): MathFn("__nv_sqrt"),
    ("exp", "float32"): MathFn("__nv_expf"),
    ("exp", "float64"): MathFn("__nv_exp"),
    ("log", "float32"): MathFn("__nv_logf"),
    ("log", "float64"): MathFn("__nv_log"),
    ("log2", "float32"): MathFn("__nv_log2f"),
    ("log2", "float64"): MathFn("__nv_log2"),
    ("log10", "float32"): MathFn("__nv_log10f"),
    ("log10", "float64"): MathFn("__nv_log10"),
    ("sin", "float32"): MathFn("__nv_sinf"),
    ("sin", "float64"): MathFn("__nv_sin"),
    ("cos", "float32"): MathFn("__nv_cosf"),
    ("cos", "float64"): MathFn("__nv_cos"),
    ("tan", "float32"): MathFn("__nv_tanf"),
    ("tan", "float64"): MathFn("__nv_tan"),
    ("asin", "float32"): MathFn("__nv_asinf"),
    ("asin", "float64"): MathFn("__nv_asin"),
    ("acos", "float32"): MathFn("__nv_acosf"),
    ("acos", "float64"): MathFn("__nv_acos"),
    ("atan", "float32"): MathFn("__nv_atanf"),
    ("atan", "float64"): MathFn("__nv_atan"),
    ("sinh", "float32"): MathFn("__nv_sinhf"),
    ("sinh", "float64"): MathFn("__nv_sinh"),
    ("cosh", "float32"): MathFn("__nv_coshf"),
    ("cosh", "float64"): MathFn("__nv_cosh"),
    ("tanh", "float32"): MathFn("__nv_tanhf"),
    ("tanh", "float64"): MathFn("__nv_tanh"),
    ("floor", "float32"): MathFn("__nv_floorf"),
    ("floor", "float64"): MathFn("__nv_floor"),
    ("ceil", "float32"): MathFn("__nv_ceilf"),
    ("ceil", "float64"): MathFn("__nv_ceil"),
    ("fabs", "float32"): MathFn("__nv_fabsf"),
    ("fabs", "float64"): MathFn("__nv_fabs"),
    ("erf", "float32"): MathFn("__nv_erff"),
    ("erf", "float64"): MathFn("__nv_erf"),
    ("erfc", "float32"): MathFn("__nv_erfcf"),
    ("erfc", "float64"): MathFn("__nv_erfc"),
    ("expm1", "float32"): MathFn("__nv_expm1f"),
    ("expm1", "float64"): MathFn("__nv_expm1"),
    ("log1p", "float32"): MathFn("__nv_log1pf"),
    ("log1p", "float64"): MathFn("__nv_log1p"),
    ("asinh", "float32"): MathFn("__nv_asinhf"),
    ("asinh", "float64"): MathFn("__nv_asinh"),
    ("acosh", "float32"): MathFn("__nv_acoshf"),
    ("acosh", "float64"): MathFn("__nv_acosh"),
    ("atanh", "float32"): MathFn("__nv_atanhf"),
    ("atanh", "float64"): MathFn("__nv_atanh"),
    ("gamma", "float32"): MathFn("__nv_tgammaf"),  # math.gamma is C's tgamma
    ("gamma", "float64"): MathFn("__nv_tgamma"),
    ("lgamma", "float32"): MathFn("__nv_lgammaf"),
    ("lgamma", "float64"): MathFn("__nv_lgamma"),
    ("pow", "float32"): MathFn("__nv_powf", 2),
    ("pow", "float64"): MathFn("__nv_pow", 2),
    ("atan2", "float32"): MathFn("__nv_atan2f", 2),
    ("atan2", "float64"): MathFn("__nv_atan2", 2),
    ("hypot", "float32"): MathFn("__nv_hypotf", 2),
    ("hypot", "float64"): MathFn("__nv_hypot", 2),
    ("copysign", "float32"): MathFn("__nv_copysignf", 2),
    ("copysign", "float64"): MathFn("__nv_copysign", 2),
    ("cbrt", "float32"): MathFn("__nv_cbrtf"),  # cuda.cbrt
    ("cbrt", "float64"): MathFn("__nv_cbrt"),
    ("fmod", "float32"): MathFn("__nv_fmodf", 2),
    ("fmod", "float64"): MathFn("__nv_fmod", 2),
}

# ``jit(fastmath=True)``, as numba: float32 functions with a fast libdevice variant
# (``__nv_fast_*``: the approximate ``sin.approx``/``lg2.approx``... instructions) use
# it, and float32 ``/`` is ``__nv_fast_fdividef`` (``div.approx``).  The float64
# functions keep their precise versions.
FAST_LIBDEVICE: dict[tuple[str, str], MathFn] = {
    ("cos", "float32"): MathFn("__nv_fast_cosf"),
    ("sin", "float32"): MathFn("__nv_fast_sinf"),
    ("tan", "float32"): MathFn("__nv_fast_tanf"),
    ("exp", "float32"): MathFn("__nv_fast_expf"),
    ("log", "float32"): MathFn("__nv_fast_logf"),
    ("log2", "float32"): MathFn("__nv_fast_log2f"),
    ("log10", "float32"): MathFn("__nv_fast_log10f"),
    ("pow", "float32"): MathFn("__nv_fast_powf", 2),
    ("divide", "float32"): MathFn("__nv_fast_fdividef", 2),
}

# sm_75 and later have a hardware tanh (PTX ISA 7.0, ``tanh.approx.f32``), which no
# libdevice function wraps.
FAST_TANH = {("tanh", "float32"): MathFn("tanh.approx.f32 $0, $1;", asm=True)}
