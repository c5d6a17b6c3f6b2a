"""``cuda.guvectorize``: generalized ufuncs with layouts such as ``(m,n),(n,p)->(m,p)``.

A call binds the core dimensions, broadcasts the loop dimensions and launches a generated
kernel whose grid-stride loop covers the loop dimensions (block size from occupancy).
Each iteration copies its operands' core blocks into local arrays of the bound sizes,
calls the user's function (a device function) on them and copies the outputs back.
"""

from __future__ import annotations

import math
import re

import numpy as np

from cujit import config
from cujit.diagnostics import api_boundary
from cujit.types import Array, NoneType, Scalar, Signature, parse_signature
from cujit.ufunc import kernels, resolve
from cujit.ufunc.arrays import arrays_for
from cujit.ufunc.vectorize import _is_scalar, device_function

_OPERAND = re.compile(r"\(\s*([\w\s,]*)\)")


def parse_layout(layout: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """``"(m,n),(n)->(m)"`` as the inputs' and outputs' core dimension names."""
    if "->" not in layout:
        raise ValueError(f"bad gufunc layout {layout!r}: expected '(..),(..)->(..)'")
    sides = layout.replace(" ", "").split("->")

    def operands(text):
        found = _OPERAND.findall(text)
        if "".join(f"({f})," for f in found).rstrip(",") != text:
            raise ValueError(f"bad gufunc layout {layout!r}")
        return [tuple(d for d in f.split(",") if d) for f in found]

    return operands(sides[0]), operands(sides[1])


class GUFunc:
    """A GPU generalized ufunc: ``gufunc(*inputs, [outputs...,] out=None, stream=0)``."""

    def __init__(self, pyfunc, signatures, layout: str, target: str):
        self.py_func = getattr(pyfunc, "py_func", pyfunc)
        self.__name__ = getattr(self.py_func, "__name__", "gufunc")
        self.layout = layout
        self.target = target
        self.ins, self.outs = parse_layout(layout)
        self.nin, self.nout = len(self.ins), len(self.outs)
        self.device_function = device_function(pyfunc)
        self.loops = [self._loop_types(s) for s in signatures]
        self._kernels: dict[tuple, object] = {}

    def __repr__(self) -> str:
        return f"<cujit gufunc {self.__name__} {self.layout}>"

    def _loop_types(self, sig) -> tuple:
        parsed = parse_signature(sig)
        if not isinstance(parsed.return_type, NoneType):
            raise TypeError(
                f"guvectorized functions cannot return values: signature "
                f"{sig} specifies {parsed.return_type} return type"
            )
        args = parsed.args
        if len(args) != self.nin + self.nout:
            raise TypeError(
                f"gufunc '{self.__name__}': signature {sig!r} has {len(args)} "
                f"arguments, the layout {self.layout!r} {self.nin + self.nout}"
            )
        return args

    def _select(self, operands) -> tuple:
        loops = [
            resolve.Loop(tuple(_elem(t) for t in lp[: self.nin]), _elem(lp[-1]))
            for lp in self.loops
        ]
        # numba's gufuncs cast inputs of the same kind (an int64 scalar to int32)
        chosen = resolve.select_loop(self.__name__, loops, operands, fallback="same_kind")
        return self.loops[loops.index(chosen)]

    @api_boundary
    def __call__(self, *args, out=None, stream=0):
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(
                f"gufunc '{self.__name__}': gufunc accepts "
                f"{_count(self.nin)} (for inputs) or "
                f"{_count(self.nin + self.nout)} (for inputs and outputs). "
                f"Got {_count(len(args))}."
            )
        if len(args) > self.nin and out is not None:
            raise ValueError("cannot specify argument 'out' as both positional and keyword")
        outs = list(args[self.nin :]) or (
            [] if out is None else list(out if isinstance(out, tuple) else (out,))
        )
        args = args[: self.nin]
        if len(outs) not in (0, self.nout):
            raise TypeError(
                f"gufunc '{self.__name__}' has {self.nout} output(s), {len(outs)} given"
            )
        mem = arrays_for(self.target)
        operands = [mem.operand(a, stream) for a in args]
        loop = self._select(operands)
        # loop holds the input types, then the output types: check the inputs.
        for k, (v, t) in enumerate(zip(operands, loop[: self.nin], strict=True)):
            if mem.is_device(v) and np.dtype(v.dtype) != _elem(t).dtype:
                raise TypeError(
                    f"gufunc '{self.__name__}': input operand {k} is a device "
                    f"array of {np.dtype(v.dtype)}, the loop takes "
                    f"{_elem(t)}; a device array does not support .astype()"
                )
        outs = tuple(mem.operand(o, stream) for o in outs)
        sizes, loop_shape = self._bind(operands, outs)
        on_device = any(mem.is_device(v) for v in (*operands, *outs))
        shapes = [loop_shape + tuple(sizes[d] for d in core) for core in self.outs]
        dev_outs, host_outs = [], []
        for k, t in enumerate(loop[self.nin :]):
            given = outs[k] if outs else None
            if given is not None and _squeeze(given.shape) != _squeeze(shapes[k]):
                raise ValueError(
                    f"gufunc '{self.__name__}': output operand {k} has shape "
                    f"{tuple(given.shape)}, expected {shapes[k]}"
                )
            if given is not None and mem.is_device(given):
                dev_outs.append(mem.as_device(given, stream))
                host_outs.append(None)
            else:
                # a host out= comes back in its own shape and dtype (the kernel casts)
                shape, dtype = (
                    (shapes[k], _elem(t).dtype)
                    if given is None
                    else (tuple(given.shape), given.dtype)
                )
                dev_outs.append(mem.empty(shape, dtype, stream))
                host_outs.append(given)
        dev_ins = [
            v
            if _is_scalar(v)
            else (mem.as_device(v, stream) if mem.is_device(v) else mem.to_device(v, stream))
            for v in operands
        ]
        self._run(mem, loop, dev_ins, dev_outs, sizes, loop_shape, stream)
        results = [
            self._result(mem, d, h, on_device, stream)
            for d, h in zip(dev_outs, host_outs, strict=True)
        ]
        return results[0] if self.nout == 1 else tuple(results)

    @staticmethod
    def _result(mem, dev, host, on_device, stream):
        if on_device:
            return dev
        if host is not None:
            mem.copy_into_host(dev, host, stream)
            return host
        return mem.to_host(dev, stream)

    def _bind(self, operands, outs) -> tuple[dict[str, int], tuple[int, ...]]:
        sizes: dict[str, int] = {}
        loops = []
        pairs = [
            (v, core, f"input operand {k}")
            for k, (v, core) in enumerate(zip(operands, self.ins, strict=True))
        ]
        # outs is empty when the call allocates its outputs: then only the inputs bind.
        pairs += [
            (v, core, f"output operand {k}")
            for k, (v, core) in enumerate(zip(outs, self.outs, strict=False))
        ]
        for value, core, what in pairs:
            shape = () if _is_scalar(value) else tuple(value.shape)
            if len(shape) < len(core):
                raise ValueError(
                    f"gufunc '{self.__name__}': {what} does not have enough "
                    f"dimensions (has {len(shape)}, gufunc core with "
                    f"signature {self.layout} requires {len(core)})"
                )
            split = len(shape) - len(core)
            for name, n in zip(core, shape[split:], strict=True):
                if sizes.setdefault(name, n) != n:
                    raise ValueError(
                        f"gufunc '{self.__name__}': {what} has a mismatch in "
                        f"its core dimension {name}, with gufunc signature "
                        f"{self.layout} (size {n} is different from "
                        f"{sizes[name]})"
                    )
            if what.startswith("input"):
                loops.append(shape[:split])
        missing = {d for core in self.outs for d in core} - set(sizes)
        if missing:
            raise ValueError(
                f"gufunc '{self.__name__}': output core dimension(s) "
                f"{', '.join(sorted(missing))} are not bound by any input"
            )
        return sizes, resolve.broadcast_shape(self.__name__, loops)

    def _run(self, mem, loop, dev_ins, dev_outs, sizes, loop_shape, stream) -> None:
        nloop = math.prod(loop_shape)
        if nloop == 0:
            return
        full = (1,) + loop_shape  # at least one loop axis: 0-d operands need no special case
        views, cores, kinds = [], [], ""
        operands, core_dims = (*dev_ins, *dev_outs), (*self.ins, *self.outs)
        for k, (v, core) in enumerate(zip(operands, core_dims, strict=True)):
            core_shape = tuple(sizes[d] for d in core)
            cores.append(core_shape)
            if _is_scalar(v):
                views.append(v)
                kinds += "s"
                continue
            shape = full + core_shape
            strides = resolve.broadcast_strides(v.shape, v.strides, shape)
            views.append(mem.view(v, shape, strides, writeable=k >= self.nin))
            kinds += "a"
        key = (loop, kinds, len(full), tuple(cores))
        kern = self._kernels.get(key)
        if kern is None:
            kern = self._kernels[key] = kernels.gufunc_kernel(
                self.device_function, loop, kinds, self.nin, len(full), cores, self.target
            )
        args = [np.int64(nloop), *views]
        blocks, tpb = kernels.launch_shape(nloop, kernels.block_size(kern, args, stream))
        kern[blocks, tpb, stream](*args)


def _squeeze(shape) -> tuple[int, ...]:
    # An output may leave out leading loop axes of extent 1 (numba accepts that).
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _count(n: int) -> str:
    return f"{n} positional argument{'s' * (n != 1)}"


def _elem(t) -> Scalar:
    return t.dtype if isinstance(t, Array) else t


def check_gufunc_options(options: dict) -> None:
    """numba's rules: ``nopython`` must be True; no other target option exists."""
    if not options.pop("nopython", True):
        raise TypeError("nopython flag must be True")
    if options:
        raise TypeError(
            "The following target options are not supported: " + ", ".join(repr(k) for k in options)
        )


def guvectorize(signatures, layout: str, target: str | None = None, identity=None, **options):
    """``@cuda.guvectorize(['void(float32[:,:], float32[:,:], float32[:,:])'],
    '(m,n),(n,p)->(m,p)')``: a GUFunc of the decorated function."""
    if options.pop("cache", False):
        raise TypeError("caching is not supported")
    options.pop("writable_args", None)  # every cujit kernel argument is writable
    check_gufunc_options(options)
    sigs = [signatures] if isinstance(signatures, (str, Signature)) else list(signatures)
    chosen = config.TARGET.get() if target in (None, "cuda", "gpu") else target
    if chosen not in ("cuda", "cpu"):
        raise ValueError(f"unknown guvectorize target {target!r}: use 'cuda' or 'cpu'")

    def decorate(pyfunc):
        return GUFunc(pyfunc, sigs, layout, chosen)

    return decorate
