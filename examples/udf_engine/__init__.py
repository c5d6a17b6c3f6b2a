"""A small UDF engine in the style of cuDF, written on cujit's library API.

A user writes a plain Python function of nullable values; the engine compiles it as
a device function over ``Masked`` values (an extension type with a struct model),
learns its result type with ``cuda.compile_ptx``, generates the source of a kernel
that reads the columns, calls the function per row and writes the result column and
its validity mask, and launches it from a host routine:

    from examples.udf_engine import apply_udf, Column

    def f(x, y):
        return x * 2 + y

    out = apply_udf(f, Column(xs, xmask), Column(ys, ymask))   # out.data, out.mask

``masked_fma`` is a C++ shim (``shim.cu``) the user's function may call; it is linked
through ``cuda.declare_device`` and so runs on GPUs only.
"""

from examples.udf_engine.engine import Column, apply_udf, compile_udf
from examples.udf_engine.masked import NA, Masked, MaskedType
from examples.udf_engine.shim import masked_fma

__all__ = ["NA", "Column", "Masked", "MaskedType", "apply_udf", "compile_udf", "masked_fma"]
