"""The state of lowering one function: the LLVM module and function, the
builder, and the map from IR values to LLVM values.

Lowering functions everywhere in codegen (and in the targets' intrinsic
tables) take a :class:`FunctionLowering` as ``ctx`` and emit at
``ctx.builder``'s position.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit import ir
from cujit.codegen.folding import FoldingBuilder
from cujit.codegen.lltypes import has_value, scalar_type
from cujit.codegen.target import Target
from cujit.diagnostics import Loc, UnsupportedError
from cujit.types import Scalar


class FunctionLowering:
    """Lowering state for one IR function inside one LLVM module."""

    def __init__(
        self,
        fn: ir.Function,
        target: Target,
        module: ll.Module,
        llfn: ll.Function,
        functions=None,
        kernel: bool = True,
    ):
        self.fn = fn
        self.target = target
        self.module = module
        self.llfn = llfn
        # The module's device functions (``functions.DeviceFunctions``), and whether
        # ``fn`` is the kernel (else a device function: it returns to its caller).
        self.functions = functions
        self.kernel = kernel
        # The first LLVM block holds parameter unpacking and every alloca, so
        # allocas stay in the entry block wherever the op that needs one sits
        # (LLVM's SROA/mem2reg only promote entry-block allocas).
        self.entry = llfn.append_basic_block("entry")
        self.builder = FoldingBuilder(self.entry)
        self.values: dict[int, ll.Value | None] = {}
        self.loc: Loc | None = fn.loc
        self._counter = 0
        # Whatever a target's hooks keep per function (the CPU target's coroutine handle).
        self.target_state: dict = {}
        self._non_overflowing_adds: frozenset[int] | None = None
        # (id(op), axis) of element accesses whose index is never negative there, so
        # no wrap reads that axis's extent (``params.read_params``; the kernel only).
        self.unwrapped: frozenset[tuple[int, int]] = frozenset()
        # id(op) of a range loop's test -> its step's sign, where known (the kernel only).
        self.step_signs: dict[int, int] = {}
        # The 32-bit index variant's int32 forms (``narrow.Narrowing``; the kernel only).
        self.narrow = None
        # Debug info (codegen/debuginfo.py): the function's DISubprogram and, with full
        # debug info, its variables' slots.
        self.debug_scope = None
        self.debug_vars = None

    @property
    def non_overflowing_adds(self) -> frozenset[int]:
        """Result ids of the function's integer additions that cannot overflow (found
        on first use: most functions have none to ask about)."""
        if self._non_overflowing_adds is None:
            from cujit.ir.analysis import non_overflowing_adds

            self._non_overflowing_adds = non_overflowing_adds(self.fn)
        return self._non_overflowing_adds

    # -- values -------------------------------------------------------------

    def get(self, v: ir.Value) -> ll.Value:
        """The LLVM value of IR value ``v`` (which must have a machine form)."""
        try:
            llv = self.values[v.id]
        except KeyError:
            raise AssertionError(f"%{v.id} used before it was lowered") from None
        if llv is None:
            raise AssertionError(f"%{v.id}: {v.type} has no run-time value")
        return llv

    def set(self, v: ir.Value, llv: ll.Value | None) -> None:
        if llv is not None and not has_value(v.type):
            llv = None
        # Name the instruction after the IR value (``%v12``) so LLVM IR reads
        # against the typed IR; values already named (params, reused values) keep theirs.
        if isinstance(llv, ll.Instruction) and (not llv.name or llv.name.startswith(".")):
            llv.name = f"v{v.id}"
        self.values[v.id] = llv

    def unique_name(self, stem: str) -> str:
        """A module-unique symbol name (for shared-memory globals and helpers)."""
        self._counter += 1
        return f"{stem}{self._counter}"

    # -- declarations -------------------------------------------------------

    def declare(
        self, name: str, ret: ll.Type, args: list[ll.Type], attrs: tuple[str, ...] = ("nounwind",)
    ) -> ll.Function:
        """The function ``name`` of the module, declared on first use."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        f = ll.Function(self.module, ll.FunctionType(ret, args), name)
        for a in attrs:
            f.attributes.add(a)
        return f

    def call_math(self, name: str, t: Scalar, args: list[ll.Value]) -> ll.Value:
        """Call the target's ``name`` math function for float type ``t``."""
        entry = self.target.math.get((name, t.name))
        if entry is None and t.name == "bfloat16":  # in float32, rounded back (bf16.py)
            from cujit.codegen import bf16
            from cujit.types import float32

            wide = [bf16.to_f32(self.builder, a) for a in args]
            return bf16.from_f32(self.builder, self.call_math(name, float32, wide))
        if entry is None and t.name == "float16":
            # Half-precision math computes in float32 and rounds back (as CUDA's h*
            # functions do for most of them): the tables list float32/float64 only.
            from cujit.types import float32

            b = self.builder
            wide = [b.fpext(a, scalar_type(float32)) for a in args]
            return b.fptrunc(self.call_math(name, float32, wide), scalar_type(t))
        if entry is None:
            raise UnsupportedError(
                f"math.{name} is not available for {t} on target '{self.target.name}'", self.loc
            )
        if len(args) != entry.nargs:
            raise AssertionError(f"math.{name} takes {entry.nargs} arguments, got {len(args)}")
        fty = scalar_type(t)
        if entry.asm:
            # PTX register constraints: f32 "f", f64 "d" (NVVM IR spec, "Inline PTX").
            reg = "f" if t.bits == 32 else "d"
            constraints = ",".join([f"={reg}"] + [reg] * entry.nargs)
            asm = ll.InlineAsm(ll.FunctionType(fty, [fty] * entry.nargs), entry.symbol, constraints)
            return self.builder.call(asm, args)
        f = self.declare(entry.symbol, fty, [fty] * entry.nargs)
        return self.builder.call(f, args)

    # -- memory -------------------------------------------------------------

    def alloca(self, ty: ll.Type, align: int | None, name: str = "") -> ll.Value:
        """An alloca placed in the entry block, before its final branch (``align``
        None: its type's ABI alignment); it carries no line (frame set-up, as in numba's
        code and a C compiler's)."""
        b = self.builder
        saved, located = b.block, b.debug_metadata
        term = self.entry.terminator
        if term is not None:
            b.position_before(term)
        else:
            b.position_at_end(self.entry)
        b.debug_metadata = None
        slot = b.alloca(ty, name=name)
        if align is not None:
            slot.align = align
        b.debug_metadata = located
        b.position_at_end(saved)
        return slot
