"""The bfloat16 functions kernels call (numba-cuda's ``cuda.bf16``): their placeholders
and what each computes.

Each public name (``hadd``, ``float32_to_bfloat16_rz``...) is one placeholder object;
CUDA's own spellings (``__hadd``, ``__float2bfloat16_rz``, what numba-cuda's
``_internal.cuda_bf16`` exports) are the same objects (``CUDA_NAMES``).
``cujit.infer.bf16_calls`` types a call of each from ``KINDS``.
"""

from __future__ import annotations

from cujit.device_api import ALL, DeviceOnly

ROUNDINGS = ("rn", "rz", "rd", "ru")
# NumPy-style integer names and CUDA's C names for them.
INT_TYPES = {
    "int8": "char",
    "uint8": "uchar",
    "int16": "short",
    "uint16": "ushort",
    "int32": "int",
    "uint32": "uint",
    "int64": "ll",
    "uint64": "ull",
}

# name -> (kind, detail): how ``cujit.infer.bf16_calls`` types the call.
KINDS: dict[str, tuple[str, object]] = {
    **{n: ("arith", op) for n, op in (("hadd", "+"), ("hsub", "-"), ("hmul", "*"))},
    **{f"{n}_rn": ("arith_rn", op) for n, op in (("hadd", "+"), ("hsub", "-"), ("hmul", "*"))},
    "hdiv": ("arith", "/"),
    **{f"{n}_sat": ("sat", op) for n, op in (("hadd", "+"), ("hsub", "-"), ("hmul", "*"))},
    "habs": ("habs", None),
    "hneg": ("hneg", None),
    "hfma": ("fma", ""),
    "hfma_sat": ("fma", "sat"),
    "hfma_relu": ("fma", "relu"),
    **{n: ("compare", op) for n, op in (("heq", "=="), ("hge", ">="), ("hgt", ">"))},
    **{n: ("compare", op) for n, op in (("hle", "<="), ("hlt", "<"), ("hne", "<>"))},
    # unordered: true where either is NaN, the negation of the opposite ordered test
    **{f"{n}u": ("unordered", op) for n, op in (("heq", "<>"), ("hne", "=="), ("hge", "<"))},
    **{f"{n}u": ("unordered", op) for n, op in (("hgt", "<="), ("hle", ">"), ("hlt", ">="))},
    "hmax": ("libdevice2", "fmaxf"),
    "hmin": ("libdevice2", "fminf"),
    "hmax_nan": ("intrinsic2", "bf16.max_nan"),
    "hmin_nan": ("intrinsic2", "bf16.min_nan"),
    "hisnan": ("isnan", None),
    "hisinf": ("isinf", None),
    **{
        n: ("math", f)
        for n, f in (
            ("htrunc", "truncf"),
            ("hceil", "ceilf"),
            ("hfloor", "floorf"),
            ("hrint", "rintf"),
            ("hsqrt", "sqrtf"),
            ("hrsqrt", "rsqrtf"),
            ("hlog", "logf"),
            ("hlog2", "log2f"),
            ("hlog10", "log10f"),
            ("hcos", "cosf"),
            ("hsin", "sinf"),
            ("hexp", "expf"),
            ("hexp2", "exp2f"),
            ("hexp10", "exp10f"),
            ("htanh", "tanhf"),
            ("htanh_approx", "tanhf"),
        )
    },
    "hrcp": ("hrcp", None),
    "bfloat16_to_float32": ("to", ("float32", "")),
    "float32_to_bfloat16": ("from", ("float32", "rn")),
    "float64_to_bfloat16": ("from", ("float64", "rn")),
    **{f"float32_to_bfloat16_{m}": ("from", ("float32", m)) for m in ROUNDINGS},
    "bfloat16_to_int8_rz": ("to", ("int8", "rz")),
    "bfloat16_to_uint8_rz": ("to", ("uint8", "rz")),
    **{f"{i}_to_bfloat16_{m}": ("from", (i, m)) for i in tuple(INT_TYPES)[2:] for m in ROUNDINGS},
    **{f"bfloat16_to_{i}_{m}": ("to", (i, m)) for i in tuple(INT_TYPES)[2:] for m in ROUNDINGS},
    "bfloat16_as_int16": ("as_int", "int16"),
    "bfloat16_as_uint16": ("as_int", "uint16"),
    "int16_as_bfloat16": ("as_bf16", "int16"),
    "uint16_as_bfloat16": ("as_bf16", "uint16"),
}


def _cuda_name(name: str) -> str:
    """CUDA's spelling of a public name: ``int32_to_bfloat16_rn`` -> ``__int2bfloat16_rn``."""
    c = {"float32": "float", "float64": "double", "bfloat16": "bfloat16", **INT_TYPES}
    if "_as_" in name:
        a, b = name.split("_as_")
        return f"__{c[a]}_as_{c[b]}"
    if "_to_" in name:
        a, rest = name.split("_to_")
        b, _, mode = rest.partition("_")
        suffix = f"_{mode}" if mode else ""
        if a == "bfloat16":
            return f"__bfloat162{c[b]}{suffix}"
        return f"__{c[a]}2bfloat16{suffix}"
    if name.startswith("h") and name not in MATH_ONLY:
        return "__" + name
    return name


# Functions numba-cuda exports under their own names only (no ``__`` form).
MATH_ONLY = frozenset(n for n, (kind, _) in KINDS.items() if kind in ("math", "hrcp"))

FUNCTIONS: dict[str, DeviceOnly] = {
    name: DeviceOnly(f"bf16.{name}", f"bf16.{name}: bfloat16") for name in KINDS
}
CUDA_NAMES: dict[str, DeviceOnly] = {_cuda_name(n): f for n, f in FUNCTIONS.items()}
for _f in FUNCTIONS.values():
    ALL[_f.key] = _f  # placeholders pickle by key
