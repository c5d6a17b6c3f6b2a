"""The source files of the cache fault suite's cross-process tests, in two versions.

``write(folder, version)`` writes a small project whose kernels freeze one value
each, every kind a kernel can reach: a module global, a module attribute, an
attribute through a submodule, a class attribute (own and inherited), a closure
value, a device function's global and its body, a NumPy array, a tuple, a NumPy
scalar, an object's attribute (a namespace and a frozen dataclass), a flag that
picks a branch, a device function's default argument.  Version "A" freezes 1234.5
everywhere, version "B" 4321.5; each kernel's LLVM IR shows which it was compiled with.
"""

from __future__ import annotations

import struct
import textwrap

VALUES = {"A": 1234.5, "B": 4321.5}
# How LLVM IR prints each value: llvmlite writes a double's bits in hex.
MARKS = {k: "0x" + struct.pack(">d", v).hex() for k, v in VALUES.items()}


def _llvm_bytes(data: bytes) -> str:
    """Bytes as llvmlite spells them in a ``c"..."`` string (lower-case hex escapes)."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\{b:02x}" for b in data)


# A constant array holds the value as its little-endian bytes.
BYTE_MARKS = {k: _llvm_bytes(struct.pack("<d", v)) for k, v in VALUES.items()}

KERNELS = (
    "k_global",
    "k_module_attr",
    "k_submodule",
    "k_class",
    "k_inherited",
    "k_closure",
    "k_device_global",
    "k_device_body",
    "k_array",
    "k_tuple",
    "k_numpy_scalar",
    "k_namespace",
    "k_dataclass",
    "k_flag",
    "k_default",
)

KMOD = """
import dataclasses
import types

import numpy as np

import consts
import helpers
import pkg.sub
from base import Base
from cujit import cuda

G = {v}


class K:
    CSCALE = {v}


class Derived(Base):
    pass


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float


CFG = types.SimpleNamespace(scale={v})
CFGD = Config({v})


def k_global(x):
    x[0] = x[0] * G


def k_module_attr(x):
    x[0] = x[0] * consts.SCALE


def k_submodule(x):
    x[0] = x[0] * pkg.sub.FACTOR


def k_class(x):
    x[0] = x[0] * K.CSCALE


def k_inherited(x):
    x[0] = x[0] * Derived.CSCALE


def _make(value):
    def k_closure(x):
        x[0] = x[0] * value
    return k_closure


k_closure = _make(consts.CLOSED)


def k_device_global(x):
    x[0] = helpers.scaled(x[0])


def k_device_body(x):
    x[0] = helpers.body(x[0])


def k_array(x):
    x[0] = x[0] * consts.TABLE[1]


def k_tuple(x):
    x[0] = x[0] * consts.PAIR[1]


def k_numpy_scalar(x):
    x[0] = x[0] * consts.NPS


def k_namespace(x):
    x[0] = x[0] * CFG.scale


def k_dataclass(x):
    x[0] = x[0] * CFGD.scale


def k_flag(x):
    if consts.FLAG:
        x[0] = x[0] * 1234.5
    else:
        x[0] = x[0] * 4321.5


def k_default(x):
    x[0] = helpers.defaulted(x[0])


class Opaque:
    def __init__(self):
        self.scale = {v}


OPAQUE = Opaque()


def k_opaque(x):
    x[0] = x[0] * OPAQUE.scale
"""

FILES = {
    "consts.py": """
import numpy as np
SCALE = {v}
CLOSED = {v}
TABLE = np.array([0.0, {v}])
PAIR = (0.0, {v})
NPS = np.float64({v})
FLAG = {flag}
""",
    "helpers.py": """
from cujit import cuda
OFF = {v}


@cuda.jit(device=True)
def scaled(a):
    return a * OFF


@cuda.jit(device=True)
def body(a):
    return a * {v}


@cuda.jit(device=True)
def defaulted(a, s={v}):
    return a * s
""",
    "base.py": """
class Base:
    CSCALE = {v}
""",
    "pkg/__init__.py": "",
    "pkg/sub.py": "FACTOR = {v}\n",
    "kmod.py": KMOD,
}


def write(folder, version: str) -> None:
    values = {"v": repr(VALUES[version]), "flag": repr(version == "A")}
    (folder / "pkg").mkdir(exist_ok=True)
    for name, text in FILES.items():
        (folder / name).write_text(textwrap.dedent(text).format(**values))


CHILD = """
import json, sys, warnings
warnings.simplefilter("always")
from cujit import cuda, float64
import cache_fault_files as f
import kmod
out = {}
with warnings.catch_warnings(record=True) as caught:
    for name in sys.argv[1].split(","):
        r = cuda.jit(getattr(kmod, name), cache=True).compile((float64[::1],)).result
        llvm = str(r.outputs["llvm"])
        marks = [f.MARKS[v] in llvm or f.BYTE_MARKS[v] in llvm for v in "AB"]
        out[name] = [list(r.times) == ["cache"], *marks]
out["warnings"] = [str(w.message) for w in caught]
print(json.dumps(out))
"""
