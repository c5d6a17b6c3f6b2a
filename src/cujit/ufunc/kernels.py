"""The kernels behind cujit's ufuncs, written as Python source and compiled by ``cujit.jit``.

An element-wise kernel calls the user's scalar function (a device function) once per
output element in a grid-stride loop.  The *flat* form walks contiguous operands of the
output's shape as one dimension; the *strided* form takes N-d views (broadcast operands
have stride 0) and unravels the flat index.  Scalar operands arrive as kernel scalars.
"""

from __future__ import annotations

from cujit.types import Scalar

# Blocks a grid-stride launch uses at most: enough to fill any GPU several times over.
MAX_BLOCKS = 65536


def _compile_source(src: str, name: str, env: dict, target: str):
    from cujit import cuda
    from cujit.dispatcher import Kernel

    namespace = {"cuda": cuda, **env}
    exec(compile(src, f"<cujit {name}>", "exec"), namespace)  # noqa: S102
    return Kernel(namespace[name], target=target)


def map_kernel(devfn, inputs: tuple[Scalar, ...], kinds: str, ndim: int, out: Scalar,
               target: str):
    """An element-wise kernel ``k(out, x0, x1, ...)`` for operand kinds ``kinds``
    ('a' array, 's' scalar already of its loop type) over ``ndim`` dimensions
    (0: the flat form)."""
    params = ", ".join(f"x{k}" for k in range(len(kinds)))
    idx = "i" if ndim == 0 else ", ".join(f"i{d}" for d in range(ndim))
    args = ", ".join(f"c{k}(x{k}[{idx}])" if kind == "a" else f"x{k}"
                     for k, kind in enumerate(kinds))
    lines = [f"def _ufunc_map(out, {params}):" if params else "def _ufunc_map(out):",
             "    i = cuda.grid(1)",
             "    step = cuda.gridsize(1)",
             "    n = out.size"]
    lines += [f"    d{d} = out.shape[{d}]" for d in range(1, ndim)]
    lines.append("    while i < n:")
    lines += _unravel(ndim)
    lines += [f"        out[{idx}] = co(fn({args}))", "        i += step"]
    env = {"fn": devfn, "co": out, **{f"c{k}": t for k, t in enumerate(inputs)}}
    return _compile_source("\n".join(lines) + "\n", "_ufunc_map", env, target)


def _unravel(ndim: int) -> list[str]:
    # The C-order multi-index of flat index i: the last axis varies fastest.
    if ndim <= 1:
        return ["        i0 = i"] if ndim == 1 else []
    lines = ["        r = i"]
    for d in range(ndim - 1, 0, -1):
        lines += [f"        i{d} = r % d{d}", f"        r = r // d{d}"]
    lines.append("        i0 = r")
    return lines


def launch_shape(n: int, tpb: int) -> tuple[int, int]:
    """(blocks, threads per block) of a grid-stride launch over ``n`` items."""
    blocks = max(1, min((n + tpb - 1) // tpb, MAX_BLOCKS))
    return blocks, tpb


def block_size(kernel, args, stream) -> int:
    """The occupancy calculator's block size for ``kernel`` at ``args`` (as forall)."""
    return kernel._forall_block_size(args, stream, 0)
