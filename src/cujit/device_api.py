"""The objects a kernel names to reach the GPU: ``cuda.grid``, ``cuda.threadIdx.x``,
``cuda.shared.array``, ``cuda.atomic.add``...

They are placeholders with a stable identity: type inference recognises them by
identity (see ``cujit.infer.calls``) and the target lowers them.  Called on
the host they raise, since they mean something only inside a kernel.
"""

from __future__ import annotations


class DeviceOnly:
    """A function usable only inside a kernel; ``key`` names its intrinsic."""

    def __init__(self, key: str, doc: str = ""):
        self.key = key
        self.__name__ = key.rsplit(".", 1)[-1]
        self.__qualname__ = key
        self.__module__ = "cujit.cuda"
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.key} can only be called inside a @cuda.jit kernel")

    def __repr__(self) -> str:
        return f"<cujit device function cuda.{self.key}>"

    def __reduce__(self):  # pickles by name, so kernels referencing it pickle too
        return (_lookup, (self.key,))


class SpecialRegister:
    """One of ``threadIdx.x`` ... ``gridDim.z``, ``laneid``, ``warpsize``: an int32 read from
    a PTX special register (``warpsize`` is the constant 32)."""

    def __init__(self, key: str):
        self.key = key
        self.__qualname__ = key
        self.__module__ = "cujit.cuda"

    def __repr__(self) -> str:
        return f"<cujit special register cuda.{self.key}>"

    def __reduce__(self):
        return (_lookup, (self.key,))


class Dim3:
    """``cuda.threadIdx`` and friends: ``.x``, ``.y``, ``.z``."""

    def __init__(self, name: str):
        self.__qualname__ = name
        self.__module__ = "cujit.cuda"
        self.x = SpecialRegister(f"{name}.x")
        self.y = SpecialRegister(f"{name}.y")
        self.z = SpecialRegister(f"{name}.z")

    def __repr__(self) -> str:
        return f"<cujit cuda.{self.__qualname__}>"


class Namespace:
    """A group of device functions (``cuda.shared``, ``cuda.local``, ``cuda.atomic``)."""

    def __init__(self, name: str, **members: DeviceOnly):
        self.__qualname__ = name
        self.__module__ = "cujit.cuda"
        for k, v in members.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<cujit cuda.{self.__qualname__}>"


threadIdx = Dim3("threadIdx")
blockIdx = Dim3("blockIdx")
blockDim = Dim3("blockDim")
gridDim = Dim3("gridDim")
laneid = SpecialRegister("laneid")  # this thread's lane in its warp, 0..31 (int32)
warpsize = SpecialRegister("warpsize")  # 32 on every architecture so far (int32)

grid = DeviceOnly(
    "grid", "grid(ndim): this thread's absolute index (an int, or a tuple for 2-3 dims)"
)
gridsize = DeviceOnly("gridsize", "gridsize(ndim): the number of threads in the grid per dimension")

# -- synchronisation and memory fences ------------------------------------------
syncthreads = DeviceOnly("syncthreads", "barrier for all threads of the block")
syncthreads_count = DeviceOnly(
    "syncthreads_count", "syncthreads_count(predicate): barrier; how many threads had it non-zero"
)
syncthreads_and = DeviceOnly(
    "syncthreads_and", "syncthreads_and(predicate): barrier; 1 if every thread had it non-zero"
)
syncthreads_or = DeviceOnly(
    "syncthreads_or", "syncthreads_or(predicate): barrier; 1 if any thread had it non-zero"
)
syncwarp = DeviceOnly("syncwarp", "syncwarp(mask=0xffffffff): barrier for the warp's lanes in mask")
threadfence = DeviceOnly("threadfence", "memory fence at device scope")
threadfence_block = DeviceOnly("threadfence_block", "memory fence at block scope")
threadfence_system = DeviceOnly("threadfence_system", "memory fence at system scope (host too)")
nanosleep = DeviceOnly("nanosleep", "nanosleep(ns): suspend the thread for about ns nanoseconds")

