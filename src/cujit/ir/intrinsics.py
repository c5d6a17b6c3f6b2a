"""The intrinsic table: one row per ``Intrinsic.name`` the typed IR may hold.

Each row says which typing rule emits the name, what the op does besides computing
its result (reads or writes memory, into which argument, a fence, output, a barrier,
a collective over a warp, a suspension on the CPU target), how many operands it takes
and what it means on each target.  The consumers read these facts from here and
nowhere else:

- ``passes.dce`` keeps an op whose row has a side effect (``Intrinsic.side_effect``);
- ``ir.analysis.written_arguments`` marks the argument a row stores into, and
  ``ir.analysis.needs_cooperative_launch`` finds a ``cooperative`` row;
- ``targets.cpu.coro`` and ``targets.cpu.warp`` pick the CPU scheduler from
  ``cpu_wait``: a block or grid barrier suspends a coroutine under the block or grid
  scheduler, a rendezvous suspends it under the warp scheduler;
- ``ir.verifier`` rejects a name with no row and an operand count that differs;
- ``docs/typed-ir.md``'s effects section is ``markdown_table()`` (a test keeps it so).

Every row is lowered by both targets' tables (``targets/cuda/intrinsics.py``,
``targets/cpu/intrinsics.py`` and its variants); a target that cannot serve one lists
it in ``refused`` with the message the user sees at the call's line.
"""

from __future__ import annotations

from cujit.frozen import frozen
from cujit.libdevice import arities as libdevice_arities

# ``cpu_wait`` values: how the CPU target waits at the op.
COROUTINE = "coroutine"  # a block or grid barrier: the thread's coroutine suspends
RENDEZVOUS = "rendezvous"  # the warp scheduler's exchange buffer (targets/cpu/warp.py)


@frozen
class IntrinsicRow:
    """The facts about one intrinsic name (see the module docstring)."""

    name: str
    typing: str  # "module:function" of the rule in ``cujit.infer`` that emits it
    arity: int | None  # operand count; None: any
    reads: bool = False  # reads memory through an operand (an atomic's element)
    stores_into: int | None = None  # the operand whose memory it writes
    fence: bool = False  # orders this thread's memory operations
    io: bool = False  # writes to the process's output
    barrier: str = ""  # "block", "grid" or "warp": waits for the other threads
    warp: bool = False  # a collective over the lanes of a warp
    cpu_wait: str = ""  # "", COROUTINE or RENDEZVOUS (the CPU target suspends there)
    cooperative: bool = False  # its kernel is launched cooperatively (as numba marks it)
    cuda: str = ""  # what it is on the CUDA target
    cpu: str = ""  # what it is on the CPU target
    refused: tuple[tuple[str, str], ...] = ()  # (target, message shown to the user)
    min_arch: tuple[int, int] | None = None  # the first CUDA architecture that has it

    @property
    def writes(self) -> bool:
        return self.stores_into is not None

    @property
    def side_effect(self) -> bool:
        """Whether the op must stay even when nothing reads its result."""
        return self.writes or self.fence or self.io or bool(self.barrier) or self.cooperative

    @property
    def suspends(self) -> bool:
        """Whether a CPU thread may suspend at the op (its function must be a coroutine)."""
        return bool(self.cpu_wait)

    def refusal(self, target: str) -> str | None:
        for name, message in self.refused:
            if name == target:
                return message
        return None


def _rows(names, typing: str, arity: int | None, **facts) -> tuple[IntrinsicRow, ...]:
    return tuple(IntrinsicRow(name=n, typing=typing, arity=arity, **facts) for n in names)


_INFER = "cujit.infer."
MATH_UNARY = (
    "sqrt",
    "exp",
    "log",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "fabs",
    "erf",
    "erfc",
    "expm1",
    "log1p",
    "asinh",
    "acosh",
    "atanh",
    "gamma",
    "lgamma",
)
MATH_BINARY = ("pow", "atan2", "hypot", "copysign", "fmod")
CMATH = ("sqrt", "exp", "log", "log10", "sin", "cos")
ATOMIC_RMW = (
    "add",
    "sub",
    "max",
    "min",
    "nanmax",
    "nanmin",
    "and",
    "or",
    "xor",
    "exch",
    "inc",
    "dec",
)
SHUFFLES = ("cuda.shfl_sync", "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync")
VOTES = ("cuda.all_sync", "cuda.any_sync", "cuda.eq_sync", "cuda.ballot_sync")
MATCHES = ("cuda.match_any_sync", "cuda.match_all_sync")
BLOCK_VOTES = ("cuda.syncthreads_count", "cuda.syncthreads_and", "cuda.syncthreads_or")
FENCES = ("cuda.threadfence", "cuda.threadfence_block", "cuda.threadfence_system")

