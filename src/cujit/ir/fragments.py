"""Tensor-core operand layouts: which lane holds which matrix element, per PTX.

One warp computes ``D = A @ B + C`` with ``mma.sync``; each lane holds a few 32-bit
registers of each operand (its *fragment*).  The functions here give, for a lane and
the index of an element in its fragment, the element's (row, column) in the matrix,
as the PTX ISA's "Matrix Fragments for mma.m16n8k*" sections define them:

- ``group = lane >> 2`` and ``tig = lane % 4`` (PTX's groupID, threadID_in_group);
- elements are numbered as PTX numbers them (``a0, a1, ...``); element ``j`` is in
  register ``j // per_reg`` at bit ``(j % per_reg) * bits``: the lower-numbered
  element in the lower bits, as ``mov.b32 r, {lo, hi}`` packs them;
- A is ``m x k`` (row-major in PTX's words), B is ``k x n`` (column-major), C and D
  are ``m x n``.

``ldmatrix``/``stmatrix`` (PTX ISA, "Warp-level matrix load/store") move 8x8 matrices
of 16-bit elements between shared memory and these registers: for matrix ``i``, lane
``8 * i + r`` gives the address of row ``r``, and lane ``l`` holds in its register
``i`` the elements ``(l // 4, 2 * (l % 4) + h)``, ``h = 0, 1`` (``.trans``: the
transposed matrix's).

The CPU target builds its ``mma``/``ldmatrix`` tables from these functions, the tests
check kernels against them, and ``docs/tensor-cores.md`` draws them.
"""

from __future__ import annotations

from cujit.frozen import frozen


@frozen
class MmaForm:
    """One ``mma.sync`` form: shape, input kind and accumulator kind."""

    shape: str  # "m16n8k16"
    kind: str  # the A and B element kind: "bf16", "f16", "tf32", "s8", "u8"
    acc: str  # the C and D element kind: "f32", "f16", "s32"
    a_regs: int
    b_regs: int
    c_regs: int
    min_arch: tuple[int, int]

    @property
    def m(self) -> int:
        return int(self.shape[1 : self.shape.index("n")])

    @property
    def n(self) -> int:
        return int(self.shape[self.shape.index("n") + 1 : self.shape.index("k")])

    @property
    def k(self) -> int:
        return int(self.shape[self.shape.index("k") + 1 :])

    @property
    def in_bits(self) -> int:
        """Bits of one A or B element."""
        return {"bf16": 16, "f16": 16, "tf32": 32, "s8": 8, "u8": 8}[self.kind]

    @property
    def c_bits(self) -> int:
        return 16 if self.acc == "f16" else 32

    @property
    def ptx(self) -> str:
        """The instruction, as PTX spells it."""
        acc = {"f32": "f32", "f16": "f16", "s32": "s32"}[self.acc]
        if self.kind in ("s8", "u8"):
            return f"mma.sync.aligned.{self.shape}.row.col.s32.{self.kind}.{self.kind}.s32"
        if self.kind == "f16":
            return f"mma.sync.aligned.{self.shape}.row.col.{acc}.f16.f16.{acc}"
        return f"mma.sync.aligned.{self.shape}.row.col.f32.{self.kind}.{self.kind}.f32"


def _form(shape, kind, acc, a, b, c, arch=(8, 0)) -> MmaForm:
    return MmaForm(shape, kind, acc, a, b, c, arch)


# The forms cujit offers (PTX ISA, "Matrix shape" and "Data types" of mma): m16n8k16 and
# m16n8k8 for bf16/f16 with float32 accumulators (f16 also with f16 ones), m16n8k8 tf32,
# m16n8k32 int8.  All need sm_80 (m16n8k8 f16 runs on sm_75, but one floor is simpler
# to state, and no other form here does).
FORMS: dict[tuple[str, str, str], MmaForm] = {
    (f.shape, f.kind, f.acc): f
    for f in (
        _form("m16n8k16", "bf16", "f32", 4, 2, 4),
        _form("m16n8k16", "f16", "f32", 4, 2, 4),
        _form("m16n8k16", "f16", "f16", 4, 2, 2),
        _form("m16n8k8", "bf16", "f32", 2, 1, 4),
        _form("m16n8k8", "f16", "f32", 2, 1, 4),
        _form("m16n8k8", "f16", "f16", 2, 1, 2),
        _form("m16n8k8", "tf32", "f32", 4, 2, 4),
        _form("m16n8k32", "s8", "s32", 4, 2, 4),
        _form("m16n8k32", "u8", "s32", 4, 2, 4),
    )
}


def valid_forms() -> str:
    """The forms, one per line, for error messages."""
    return "\n".join(
        f"  {f.shape} {f.kind} -> {f.acc}: A {f.a_regs} x uint32, B {f.b_regs} x uint32, "
        f"C {f.c_regs} x {_C_ITEM[f.acc]}"
        for f in FORMS.values()
    )


_C_ITEM = {"f32": "float32", "f16": "uint32 (f16x2)", "s32": "int32"}


def per_reg(bits: int) -> int:
    return 32 // bits


def a_coord(f: MmaForm, lane: int, j: int) -> tuple[int, int]:
    """(row, col) in A of lane ``lane``'s element ``j``."""
    group, tig = lane >> 2, lane % 4
    if f.kind == "tf32":  # m16n8k8: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
        return group + 8 * (j % 2), tig + 4 * (j // 2)
    if f.in_bits == 8:  # m16n8k32: four bytes per register
        row = group + 8 * ((j // 4) % 2)
        return row, tig * 4 + (j % 4) + 16 * (j // 8)
    # 16-bit: two per register; m16n8k16 has a second column half in a4..a7
    row = group + 8 * ((j // 2) % 2)
    return row, tig * 2 + (j % 2) + 8 * (j // 4)


def b_coord(f: MmaForm, lane: int, j: int) -> tuple[int, int]:
    """(row, col) = (k, n) in B of lane ``lane``'s element ``j``."""
    group, tig = lane >> 2, lane % 4
    if f.kind == "tf32":  # b0 (t, g), b1 (t+4, g)
        return tig + 4 * j, group
    if f.in_bits == 8:
        return tig * 4 + (j % 4) + 16 * (j // 4), group
    return tig * 2 + (j % 2) + 8 * (j // 2), group


def c_coord(f: MmaForm, lane: int, j: int) -> tuple[int, int]:
    """(row, col) in C and D of lane ``lane``'s element ``j`` (j < 4)."""
    group, tig = lane >> 2, lane % 4
    return group + 8 * (j // 2), tig * 2 + (j % 2)


def a_elements(f: MmaForm) -> int:
    return f.a_regs * per_reg(f.in_bits)


def b_elements(f: MmaForm) -> int:
    return f.b_regs * per_reg(f.in_bits)


def ldmatrix_coord(lane: int, h: int) -> tuple[int, int]:
    """(row, col) in its 8x8 matrix of half ``h`` of a lane's ldmatrix register."""
    return lane // 4, 2 * (lane % 4) + h


__all__ = [
    "FORMS",
    "MmaForm",
    "a_coord",
    "a_elements",
    "b_coord",
    "b_elements",
    "c_coord",
    "ldmatrix_coord",
    "per_reg",
    "valid_forms",
]