# -- warp-level functions ----------------------------------------------------------
shfl_sync = DeviceOnly("shfl_sync", "shfl_sync(mask, value, src_lane): value of lane src_lane")
shfl_up_sync = DeviceOnly("shfl_up_sync", "shfl_up_sync(mask, value, delta): from lane - delta")
shfl_down_sync = DeviceOnly(
    "shfl_down_sync", "shfl_down_sync(mask, value, delta): from lane + delta"
)
shfl_xor_sync = DeviceOnly(
    "shfl_xor_sync", "shfl_xor_sync(mask, value, lane_mask): from lane ^ lane_mask"
)
all_sync = DeviceOnly("all_sync", "all_sync(mask, predicate): true if it holds on every lane")
any_sync = DeviceOnly("any_sync", "any_sync(mask, predicate): true if it holds on any lane")
eq_sync = DeviceOnly("eq_sync", "eq_sync(mask, predicate): true if every lane agrees")
ballot_sync = DeviceOnly("ballot_sync", "ballot_sync(mask, predicate): bit k set if lane k holds")
activemask = DeviceOnly("activemask", "activemask(): the lanes executing this call (uint32)")
lanemask_lt = DeviceOnly("lanemask_lt", "lanemask_lt(): the bits of the lanes below this one")
match_any_sync = DeviceOnly(
    "match_any_sync", "match_any_sync(mask, value): the lanes holding the same value"
)
match_all_sync = DeviceOnly(
    "match_all_sync", "match_all_sync(mask, value): (mask if all lanes agree else 0, agree)"
)

# -- bit and float intrinsics --------------------------------------------------------
popc = DeviceOnly("popc", "popc(x): the number of set bits")
brev = DeviceOnly("brev", "brev(x): the bits of x reversed")
clz = DeviceOnly("clz", "clz(x): the number of leading zero bits")
ffs = DeviceOnly("ffs", "ffs(x): 1 + the position of the lowest set bit, 0 if none")
fma = DeviceOnly("fma", "fma(a, b, c): a * b + c rounded once")
# Loads and stores with a PTX cache operator (PTX ISA, "Cache Operators").
CACHE_LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
CACHE_STORES = ("stcg", "stcs", "stwb", "stwt")
ldca, ldcg, ldcs, ldlu, ldcv = (
    DeviceOnly(n, f"{n}(array, i): array[i], loaded ld.global.{n[2:]}") for n in CACHE_LOADS
)
stcg, stcs, stwb, stwt = (
    DeviceOnly(n, f"{n}(array, i, value): array[i] = value, stored st.global.{n[2:]}")
    for n in CACHE_STORES
)
cbrt = DeviceOnly("cbrt", "cbrt(x): the cube root")
selp = DeviceOnly("selp", "selp(test, a, b): a if test else b, with no branch (PTX selp)")