_THREAD = _rows(
    ("cuda.sreg",),
    _INFER + "access:type_getattr",
    0,
    cuda="a special-register read (llvm.nvvm.read.ptx.sreg.*, with its !range)",
    cpu="a hidden parameter of the thread state (laneid from the linear id)",
) + _rows(
    ("cuda.grid", "cuda.gridsize"),
    _INFER + "cuda_calls:grid",
    0,
    cuda="int64 arithmetic on the special registers",
    cpu="int64 arithmetic on the hidden thread state",
)

_BARRIERS = (
    _rows(
        ("cuda.syncthreads",),
        _INFER + "cuda_calls:call_syncthreads",
        0,
        barrier="block",
        cpu_wait=COROUTINE,
        cuda="llvm.nvvm.barrier0",
        cpu="a coroutine suspend point of the block scheduler",
    )
    + _rows(
        ("cuda.grid_sync",),
        _INFER + "cuda_calls:call_grid_sync",
        0,
        barrier="grid",
        cpu_wait=COROUTINE,
        cooperative=True,
        cuda="a barrier on the cooperative launch's grid workspace",
        cpu="a suspend point of the whole-grid scheduler",
    )
    + _rows(
        ("cuda.this_grid",),
        _INFER + "cuda_calls:call_this_grid",
        0,
        cooperative=True,
        cuda="nothing: the grid group is a compile-time object; its use makes the kernel "
        "cooperative, as numba's this_grid() does",
        cpu="nothing (the grid group is a compile-time object)",
    )
    + _rows(
        BLOCK_VOTES,
        _INFER + "cuda_calls:barrier_reduce",
        1,
        barrier="block",
        cpu_wait=RENDEZVOUS,
        cuda="llvm.nvvm.barrier0.popc/and/or",
        cpu="a block barrier of the warp scheduler, which reduces the predicates",
    )
    + _rows(
        ("cuda.syncwarp",),
        _INFER + "cuda_calls:call_syncwarp",
        1,
        barrier="warp",
        warp=True,
        cpu_wait=RENDEZVOUS,
        cuda="llvm.nvvm.bar.warp.sync",
        cpu="a rendezvous of the mask's lanes under the warp scheduler",
    )
    + _rows(
        FENCES,
        _INFER + "cuda_calls:fence",
        0,
        fence=True,
        cuda="llvm.nvvm.membar.gl/cta/sys",
        cpu="a seq_cst fence",
    )
)

_ARRAYS = (
    _rows(
        ("shared.array",),
        _INFER + "cuda_calls:array_alloc",
        0,
        cuda="an addrspace(3) global (shape (0,): the dynamic shared memory)",
        cpu="a slice of the block's shared buffer",
    )
    + _rows(
        ("local.array",),
        _INFER + "cuda_calls:array_alloc",
        0,
        cuda="a stack allocation",
        cpu="a stack allocation",
    )
    + _rows(
        ("const.array_like",),
        _INFER + "cuda_calls:constant_array",
        0,
        cuda="an addrspace(4) constant global",
        cpu="a private constant global",
    )
    + _rows(
        ("global.array",),
        _INFER + "cuda_calls:global_array",
        0,
        cuda="the device array's address as a constant",
        cpu="the host buffer's address as a constant",
    )
    + _rows(
        ("array.shape",),
        _INFER + "access:type_getattr",
        1,
        cuda="the array's extents",
        cpu="the array's extents",
    )
    + _rows(
        ("array.size",),
        _INFER + "access:type_getattr",
        1,
        cuda="the product of the extents",
        cpu="the product of the extents",
    )
)

