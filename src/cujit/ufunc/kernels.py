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
# Elements per step of a flat element-wise kernel's grid-stride loop.
UNROLL = 4


def _compile_source(src: str, name: str, env: dict, target: str):
    from cujit import device_api as cuda  # the names kernels call
    from cujit.dispatcher import Kernel

    namespace = {"cuda": cuda, **env}
    exec(compile(src, f"<cujit {name}>", "exec"), namespace)  # noqa: S102
    return Kernel(namespace[name], target=target)


def map_kernel(devfn, inputs: tuple[Scalar, ...], kinds: str, ndim: int, out: Scalar, target: str):
    """An element-wise kernel ``k(out, x0, x1, ...)`` for operand kinds ``kinds``
    ('a' array, 's' scalar already of its loop type) over ``ndim`` dimensions
    (0: the flat form)."""
    params = ", ".join(f"x{k}" for k in range(len(kinds)))
    idx = "i" if ndim == 0 else ", ".join(f"i{d}" for d in range(ndim))
    args = ", ".join(
        f"c{k}(x{k}[{idx}])" if kind == "a" else f"x{k}" for k, kind in enumerate(kinds)
    )
    lines = [
        f"def _ufunc_map(out, {params}):" if params else "def _ufunc_map(out):",
        "    i = cuda.grid(1)",
        "    step = cuda.gridsize(1)",
        "    n = out.size",
    ]
    lines += [f"    d{d} = out.shape[{d}]" for d in range(1, ndim)]
    if ndim == 0:
        lines += _unrolled(kinds)
    lines.append("    while i < n:")
    lines += _unravel(ndim)
    lines += [f"        out[{idx}] = co(fn({args}))", "        i += step"]
    env = {"fn": devfn, "co": out, **{f"c{k}": t for k, t in enumerate(inputs)}}
    return _compile_source("\n".join(lines) + "\n", "_ufunc_map", env, target)


def flat_kernel(devfn, inputs: tuple[Scalar, ...], kinds: str, out: Scalar, target: str):
    """The flat form as one element per thread, ``k(out, x0, x1, ...)`` for operand kinds
    ``kinds``: the shape cujit coarsens (docs/coarsening.md), each thread then moving
    16 bytes of every operand; launched with a grid covering ``out.size``."""
    params = "".join(f", x{k}" for k in range(len(kinds)))
    args = ", ".join(f"c{k}(x{k}[i])" if kind == "a" else f"x{k}" for k, kind in enumerate(kinds))
    src = (
        f"def _ufunc_flat(out{params}):\n"
        "    i = cuda.grid(1)\n"
        "    if i < out.size:\n"
        f"        out[i] = co(fn({args}))\n"
    )
    env = {"fn": devfn, "co": out, **{f"c{k}": t for k, t in enumerate(inputs)}}
    return _compile_source(src, "_ufunc_flat", env, target)


def _unrolled(kinds: str) -> list[str]:
    # The flat form's main loop: UNROLL elements per step, every load before any store
    # (an output may alias an input), so that each thread has UNROLL loads in flight.
    lines = [f"    while i + {UNROLL - 1} * step < n:"]
    for u in range(UNROLL):
        at = "i" if u == 0 else f"i + {u} * step"
        args = ", ".join(
            f"c{k}(x{k}[{at}])" if kind == "a" else f"x{k}" for k, kind in enumerate(kinds)
        )
        lines.append(f"        r{u} = co(fn({args}))")
    for u in range(UNROLL):
        lines.append(f"        out[{'i' if u == 0 else f'i + {u} * step'}] = r{u}")
    return lines + [f"        i += {UNROLL} * step"]


def _unravel(ndim: int) -> list[str]:
    # The C-order multi-index of flat index i: the last axis varies fastest.
    if ndim <= 1:
        return ["        i0 = i"] if ndim == 1 else []
    lines = ["        r = i"]
    for d in range(ndim - 1, 0, -1):
        lines += [f"        i{d} = r % d{d}", f"        r = r // d{d}"]
    lines.append("        i0 = r")
    return lines


def launch_shape(n: int, tpb: int, per_thread: int = 1) -> tuple[int, int]:
    """(blocks, threads per block) of a grid-stride launch over ``n`` items, each
    thread taking ``per_thread`` of them per step."""
    blocks = max(1, min((n + tpb * per_thread - 1) // (tpb * per_thread), MAX_BLOCKS))
    return blocks, tpb


def block_size(kernel, args, stream) -> int:
    """The occupancy calculator's block size for ``kernel`` at ``args`` (as forall)."""
    return kernel._forall_block_size(args, stream, 0)


def gufunc_kernel(
    devfn,
    loop: tuple,
    kinds: str,
    nin: int,
    nloop_dims: int,
    cores: list[tuple[int, ...]],
    target: str,
):
    """A gufunc kernel ``k(nloop, v0, v1, ...)``: views of shape loop + core (the first
    loop axis has extent 1), scalars for kinds 's'; one loop iteration per grid-stride
    step, its core blocks in local arrays of the sizes in ``cores``."""
    from cujit.types import Array

    loop_idx = ["0"] + [f"l{d}" for d in range(1, nloop_dims)]
    body, after, call, env = [], [], [], {"fn": devfn}
    for k, (t, kind, core) in enumerate(zip(loop, kinds, cores, strict=True)):
        env[f"T{k}"] = t.dtype if isinstance(t, Array) else t
        if not isinstance(t, Array):
            if core or k >= nin:
                raise TypeError(
                    f"gufunc operand {k} has core dimensions {core} or is an "
                    f"output, so its signature type must be an array, not {t}"
                )
            call.append(f"x{k}" if kind == "s" else f"T{k}(x{k}[{', '.join(loop_idx)}])")
            continue
        shape = core or (1,)
        body.insert(0, f"    a{k} = cuda.local.array({shape!r}, T{k})")
        call.append(f"a{k}")
        if kind == "s":
            body.append(f"        a{k}[0] = x{k}")
            continue
        cidx = [f"c{k}_{j}" for j in range(len(core))]
        local = ", ".join(cidx) if core else "0"
        whole = ", ".join(loop_idx + cidx)
        nest = [f"for {c} in range({n}):" for c, n in zip(cidx, core, strict=True)]
        target_list = body if k < nin else after
        stmt = f"a{k}[{local}] = x{k}[{whole}]" if k < nin else f"x{k}[{whole}] = a{k}[{local}]"
        for depth, line in enumerate(nest + [stmt]):
            target_list.append("        " + "    " * depth + line)
    params = ", ".join(f"x{k}" for k in range(len(loop)))
    lines = [
        f"def _gufunc(nloop, {params}):",
        *[b for b in body if b.startswith("    a")],
        "    b = cuda.grid(1)",
        "    step = cuda.gridsize(1)",
    ]
    lines += [f"    d{d} = x{nin}.shape[{d}]" for d in range(1, nloop_dims)]
    lines += ["    while b < nloop:", "        r = b"]
    for d in range(nloop_dims - 1, 0, -1):
        lines += [f"        l{d} = r % d{d}", f"        r = r // d{d}"]
    lines += [b for b in body if not b.startswith("    a")]
    lines += [f"        fn({', '.join(call)})", *after, "        b += step"]
    return _compile_source("\n".join(lines) + "\n", "_gufunc", env, target)
