"""The engine: compile a user's function over masked columns and run it.

``compile_udf(udf, dtypes, target)`` makes

1. the device function: ``cuda.jit(device=True)(udf)``, called with ``Masked`` values;
2. its result type: ``cuda.compile_ptx`` of a probe that returns the result's value
   (numba's ABI gives the inferred return type, as cuDF asks libNVVM's front end);
3. the kernel, generated as source text for the number of columns (as cuDF generates
   its kernels) and compiled with ``cuda.jit``; a library's types make it (``Masked``),
   so they are part of its cache key.

``apply_udf(udf, *columns)`` launches it over the rows and returns the result column.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from cujit import cuda
from cujit.types import from_dtype
from examples.udf_engine.masked import Masked

_KERNEL = """
def udf_kernel(out_data, out_mask, {params}):
    i = cuda.grid(1)
    if i < out_data.size:
        result = udf({masked})
        out_data[i] = result.value
        out_mask[i] = result.valid
"""

_PROBE = """
def probe({params}):
    return udf({masked}).value
"""


@dataclasses.dataclass
class Column:
    """A nullable column: its values and a validity mask (True: valid)."""

    data: np.ndarray
    mask: np.ndarray

    def __post_init__(self) -> None:
        self.data = np.asarray(self.data)
        self.mask = np.asarray(self.mask, dtype=np.bool_)
        if self.data.shape != self.mask.shape or self.data.ndim != 1:
            raise ValueError("a column's data and mask are 1-d arrays of one length")

    def to_list(self) -> list:
        pairs = zip(self.data.tolist(), self.mask.tolist(), strict=True)
        return [v if m else None for v, m in pairs]


def _source(template: str, n: int, row: str) -> str:
    """``template`` for ``n`` columns, each read as ``Masked(d<k>ROW, m<k>ROW)``."""
    params = ", ".join(f"d{k}, m{k}" for k in range(n))
    masked = ", ".join(f"Masked(d{k}{row}, m{k}{row})" for k in range(n))
    return template.format(params=params, masked=masked)


def _generated(template: str, n: int, udf_device, name: str):
    namespace = {"cuda": cuda, "Masked": Masked, "udf": udf_device}
    row = "[i]" if name == "udf_kernel" else ""  # the kernel reads row i; the probe, scalars
    code = compile(_source(template, n, row), f"<udf_engine {name} for {n} columns>", "exec")
    exec(code, namespace)  # noqa: S102 -- the engine's own template, filled with names only
    return namespace[name]


@functools.lru_cache(maxsize=64)
def compile_udf(udf, dtypes: tuple, target: str = "cuda"):
    """The kernel running ``udf`` over columns of ``dtypes``, and the result dtype."""
    udf_device = cuda.jit(device=True)(udf)
    probe = _generated(_PROBE, len(dtypes), udf_device, "probe")
    sig = tuple(t for dt in dtypes for t in (from_dtype(np.dtype(dt)), from_dtype(np.bool_)))
    _, result_type = cuda.compile_ptx(probe, sig, device=True)
    kernel = cuda.jit(_generated(_KERNEL, len(dtypes), udf_device, "udf_kernel"), target=target)
    return kernel, np.dtype(result_type.dtype)


def apply_udf(udf, *columns: Column, target: str = "cuda") -> Column:
    """Run ``udf`` on every row of ``columns``: the result column (invalid where an
    operand is, unless the function decides otherwise through ``.valid``)."""
    if not columns:
        raise ValueError("apply_udf takes one column or more")
    n = len(columns[0].data)
    if any(len(c.data) != n for c in columns):
        raise ValueError("the columns differ in length")
    kernel, out_dtype = compile_udf(udf, tuple(c.data.dtype.str for c in columns), target)
    out = Column(np.zeros(n, out_dtype), np.zeros(n, np.bool_))
    args = [a for c in columns for a in (c.data, c.mask)]
    threads = 128
    kernel[max(1, (n + threads - 1) // threads), threads](out.data, out.mask, *args)
    return out