_ATOMICS = _rows(
    [f"atomic.{op}" for op in ATOMIC_RMW],
    _INFER + "atomic_calls:atomic_rmw",
    3,
    reads=True,
    stores_into=0,
    cuda="atomicrmw (max/min of floats: a CAS loop)",
    cpu="atomicrmw (max/min of floats: a CAS loop)",
) + _rows(
    ("atomic.cas",),
    _INFER + "atomic_calls:call_cas",
    4,
    reads=True,
    stores_into=0,
    cuda="cmpxchg",
    cpu="cmpxchg",
)

_WARP = (
    _rows(
        SHUFFLES,
        _INFER + "warp_calls:shuffle",
        3,
        warp=True,
        cpu_wait=RENDEZVOUS,
        cuda="llvm.nvvm.shfl.sync.*",
        cpu="a rendezvous: the source lane's snapshot",
    )
    + _rows(
        VOTES,
        _INFER + "warp_calls:vote",
        2,
        warp=True,
        cpu_wait=RENDEZVOUS,
        cuda="llvm.nvvm.vote.*.sync",
        cpu="a rendezvous over the group's snapshots",
    )
    + _rows(
        MATCHES,
        _INFER + "warp_calls:match",
        2,
        warp=True,
        cpu_wait=RENDEZVOUS,
        cuda="llvm.nvvm.match.*.sync",
        cpu="a rendezvous over the group's snapshots",
    )
    + _rows(
        ("cuda.activemask",),
        _INFER + "warp_calls:lane_mask",
        0,
        warp=True,
        cpu_wait=RENDEZVOUS,
        cuda="PTX activemask.b32",
        cpu="a rendezvous: the lanes waiting at the same call",
    )
    + _rows(
        ("cuda.lanemask_lt",),
        _INFER + "warp_calls:lane_mask",
        0,
        cuda="llvm.nvvm.read.ptx.sreg.lanemask.lt",
        cpu="(1 << laneid) - 1",
    )
)

_BITS = (
    _rows(
        ("cuda.popc", "cuda.clz"),
        _INFER + "warp_calls:bit_count",
        1,
        cuda="llvm.ctpop / llvm.ctlz",
        cpu="llvm.ctpop / llvm.ctlz",
    )
    + _rows(
        ("cuda.ffs",),
        _INFER + "warp_calls:call_ffs",
        1,
        cuda="llvm.cttz, 0 for 0",
        cpu="llvm.cttz, 0 for 0",
    )
    + _rows(
        ("cuda.brev",),
        _INFER + "warp_calls:call_brev",
        1,
        cuda="llvm.bitreverse",
        cpu="llvm.bitreverse",
    )
    + _rows(("cuda.fma",), _INFER + "warp_calls:call_fma", 3, cuda="llvm.fma", cpu="llvm.fma")
    + _rows(("cuda.selp",), _INFER + "warp_calls:call_selp", 3, cuda="select", cpu="select")
    + _rows(
        ("cuda.cbrt",),
        _INFER + "warp_calls:call_cbrt",
        1,
        cuda="libdevice __nv_cbrt",
        cpu="the C library's cbrt",
    )
)

_BUILTINS = (
    _rows(
        ("print",),
        _INFER + "print_calls:call_print",
        None,
        io=True,
        cuda="vprintf",
        cpu="printf, then fflush(NULL)",
    )
    + _rows(
        ("abs",),
        _INFER + "builtin_calls:call_abs",
        1,
        cuda="llvm.abs / llvm.fabs",
        cpu="llvm.abs / llvm.fabs",
    )
    + _rows(
        ("min", "max"),
        _INFER + "builtin_calls:min_max",
        2,
        cuda="llvm.minnum/maxnum (floats), compare and select",
        cpu="llvm.minnum/maxnum and, for equal operands, their bits or'd/and'ed (floats: "
        "-0.0 below +0.0, as PTX's min/max), compare and select",
    )
    + _rows(
        ("range",),
        _INFER + "builtin_calls:call_range",
        3,
        cuda="a (start, stop, step) struct",
        cpu="a (start, stop, step) struct",
    )
)

_MATH = (
    _rows(
        [f"math.{f}" for f in MATH_UNARY],
        _INFER + "builtin_calls:math_unary",
        1,
        cuda="libdevice (__nv_*)",
        cpu="the C library (libm)",
    )
    + _rows(
        [f"math.{f}" for f in MATH_BINARY],
        _INFER + "builtin_calls:math_binary",
        2,
        cuda="libdevice (__nv_*)",
        cpu="the C library (libm)",
    )
    + _rows(
        ("math.isnan", "math.isinf", "math.isfinite"),
        _INFER + "builtin_calls:float_test",
        1,
        cuda="float compares",
        cpu="float compares",
    )
)

