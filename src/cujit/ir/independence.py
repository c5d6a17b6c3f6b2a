"""Is a kernel independent per index?  The analysis behind coarsening (docs/coarsening.md).

``analyse(fn)`` reads a kernel's typed IR and answers with a ``Verdict``: either the
kernel is a function of one index ``i`` per thread that a thread may run for several
consecutive indices in turn, or the first rule it breaks and where.  The rules:

1. thread identity: the only use of it is ``i = cuda.grid(1)`` (or ``threadIdx.x +
   blockIdx.x * blockDim.x``); ``i`` is used only as an array index, in ``i + c``
   (``c`` a constant integer), and compared against a bound;
2. memory: every array access is ``a[i + c]`` of a 1-D C-contiguous array argument of a
   real scalar type; stores are at ``i`` itself; an array stored into is read at ``i``
   only;
3. no barriers, shared memory, warp functions, atomics, fences, printing or other
   cross-thread effects; a device function called takes scalars only and obeys the
   same rules without any memory or thread identity;
4. control flow: the only branches are bounds checks ``i < n`` (``i >= n``: exit,
   ``n > i``, ``i <= n - 1``...) whose failing side only returns, ``n`` computed at
   launch from the arguments (a scalar, ``a.size``, ``a.shape[0]``, constants, ``+ - *``),
   before the per-index work, which is straight-line code.

A wrong "yes" is a miscompile, so anything the rules do not name is refused.
"""

from __future__ import annotations

from dataclasses import field

from cujit import ir
from cujit.diagnostics import Loc
from cujit.frozen import frozen
from cujit.ir import intrinsics
from cujit.types import Array, Scalar

_PURE_PREFIXES = ("math.", "cmath.", "libdevice.", "complex.")
_PURE_NAMES = frozenset(
    {"abs", "min", "max", "np.minimum", "np.maximum"}
    | {"cuda.popc", "cuda.clz", "cuda.ffs", "cuda.brev", "cuda.fma", "cuda.cbrt"}
)
_INDEX_REGS = ("threadIdx.x", "blockIdx.x", "blockDim.x")
_UPPER = {"<": False, "<=": True}  # i OP n continues; True: the bound is n + 1
_SWAP = {">": "<", ">=": "<="}  # n OP i is i SWAP[OP] n
_EXIT = {">=": "<", ">": "<="}  # i OP n exits: continues on i EXIT[OP] n


class Refused(Exception):
    """One rule the kernel breaks, at ``loc``."""

    def __init__(self, rule: str, loc: Loc | None):
        super().__init__(rule)
        self.rule, self.loc = rule, loc


@frozen
class Bound:
    """An upper bound ``i < expr (+ 1 if inclusive)``; ``expr`` is a launch expression
    tree: ('const', v) | ('arg', k) | ('size', k) | ('shape', k, d) | (op, l, r)."""

    expr: tuple
    inclusive: bool


@frozen
class Verdict:
    """The analysis' answer.  ``ok``: independent per index; else ``rule`` failed at ``loc``."""

    ok: bool
    rule: str = ""
    loc: Loc | None = None
    width: int = 0  # k: indices per thread so that the narrowest access is 16 bytes
    bounds: tuple[Bound, ...] = ()
    arrays: tuple[int, ...] = ()  # positions of the array arguments accessed
    reach: tuple[tuple[int, int, int], ...] = ()  # (position, least c, greatest c) of each
    index: frozenset = field(default_factory=frozenset)  # ids of the values that are i
    offsets: tuple[tuple[int, int], ...] = ()  # (value id, c) for the values i + c
    aux: frozenset = field(default_factory=frozenset)  # ids of the reads building i
    guards: frozenset = field(default_factory=frozenset)  # ids of the bounds checks
    steps: tuple[tuple[int, int], ...] = ()  # (checking block, block it continues to)
    body: int = -1  # the block of the per-index work

    def describe(self) -> str:
        """The line ``explain`` and the report print (docs/coarsening.md)."""
        if self.ok:
            k = self.width
            return (
                f"coarsened: {k} consecutive indices per thread, 16-byte loads and stores, "
                f"on 1/{k} of the grid, where the launch is 1-D, covers the bound and every "
                "array is 16-byte aligned (else the kernel as written)"
            )
        where = f" (at {self.loc})" if self.loc else ""
        return f"not coarsened: {self.rule}{where}"


def analyse(fn: ir.Function) -> Verdict:
    """The verdict on kernel ``fn`` (typed IR after stage 5)."""
    try:
        return _Analysis(fn).run()
    except Refused as exc:
        return Verdict(False, exc.rule, exc.loc)


def is_pure_intrinsic(name: str) -> bool:
    """An intrinsic that computes a value from its operands only (no memory, no thread)."""
    row = intrinsics.row(name)
    if row is None or row.reads or row.side_effect or row.warp or row.suspends:
        return False
    return name in _PURE_NAMES or name.startswith(_PURE_PREFIXES)