# -- tensor cores (sm_80+; docs/tensor-cores.md) ------------------------------------
mma = DeviceOnly(
    "mma",
    "mma(shape, kind, a, b, c): the warp's D = A @ B + C (mma.sync); a, b, c are this "
    "lane's fragments (tuples of 32-bit registers); returns D as c's type",
)
ldmatrix = DeviceOnly(
    "ldmatrix",
    "ldmatrix(array, i, num=4, trans=False): num 8x8 matrices of 16-bit elements from "
    "shared memory, each lane giving one row's address &array[i]; num uint32",
)
stmatrix = DeviceOnly(
    "stmatrix",
    "stmatrix(array, i, regs, trans=False): ldmatrix's inverse (sm_90)",
)
cp_async = DeviceOnly(
    "cp_async",
    "cp_async(dst, i, src, j, size=16, cache='ca'): copy size bytes from &src[j] (global) "
    "to &dst[i] (shared) asynchronously",
)
cp_async_commit_group = DeviceOnly(
    "cp_async_commit_group", "cp_async_commit_group(): close the group of cp_async copies"
)
cp_async_wait_group = DeviceOnly(
    "cp_async_wait_group",
    "cp_async_wait_group(n): wait until at most n committed groups are pending",
)
cp_async_wait_all = DeviceOnly("cp_async_wait_all", "cp_async_wait_all(): wait for every copy")
pack_bf16x2 = DeviceOnly(
    "pack_bf16x2", "pack_bf16x2(lo, hi): two bfloat16 (rounded to nearest even) in a uint32"
)
pack_f16x2 = DeviceOnly(
    "pack_f16x2", "pack_f16x2(lo, hi): two float16 (rounded to nearest even) in a uint32"
)
unpack_bf16x2 = DeviceOnly("unpack_bf16x2", "unpack_bf16x2(r): (lo, hi) as float32")
unpack_f16x2 = DeviceOnly("unpack_f16x2", "unpack_f16x2(r): (lo, hi) as float32")
to_tf32 = DeviceOnly("to_tf32", "to_tf32(x): float32 x rounded to tf32 (cvt.rna.tf32.f32)")
TENSOR_CORE_FUNCTIONS = (
    mma,
    ldmatrix,
    stmatrix,
    cp_async,
    cp_async_commit_group,
    cp_async_wait_group,
    cp_async_wait_all,
    pack_bf16x2,
    pack_f16x2,
    unpack_bf16x2,
    unpack_f16x2,
    to_tf32,
)

shared = Namespace(
    "shared",
    array=DeviceOnly(
        "shared.array",
        "shared.array(shape, dtype): block-shared memory; shape 0 means sized at launch",
    ),
)
local = Namespace(
    "local", array=DeviceOnly("local.array", "local.array(shape, dtype): a per-thread array")
)
const = Namespace(
    "const",
    array_like=DeviceOnly(
        "const.array_like",
        "const.array_like(ary): a copy of ary, a NumPy array known at compile "
        "time (a global or closure variable), in constant memory",
    ),
)


class GridGroup:
    """What ``cuda.cg.this_grid()`` returns in a kernel: the whole grid as one group.
    A compile-time object: ``g.sync()`` is the grid-wide barrier."""

    attr_hint = "a grid group has one method: sync()"

    def __init__(self):
        self.__qualname__ = "cg.GridGroup"
        self.__module__ = "cujit.cuda"
        self.sync = DeviceOnly(
            "cg.GridGroup.sync",
            "sync(): barrier for every thread of the grid (the launch is "
            "cooperative: all blocks resident at once)",
        )

    def __repr__(self) -> str:
        return "<cujit cuda.cg.GridGroup>"

    def __reduce__(self):
        return (_lookup, ("cg.GridGroup",))


grid_group = GridGroup()
# cuda.cg: numba's cooperative groups (the grid group only, as numba has).
cg = Namespace(
    "cg",
    this_grid=DeviceOnly(
        "cg.this_grid",
        "this_grid(): the grid group of the calling thread; .sync() on it is a grid-wide barrier",
    ),
)
cg.this_grid.attr_hint = "call it first: g = cuda.cg.this_grid(); g.sync()"

_ATOMIC_DOCS = {
    "add": "array[idx] += val",
    "sub": "array[idx] -= val",
    "max": "array[idx] = max(array[idx], val) (a NaN on either side leaves it unchanged)",
    "min": "array[idx] = min(array[idx], val) (a NaN on either side leaves it unchanged)",
    "nanmax": "array[idx] = max(array[idx], val), ignoring a NaN val, replacing a NaN there",
    "nanmin": "array[idx] = min(array[idx], val), ignoring a NaN val, replacing a NaN there",
    "and_": "array[idx] &= val",
    "or_": "array[idx] |= val",
    "xor": "array[idx] ^= val",
    "exch": "array[idx] = val",
    "inc": "array[idx] = 0 if array[idx] >= val else array[idx] + 1",
    "dec": "array[idx] = val if array[idx] == 0 or array[idx] > val else array[idx] - 1",
}
atomic = Namespace(
    "atomic",
    **{
        name: DeviceOnly(
            f"atomic.{name}",
            f"atomic.{name}(array, idx, val): {doc} atomically; returns the old value",
        )
        for name, doc in _ATOMIC_DOCS.items()
    },
    cas=DeviceOnly(
        "atomic.cas",
        "atomic.cas(array, idx, old, val): array[idx] = val if it "
        "equals old, atomically; returns the old value",
    ),
    compare_and_swap=DeviceOnly(
        "atomic.compare_and_swap",
        "atomic.compare_and_swap(array, old, val): atomic.cas at index 0 of a 1-d array",
    ),
)