_COMPLEX = (
    _rows(
        ("complex.real", "complex.imag"),
        _INFER + "complex_calls:scalar_attr",
        1,
        cuda="extractvalue",
        cpu="extractvalue",
    )
    + _rows(
        ("complex.build",),
        _INFER + "complex_calls:call_complex",
        2,
        cuda="insertvalue",
        cpu="insertvalue",
    )
    + _rows(
        ("complex.conj",),
        _INFER + "complex_calls:conjugate",
        1,
        cuda="negate the imaginary part",
        cpu="negate the imaginary part",
    )
    + _rows(
        ("complex.abs",),
        _INFER + "complex_calls:call_abs_complex",
        1,
        cuda="hypot of the parts (libdevice)",
        cpu="hypot of the parts (libm)",
    )
    + _rows(
        [f"cmath.{f}" for f in CMATH],
        _INFER + "cmath_calls:cmath_unary",
        1,
        cuda="formulas on the parts with libdevice",
        cpu="formulas on the parts with libm",
    )
    + _rows(
        ("cmath.phase",),
        _INFER + "cmath_calls:call_phase",
        1,
        cuda="atan2(im, re)",
        cpu="atan2(im, re)",
    )
    + _rows(
        ("np.minimum", "np.maximum"),
        _INFER + "numpy_calls:np_minmax",
        2,
        cuda="compare and select, NaN wins",
        cpu="compare and select, NaN wins",
    )
)

