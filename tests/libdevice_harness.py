"""Shared by the libdevice tests: a kernel per libdevice function and exact references."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from cujit import cuda
from cujit.cuda import libdevice
from cujit.libdevice import FUNCTIONS

NP = {
    "float32": np.float32,
    "float64": np.float64,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
}


def outputs(name: str) -> tuple:
    r = FUNCTIONS[name].returns
    return tuple(r.items) if hasattr(r, "items") else (r,)


def pyfunc(name: str):
    """``k(r0, ..., a0, ...)``: ``r*[i]`` = the call's values on ``a*[i]``."""
    fn = FUNCTIONS[name]
    outs = outputs(name)
    params = [f"r{k}" for k in range(len(outs))] + [f"a{k}" for k in range(len(fn.args))]
    call = f"libdevice.{name}({', '.join(f'a{k}[i]' for k in range(len(fn.args)))})"
    lines = [
        f"def k({', '.join(params)}):",
        "    i = cuda.grid(1)",
        "    if i < r0.size:",
        f"        v = {call}",
    ]
    if len(outs) == 1:
        lines.append("        r0[i] = v")
    else:
        lines += [f"        r{k}[i] = v[{k}]" for k in range(len(outs))]
    ns = {"cuda": cuda, "libdevice": libdevice}
    exec("\n".join(lines), ns)  # noqa: S102  (a kernel per function, as in numba's tests)
    return ns["k"]


def kernel(name: str, target: str):
    """``pyfunc(name)`` compiled for ``target``."""
    return cuda.jit(target=target)(pyfunc(name))


def run(name: str, *args, target: str = "cpu") -> list[np.ndarray]:
    """The function's values on the argument arrays (converted to the table's types)."""
    fn = FUNCTIONS[name]
    arrays = [np.asarray(a).astype(NP[t.name]) for a, t in zip(args, fn.args, strict=True)]
    n = arrays[0].size
    results = [np.full(n, 77, NP[t.name]) for t in outputs(name)]  # poisoned
    kernel(name, target)[(n + 63) // 64, 64](*results, *arrays)
    return results


def directed(q: Fraction, mode: str, ftype) -> float:
    """The exact value ``q`` rounded to ``ftype`` by ``mode`` (rn, rz, rd, ru)."""
    r = ftype(float(q))
    if Fraction(float(r)) == q:
        return r
    if Fraction(float(r)) > q:
        lo, hi = np.nextafter(r, ftype(-np.inf)), r
    else:
        lo, hi = r, np.nextafter(r, ftype(np.inf))
    if mode == "rn":  # the nearer; on a tie the one with an even last bit
        dlo, dhi = q - Fraction(float(lo)), Fraction(float(hi)) - q
        if dlo != dhi:
            return lo if dlo < dhi else hi
        bits = np.int32 if ftype == np.float32 else np.int64
        return lo if int(np.array(lo).view(bits)) % 2 == 0 else hi
    return {"rd": lo, "ru": hi, "rz": lo if q > 0 else hi}[mode]