# cuda.fp16: numba's half-precision functions (numba-cuda's ``fp16.py``).  Each takes and
# returns float16 (the comparisons return bool); ``cujit.infer.fp16_calls`` types them.
FP16_FUNCTIONS = (
    "hadd",
    "hsub",
    "hmul",
    "hdiv",
    "hneg",
    "habs",
    "hfma",
    "hmax",
    "hmin",
    "heq",
    "hne",
    "hlt",
    "hle",
    "hgt",
    "hge",
    "hsqrt",
    "hrsqrt",
    "hrcp",
    "hexp",
    "hexp2",
    "hexp10",
    "hlog",
    "hlog2",
    "hlog10",
    "hsin",
    "hcos",
    "htanh",
    "htanh_approx",
    "hfloor",
    "hceil",
    "htrunc",
    "hrint",
)
fp16 = Namespace(
    "fp16",
    **{name: DeviceOnly(f"fp16.{name}", f"fp16.{name}: half precision") for name in FP16_FUNCTIONS},
)

ALL: dict[str, object] = {}
for _obj in (
    grid,
    gridsize,
    syncthreads,
    syncthreads_count,
    syncthreads_and,
    syncthreads_or,
    syncwarp,
    threadfence,
    threadfence_block,
    threadfence_system,
    nanosleep,
    shfl_sync,
    shfl_up_sync,
    shfl_down_sync,
    shfl_xor_sync,
    all_sync,
    any_sync,
    eq_sync,
    ballot_sync,
    activemask,
    lanemask_lt,
    match_any_sync,
    match_all_sync,
    popc,
    brev,
    clz,
    ffs,
    fma,
    cbrt,
    selp,
    ldca,
    ldcg,
    ldcs,
    ldlu,
    ldcv,
    stcg,
    stcs,
    stwb,
    stwt,
    shared.array,
    local.array,
    const.array_like,
    laneid,
    warpsize,
    cg.this_grid,
    grid_group.sync,
    *(v for v in vars(atomic).values() if isinstance(v, DeviceOnly)),
    *TENSOR_CORE_FUNCTIONS,
):
    ALL[_obj.key] = _obj
for _obj in vars(fp16).values():
    if isinstance(_obj, DeviceOnly):
        ALL[_obj.key] = _obj
for _d in (threadIdx, blockIdx, blockDim, gridDim):
    for _r in (_d.x, _d.y, _d.z):
        ALL[_r.key] = _r


ALL["cg.GridGroup"] = grid_group


def _lookup(key: str):
    return ALL[key]


def literal_unroll(container):
    """``for x in literal_unroll(tup):`` in a kernel: the loop is unrolled at compile
    time, one copy of its body per item, so the items may differ in type.  On the host
    it is the container itself."""
    return container


literal_unroll.__module__ = "cujit.cuda"
# numba's own ``literal_unroll`` (numba.misc.special, numba.cuda.misc.special) means the
# same; kernels that import it are recognised by name and module (numba is not imported).
LITERAL_UNROLL_MODULES = ("cujit.cuda", "numba.misc.special", "numba.cuda.misc.special")


def is_literal_unroll(value: object) -> bool:
    """Whether ``value`` is cujit's or numba's ``literal_unroll``."""
    return (
        callable(value)
        and getattr(value, "__name__", None) == "literal_unroll"
        and getattr(value, "__module__", None) in LITERAL_UNROLL_MODULES
    )