CACHE_LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
CACHE_STORES = ("stcg", "stcs", "stwb", "stwt")
_MEMORY_HINTS = (
    _rows(
        [f"cache.{op}" for op in CACHE_LOADS],
        _INFER + "cache_hint_calls:cache_load",
        2,
        reads=True,
        cuda="ld.global with the cache operator (PTX ISA, ld)",
        cpu="a plain load",
    )
    + _rows(
        [f"cache.{op}" for op in CACHE_STORES],
        _INFER + "cache_hint_calls:cache_store",
        3,
        stores_into=0,
        cuda="st.global with the cache operator (PTX ISA, st)",
        cpu="a plain store",
    )
    + _rows(
        ("array.address",),
        _INFER + "access:type_getattr",
        1,
        cuda="the data pointer as uint64",
        cpu="the data pointer as uint64",
    )
    + _rows(
        ("array.slice",),
        _INFER + "slicing:array_slice",
        None,
        cuda="a view: the data pointer moved, extents and byte strides",
        cpu="a view: the data pointer moved, extents and byte strides",
    )
    + _rows(
        ("array.view",),
        _INFER + "array_methods:contiguous_view",
        None,
        cuda="a C-contiguous view of the same data: new extents (and element type)",
        cpu="a C-contiguous view of the same data: new extents (and element type)",
    )
)
# cuda.declare_device functions: an opaque call orders memory as a fence does.
_FOREIGN = _rows(
    ("foreign.call",),
    _INFER + "foreign_calls:call_foreign",
    None,
    reads=True,
    fence=True,
    cuda="a call of the declared symbol, which nvJitLink resolves",
    refused=(
        (
            "cpu",
            (
                "a call of a cuda.declare_device function (foreign.call) is "
                "foreign CUDA code, which cannot run on the CPU target"
            ),
        ),
    ),
)
_RECORDS = (
    _rows(
        ("record.get",),
        _INFER + "records:get_field",
        1,
        reads=True,
        cuda="a load at the field's offset",
        cpu="a load at the field's offset",
    )
    + _rows(
        ("record.view",),
        _INFER + "records:get_field",
        1,
        cuda="the field's address (a record, or an array of constant extents)",
        cpu="the field's address (a record, or an array of constant extents)",
    )
    + _rows(
        ("record.set",),
        _INFER + "records:set_field",
        2,
        stores_into=0,
        cuda="a store at the field's offset (a record: llvm.memmove)",
        cpu="a store at the field's offset (a record: llvm.memmove)",
    )
    + _rows(
        ("chars.set",),
        _INFER + "records:store_chars",
        1,
        stores_into=0,
        cuda="one store of the constant's padded bytes",
        cpu="one store of the constant's padded bytes",
    )
    + _rows(
        ("record.assign_array",),
        _INFER + "records:assign_array",
        2,
        reads=True,
        stores_into=0,
        cuda="unrolled element stores",
        cpu="unrolled element stores",
    )
)
_DATETIMES = _rows(
    ("datetime.arith",),
    _INFER + "datetime_ops:type_binop",
    2,
    cuda="int64 arithmetic on the unit-scaled counts, NaT kept",
    cpu="int64 arithmetic on the unit-scaled counts, NaT kept",
) + _rows(
    ("datetime.compare",),
    _INFER + "datetime_ops:type_compare",
    2,
    cuda="int64 compare of the unit-scaled counts (NaT: False, != True)",
    cpu="int64 compare of the unit-scaled counts (NaT: False, != True)",
)
# A call of a library's callable (cujit.extending: type_callable + lower_builtin).
_EXTENSIONS = _rows(
    ("extension.call",),
    _INFER + "extension_calls:extension_rule",
    None,
    cuda="the library's lowering function, given the llvmlite builder",
    cpu="the library's lowering function, given the llvmlite builder",
) + _rows(
    # A library's @intrinsic: its code generator may read and write any memory, so the
    # op stays and orders this thread's memory operations around it.
    ("extension.intrinsic",),
    _INFER + "extension_calls:extension_rule",
    None,
    fence=True,
    cuda="the library's code generator, given the llvmlite builder",
    cpu="the library's code generator, given the llvmlite builder",
)
# Pointers (types.CPointer): p[i] and p[i] = v on the element at address + i * itemsize.
_POINTERS = (
    _rows(
        ("pointer.load",),
        _INFER + "pointers:pointer_getitem",
        2,
        reads=True,
        cuda="inttoptr, getelementptr, load",
        cpu="inttoptr, getelementptr, load",
    )
    + _rows(
        ("pointer.store",),
        _INFER + "pointers:pointer_setitem",
        3,
        stores_into=0,
        cuda="inttoptr, getelementptr, store",
        cpu="inttoptr, getelementptr, store",
    )
    + _rows(
        # carray/farray: an array over the pointer's memory; its accesses are the array's.
        ("pointer.array",),
        _INFER + "pointers:cfarray_rule",
        None,
        cuda="inttoptr; the extents and contiguous strides",
        cpu="inttoptr; the extents and contiguous strides",
    )
)
# Enum members held at run time (types.EnumMember) are their values: no code.
_ENUMS = _rows(
    ("enum.convert",),
    _INFER + "enums:to_value",
    1,
    cuda="the same value (a member is its value)",
    cpu="the same value (a member is its value)",
)
# cuda.libdevice.*: one row per function of cujit.libdevice's table, all pure.
_LIBDEVICE = tuple(
    IntrinsicRow(
        name=f"libdevice.{name}",
        typing=_INFER + "libdevice_calls:libdevice_rules",
        arity=arity,
        cuda="the libdevice function `__nv_<name>`",
        cpu="the C library, or its formula (targets/cpu/libdevice)",
    )
    for name, arity in libdevice_arities().items()
)

# bfloat16 (cuda.bf16): reinterpretation, directed rounding, NaN-propagating min/max.
_BF16 = (
    _rows(
        ("bf16.bits", "bf16.from_bits"),
        _INFER + "bf16_calls:bf16_rules",
        1,
        cuda="the same i16 (a bfloat16 is its bits)",
        cpu="the same i16 (a bfloat16 is its bits)",
    )
    + _rows(
        (
            *(f"bf16.from_f32.{m}" for m in ("rz", "ru", "rd")),
            *(f"bf16.from_f64.{m}" for m in ("rn", "rz", "ru", "rd")),
        ),
        _INFER + "bf16_calls:bf16_rules",
        1,
        cuda="integer rounding of the float32 bits (float64: via round-to-odd)",
        cpu="integer rounding of the float32 bits (float64: via round-to-odd)",
    )
    + _rows(
        ("bf16.max_nan", "bf16.min_nan"),
        _INFER + "bf16_calls:bf16_rules",
        2,
        cuda="float32 compare and select, NaN first",
        cpu="float32 compare and select, NaN first",
    )
)