class _Analysis:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.defs: dict[int, ir.Op] = {}
        self.uses: dict[int, list[ir.Op]] = {}
        for op in fn.all_ops():
            if op.result is not None:
                self.defs[op.result.id] = op
            for v in ir.operands(op):
                self.uses.setdefault(v.id, []).append(op)
        self.args = {v.id: k for k, v in enumerate(fn.args)}
        self.index: set[int] = set()  # values equal to i
        self.offset: dict[int, int] = {}  # value id -> c for i + c (i itself: 0)
        self.aux: set[int] = set()  # the special-register reads and casts building i

    def run(self) -> Verdict:
        from cujit.ir.independence_rules import check_shape

        self._find_index()
        bounds, body = check_shape(self)
        arrays, width, reach = self._check_body(body)
        return Verdict(
            True,
            width=width,
            bounds=tuple(bounds),
            arrays=arrays,
            reach=reach,
            index=frozenset(self.index),
            offsets=tuple(sorted(self.offset.items())),
            aux=frozenset(self.aux),
            guards=frozenset(self.guards),
            steps=tuple(self.steps),
            body=self.body_block,
        )

    # -- rule 1: the index ------------------------------------------------
    def _find_index(self) -> None:
        for op in self.fn.all_ops():
            if not isinstance(op, ir.Intrinsic):
                continue
            if op.name == "cuda.grid":
                if op.attr("ndim") != 1:
                    raise Refused(
                        f"a {op.attr('ndim')}-D grid index (cuda.grid({op.attr('ndim')}))", op.loc
                    )
                self.index.add(op.result.id)
            elif op.name == "cuda.gridsize":
                raise Refused("the grid's size is read (cuda.gridsize)", op.loc)
            elif op.name == "cuda.sreg":
                self._sreg_index(op)
        if not self.index:
            raise Refused("no thread index i = cuda.grid(1)", self.fn.loc)
        self._find_offsets()

    def _sreg_index(self, op: ir.Intrinsic) -> None:
        # threadIdx.x + blockIdx.x * blockDim.x, each widened to int64 (in any order).
        if op.attr("reg") not in _INDEX_REGS:
            raise Refused(f"thread identity {op.attr('reg')} is read", op.loc)
        wide = self._single_use(op, ir.Cast)
        self.aux |= {op.result.id, wide.result.id}
        if op.attr("reg") != "threadIdx.x":
            return
        add = self._single_use(wide, ir.BinOp)
        mul = self.defs.get(_other(add, wide.result).id)
        if add.op != "+" or not (isinstance(mul, ir.BinOp) and mul.op == "*"):
            raise Refused("threadIdx.x used other than in the 1-D global index", op.loc)
        regs = {self._reg_of(mul.lhs), self._reg_of(mul.rhs)}
        if regs != {"blockIdx.x", "blockDim.x"} or len(self.uses[mul.result.id]) != 1:
            raise Refused("threadIdx.x used other than in the 1-D global index", op.loc)
        self.aux.add(mul.result.id)
        self.index.add(add.result.id)

    def _single_use(self, op: ir.Op, kind: type) -> ir.Op:
        uses = self.uses.get(op.result.id, [])
        ok = len(uses) == 1 and isinstance(uses[0], kind)
        if ok and kind is ir.Cast:
            ok = uses[0].result.type == Scalar("int64", "i", 64)
        if not ok:
            raise Refused("thread identity used other than in the 1-D global index", op.loc)
        return uses[0]

    def _reg_of(self, v: ir.Value) -> str:
        op = self.defs.get(v.id)
        if isinstance(op, ir.Cast):
            op = self.defs.get(op.operand.id)
        return op.attr("reg") if isinstance(op, ir.Intrinsic) and op.name == "cuda.sreg" else ""

    def _find_offsets(self) -> None:
        self.offset = {v: 0 for v in self.index}
        work = list(self.index)
        while work:
            vid = work.pop()
            for use in self.uses.get(vid, []):
                c = self._const_offset(use, vid)
                if c is not None and use.result.id not in self.offset:
                    self.offset[use.result.id] = self.offset[vid] + c
                    work.append(use.result.id)

    def _const_offset(self, op: ir.Op, vid: int) -> int | None:
        if not (isinstance(op, ir.BinOp) and op.op in ("+", "-")):
            return None
        if op.result.type != Scalar("int64", "i", 64):
            return None
        other = op.rhs if op.lhs.id == vid else op.lhs
        if other.id == vid or (op.op == "-" and op.rhs.id == vid):
            return None  # i + i, c - i
        const = self.defs.get(other.id)
        if not isinstance(const, ir.Const) or type(const.value) is not int:
            return None
        return const.value if op.op == "+" else -const.value

    def const_value(self, v: ir.Value):
        op = self.defs.get(v.id)
        return op.value if isinstance(op, ir.Const) else None

    # -- rules 2 and 3: the per-index work ----------------------------------
    def _check_body(self, body: list[ir.Op]) -> tuple[tuple[int, ...], int, tuple]:
        from cujit.ir.independence_rules import check_body

        return check_body(self, body)


def _other(op: ir.BinOp, v: ir.Value) -> ir.Value:
    return op.rhs if op.lhs.id == v.id else op.lhs


def is_c_vector(t) -> bool:
    """A 1-D C-contiguous array of 4- or 8-byte numbers (complex64: two float32)."""
    return (
        isinstance(t, Array)
        and t.ndim == 1
        and t.layout == "C"
        and isinstance(t.dtype, Scalar)
        and (t.dtype.kind in "iuf" or t.dtype.kind == "c" and t.dtype.itemsize == 8)
        and t.dtype.itemsize in (4, 8)
    )
