"""The kernel parameter layout: how each argument type becomes kernel parameters.

This is the one contract shared by code generation and the runtime's launch path
(and, for debug-mode kernels, the layout of the error record they fill in).

- A scalar is one parameter of its own type; ``bool`` travels as one byte (0 or 1),
  ``float16`` as a half (two bytes).  A complex number is two parameters of its part
  type, the real part first (complex64: two float32).
- An array of ``ndim`` n is its data pointer, then its n extents (int64), then,
  for layout 'A' only, its n strides in bytes (int64): a C- or F-contiguous
  array's strides follow from its extents (``passes_strides``), so the kernel
  works them out and the launch does not pass them.
- A record (a NumPy structured scalar) is one pointer to its bytes, ``itemsize`` of
  them laid out as NumPy lays out the dtype; an array of records is an array whose
  element size is that itemsize.
- A tuple (a namedtuple too) is its items' parameters, in order.
- A pointer (``CPointer(dtype)``) is its address, one uint64.

That is the parameter list of the kernel's LLVM function.  The compiled kernel then
takes only those its code reads (``cujit.codegen.params``): the ``passed`` mask
of its :class:`LaunchRecord`, one bool per entry of :func:`flat_param_kinds`, says
which, and the launch passes exactly those values (:func:`keep`).

``LaunchRecord`` is everything the runtime needs of a compiled kernel, frozen: the
compiler makes it, the disk cache stores it whole, and every launch path reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import NamedTuple

from cujit.diagnostics import Loc
from cujit.frozen import frozen
from cujit.types.core import Array, Scalar, Tuple, Type
from cujit.types.enums import EnumMember
from cujit.types.numba_names import CPointer
from cujit.types.records import Record

# Parameter kinds: a NumPy dtype character per scalar, 'ptr' for a device pointer.
POINTER = "ptr"

# The 32-bit index variant (``Options(index32=True)``, docs/index32.md) runs only where
# the launch checked that every array argument holds 1..INDEX32_LIMIT elements and the
# grid spans at most INDEX32_LIMIT threads along each axis (``cujit.index_width``);
# its code (``cujit.codegen.narrow``) relies on exactly that.  2**30 leaves room for the
# small offsets index arithmetic adds (``i + k - r``) within int32.
INDEX32_LIMIT = 2**30


def param_kinds(t: Type) -> list[str]:
    """The flat list of parameter kinds one argument of type ``t`` occupies."""
    if isinstance(t, EnumMember):  # an enum member travels as its value
        return param_kinds(t.dtype)
    if isinstance(t, Scalar):
        if t.kind == "c":
            return [t.part_type.name] * 2
        if t.kind in "Mm":  # datetime64 / timedelta64: their int64 count
            return ["int64"]
        return ["uint8" if t.kind == "b" else t.name]
    if isinstance(t, Array):
        return [POINTER] + ["int64"] * (2 * t.ndim if passes_strides(t) else t.ndim)
    if isinstance(t, Record):  # a record travels by reference: the address of its bytes
        return [POINTER]
    if isinstance(t, CPointer):  # a pointer argument travels as its address
        return ["uint64"]
    if isinstance(t, Tuple):
        out: list[str] = []
        for item in t.items:
            out.extend(param_kinds(item))
        return out
    raise TypeError(f"values of type {t} cannot be kernel parameters")


def param_names(name: str, t: Type) -> list[str]:
    """Readable names of the flat parameters of argument ``name`` (``x.data``,
    ``x.shape0``, ``x.stride0``, ``z.real``, ``p.1``), one per entry of ``param_kinds``."""
    if isinstance(t, EnumMember):
        return param_names(name, t.dtype)
    if isinstance(t, Scalar) and t.kind == "c":
        return [f"{name}.real", f"{name}.imag"]
    if isinstance(t, Array):
        return (
            [f"{name}.data"]
            + [f"{name}.shape{k}" for k in range(t.ndim)]
            + ([f"{name}.stride{k}" for k in range(t.ndim)] if passes_strides(t) else [])
        )
    if isinstance(t, Tuple):
        return [n for k, it in enumerate(t.items) for n in param_names(f"{name}.{k}", it)]
    return [name]


def shape_groups(arg_types) -> tuple[tuple[int, ...], ...]:
    """The 32-bit index variant's groups of array arguments that must have equal shapes
    (positions; each group at least two): the C- or F-contiguous arrays of one number
    of dimensions (two or more) and one layout.  The launch takes the variant only
    where each group's shapes are equal, so that its element addresses of all of them
    share one set of extents (``codegen.narrow``), as a CUDA C ``out[i] = u[i]`` does."""
    groups: dict[tuple, list[int]] = {}
    for p, t in enumerate(arg_types):
        if isinstance(t, Array) and t.ndim >= 2 and t.layout in ("C", "F"):
            groups.setdefault((t.ndim, t.layout), []).append(p)
    return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def flat_param_kinds(arg_types) -> list[str]:
    """The parameter kinds of a whole argument list, in order."""
    return [k for t in arg_types for k in param_kinds(t)]


def keep(values, kept):
    """The entries of ``values`` (one per flat parameter) that ``kept`` marks True;
    ``values`` itself when ``kept`` is None (every parameter kept)."""
    if kept is None:
        return values
    return [v for v, k in zip(values, kept, strict=True) if k]


def kept_per_argument(arg_types, kept) -> list:
    """``kept`` cut into one piece per argument (a tuple of bools, or None for all)."""
    if kept is None:
        return [None] * len(arg_types)
    out, start = [], 0
    for t in arg_types:
        n = len(param_kinds(t))
        out.append(tuple(kept[start : start + n]))
        start += n
    return out


@frozen
class LaunchRecord:
    """What launching a compiled kernel needs besides its code.

    ``symbol``: its entry name in the PTX and cubin (``cuModuleGetFunction``).
    ``passed``: one bool per flat parameter (:func:`flat_param_kinds`): does a
    launch pass it (the kernel reads it)?  ``written``: one bool per argument:
    may the kernel store into it (the launch refuses read-only buffers there)?
    ``cooperative``: it syncs the grid, so it is launched cooperatively.
    ``debug_sites``: debug mode's error record code -> :class:`ErrorSite`, empty
    without checks to report (never changed after the compile).
    """

    symbol: str
    passed: tuple[bool, ...]
    written: tuple[bool, ...]
    cooperative: bool = False
    debug_sites: Mapping[int, ErrorSite] = field(default_factory=dict)

    @property
    def passed_mask(self) -> tuple[bool, ...] | None:
        """``passed``, or None when every parameter is passed (the launch's fast case)."""
        return None if all(self.passed) else self.passed

    def param_kinds(self, arg_types) -> list[str]:
        """The kinds of the parameters a launch passes, in order."""
        return keep(flat_param_kinds(arg_types), self.passed_mask)

    def to_json(self) -> dict:
        """The record as JSON data (the cache's entry header); debug sites, which hold
        exception classes, are not stored: debug builds skip the cache."""
        if self.debug_sites:
            raise ValueError("a record with debug sites has no JSON form")
        return {
            "symbol": self.symbol,
            "passed": list(self.passed),
            "written": list(self.written),
            "cooperative": self.cooperative,
        }

    @classmethod
    def from_json(cls, data: dict) -> LaunchRecord:
        return cls(
            str(data["symbol"]),
            tuple(bool(v) for v in data["passed"]),
            tuple(bool(v) for v in data["written"]),
            bool(data["cooperative"]),
        )


def passes_strides(t: Array) -> bool:
    """Whether an array of type ``t`` travels with its strides (layout 'A' only)."""
    return t.layout == "A"


# -- the debug-mode error record ---------------------------------------------------
# A kernel compiled with ``jit(debug=True)`` that has a check (array bounds, ``assert``,
# ``raise``) holds one module global, ``DEBUG_RECORD_SYMBOL``: ``DEBUG_RECORD_WORDS``
# int64 words, all zero while nothing has failed.  The first failing thread claims it
# with a compare-and-swap of word ``DEBUG_CODE`` from 0 to its site's code (>= 1) and
# then fills in the other words; the host reads it after the launch, zeroes it and
# raises.  ``cujit.codegen.checks`` writes it, ``cujit.runtime.debug`` reads it.
DEBUG_RECORD_SYMBOL = "cujit_debug_error"
DEBUG_CODE = 0
DEBUG_THREAD = 1  # threadIdx.x, .y, .z
DEBUG_BLOCK = 4  # blockIdx.x, .y, .z
DEBUG_INDEX = 7  # a failed bounds check: the index as written, its axis, the extent
DEBUG_AXIS = 8
DEBUG_SIZE = 9
DEBUG_RECORD_WORDS = 10


class ErrorSite(NamedTuple):
    """What one code of the record stands for: the source location, the exception
    class to raise and its message.  A bounds check's message has ``{index}``,
    ``{axis}`` and ``{size}`` fields, filled from the record (``bounds`` is True)."""

    loc: Loc
    exc: type
    message: str
    bounds: bool = False