# fp8 (numba-cuda's _internal.cuda_fp8): the conversions to fp8 codes, e8m0 to bfloat16.
_FP8 = _rows(
    ("fp8.encode", "fp8.e8m0_to_bf16_bits"),
    _INFER + "fp8_calls:fp8_rules",
    1,
    cuda="integer rounding of the float32 bits (codegen/fp8.py)",
    cpu="integer rounding of the float32 bits (codegen/fp8.py)",
)

# The coarsened variant's wide accesses (passes/coarsen.py emits them, never infer).
_WIDE = _rows(
    ("wide.load",),
    "cujit.passes.coarsen:coarsen_kernel",
    2,
    reads=True,
    cuda="a 16-byte-aligned vector load of k elements from a[base] (ld.global.v4/v2)",
    cpu="a 16-byte-aligned vector load of k elements",
) + _rows(
    ("wide.store",),
    "cujit.passes.coarsen:coarsen_kernel",
    None,
    stores_into=0,
    cuda="a 16-byte-aligned vector store of k elements at a[base] (st.global.v4/v2)",
    cpu="a 16-byte-aligned vector store of k elements",
)

# cuda.nanosleep: a side effect of its own (timing); kept where it is, as a fence is.
_SLEEP = _rows(
    ("cuda.nanosleep",),
    _INFER + "cuda_calls:call_nanosleep",
    1,
    fence=True,
    cuda="`nanosleep.u32` (inline PTX; sm_70+)",
    cpu="nothing (the host thread runs on)",
)

# Tensor cores (cuda.mma, ldmatrix, cp_async...: docs/tensor-cores.md).  The warp-wide
# ones meet as a rendezvous on the CPU target, which computes each lane's part of the
# result from the whole warp's fragments (targets/cpu/mma.py).
_MMA = "mma_calls:"
_TENSOR_CORES = (
    _rows(
        ("tc.mma",),
        _INFER + _MMA + "call_mma",
        3,
        warp=True,
        cpu_wait=RENDEZVOUS,
        min_arch=(8, 0),
        cuda="`mma.sync.aligned` (inline PTX)",
        cpu="a rendezvous: each lane's D elements from the warp's A and B fragments",
    )
    + _rows(
        ("tc.ldmatrix",),
        _INFER + _MMA + "call_ldmatrix",
        2,
        reads=True,
        warp=True,
        cpu_wait=RENDEZVOUS,
        min_arch=(7, 5),
        cuda="`ldmatrix.sync.aligned.m8n8` (inline PTX)",
        cpu="a rendezvous of the row addresses, then loads",
    )
    + _rows(
        ("tc.stmatrix",),
        _INFER + _MMA + "call_stmatrix",
        3,
        stores_into=0,
        warp=True,
        cpu_wait=RENDEZVOUS,
        min_arch=(9, 0),
        cuda="`stmatrix.sync.aligned.m8n8` (inline PTX)",
        cpu="a rendezvous of the row addresses, then stores",
    )
    + _rows(
        ("tc.cp_async",),
        _INFER + _MMA + "call_cp_async",
        4,
        reads=True,
        stores_into=0,
        min_arch=(8, 0),
        cuda="`cp.async.ca/cg.shared.global` (inline PTX)",
        cpu="the copy, done at once",
    )
    + _rows(
        ("tc.cp_async_commit",),
        _INFER + _MMA + "call_commit_group",
        0,
        fence=True,
        min_arch=(8, 0),
        cuda="`cp.async.commit_group`",
        cpu="nothing (copies are done at once)",
    )
    + _rows(
        ("tc.cp_async_wait",),
        _INFER + _MMA + "call_wait_group",
        0,
        fence=True,
        min_arch=(8, 0),
        cuda="`cp.async.wait_group n` / `cp.async.wait_all`",
        cpu="nothing (copies are done at once)",
    )
    + _rows(
        ("tc.pack2",),
        _INFER + _MMA + "pack",
        2,
        cuda="two 16-bit values' bits in one i32, the first in the low half",
        cpu="two 16-bit values' bits in one i32, the first in the low half",
    )
    + _rows(
        ("tc.unpack2",),
        _INFER + _MMA + "unpack",
        1,
        cuda="the two 16-bit halves of an i32",
        cpu="the two 16-bit halves of an i32",
    )
    + _rows(
        ("tc.tf32",),
        _INFER + _MMA + "call_to_tf32",
        1,
        min_arch=(8, 0),
        cuda="`cvt.rna.tf32.f32`",
        cpu="integer rounding of the float32 bits (to nearest, ties away)",
    )
)


# How kernels spell the intrinsics that need an architecture (for the refusal).
SPELLED = {
    "tc.cp_async_commit": "cuda.cp_async_commit_group",
    "tc.cp_async_wait": "cuda.cp_async_wait_group",
    "tc.tf32": "cuda.to_tf32",
}


def spelled(name: str) -> str:
    """``tc.mma`` as a kernel calls it: ``cuda.mma``."""
    return SPELLED.get(name, "cuda." + name.split(".", 1)[-1])


def arch_refusal(fn, arch: tuple[int, int]):
    """The first op of ``fn`` or its callees that ``arch`` lacks, with the architecture
    it needs: ``(op, min_arch)``, or None."""
    for f in fn.reachable():
        for op in f.all_ops():
            r = TABLE.get(getattr(op, "name", None)) if type(op).__name__ == "Intrinsic" else None
            if r is not None and r.min_arch is not None and tuple(arch[:2]) < r.min_arch:
                return op, r.min_arch
    return None


ROWS: tuple[IntrinsicRow, ...] = (
    _THREAD
    + _BARRIERS
    + _ARRAYS
    + _ATOMICS
    + _WARP
    + _BITS
    + _BUILTINS
    + _MATH
    + _COMPLEX
    + _MEMORY_HINTS
    + _FOREIGN
    + _RECORDS
    + _DATETIMES
    + _EXTENSIONS
    + _POINTERS
    + _ENUMS
    + _LIBDEVICE
    + _BF16
    + _FP8
    + _WIDE
    + _SLEEP
    + _TENSOR_CORES
)
TABLE: dict[str, IntrinsicRow] = {row.name: row for row in ROWS}
assert len(TABLE) == len(ROWS), "an intrinsic name has two rows"


def row(name: str) -> IntrinsicRow | None:
    """The row of intrinsic ``name``, or None if the IR has no such intrinsic."""
    return TABLE.get(name)


def refusal(name: str, target: str) -> str:
    """What the user sees when ``target`` has no lowering for intrinsic ``name``."""
    r = TABLE.get(name)
    message = r.refusal(target) if r is not None else None
    return message or f"'{name}' is not supported on target '{target}'"


def names_where(predicate) -> frozenset[str]:
    """The names whose row satisfies ``predicate`` (a function of an ``IntrinsicRow``)."""
    return frozenset(r.name for r in TABLE.values() if predicate(r))


def _effects(r: IntrinsicRow) -> str:
    facts = []
    if r.reads:
        facts.append("reads memory")
    if r.writes:
        facts.append(f"writes argument {r.stores_into}")
    facts += [
        word
        for flag, word in ((r.fence, "fence"), (r.io, "output"), (r.warp, "warp collective"))
        if flag
    ]
    if r.barrier:
        facts.append(f"{r.barrier} barrier")
    if r.cpu_wait:
        facts.append(f"CPU: suspends ({r.cpu_wait})")
    if r.cooperative:
        facts.append("cooperative launch")
    return ", ".join(facts) or "none"


def markdown_table() -> str:
    """The effects section of ``docs/typed-ir.md``: rows with the same facts share a line."""
    groups: dict[tuple, list[str]] = {}
    for r in ROWS:
        key = (r.typing.removeprefix(_INFER), _effects(r), r.cuda, r.cpu)
        groups.setdefault(key, []).append(r.name)
    lines = [
        "| names | typing rule (`cujit.infer.`) | effects | CUDA | CPU |",
        "|---|---|---|---|---|",
    ]
    for (typing, effects, cuda, cpu), names in groups.items():
        families = {n.split(".")[0] for n in names}
        if len(names) > 20 and len(families) == 1:  # a whole table's worth: cuda.libdevice
            listed = f"`{families.pop()}.*` ({len(names)} names)"
        else:
            listed = ", ".join(f"`{n}`" for n in names)
        lines.append(f"| {listed} | `{typing}` | {effects} | {cuda} | {cpu} |")
    return "\n".join(lines) + "\n"
