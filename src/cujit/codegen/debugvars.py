"""Full debug info (``jit(debug=True)``): the Python variables of one function.

Lowered the way clang and numba lower code at -O0, so that a debugger finds every
variable at every line:

- each SSA value a variable holds (``Function.var_names``) has a stack slot named
  after the variable (LLVM numbers the versions: ``c``, ``c.1``, ``c.2``), made and
  zeroed in the entry block; its definition stores into the slot and calls
  ``llvm.dbg.value`` with the value;
- a parameter's slot (``x.1``: ``x`` is the LLVM argument) is described by
  ``llvm.dbg.declare`` (``arg: N``), and the body reads the parameter from it;
- a block parameter holding a scalar variable (a value merged from several
  branches, a loop-carried value) goes through memory instead of a phi: each edge
  stores into its slot, at the edge's line, and the block loads it;
- an array variable is the struct numba describes (``debugtypes``), one slot per
  variable, declared with ``llvm.dbg.declare``;
- one ``DILocalVariable`` per Python name, whose type is a union when the variable
  holds values of several types;
- the rest of numba's -O0 frame: a slot per temporary (each unnamed scalar an op
  computes: constants, intermediate results, ``$v12`` after the typed IR's ``%v12``),
  stored where it is computed and described by no variable, and per ``return`` the
  slots of the value returned (``$return_value``; a ``return None``, a kernel's
  included, also has the constant None's ``$const.none``, None being a null ``i8*``
  as numba holds it).  All slots are made and zeroed in the entry block, which
  carries no line and ends in a branch to the function's code; a value stored on an
  edge into a merged variable on the line that defined it shares that definition's
  location.
"""

from __future__ import annotations

from llvmlite import ir as ll

from cujit.codegen.debugtypes import array_llvm_type, bits_of
from cujit.codegen.lltypes import I64, value_type
from cujit.types import Array, PyObject, Record, Scalar, Type

_I8_PTR = ll.PointerType(ll.IntType(8))
# Parameters described by their value (llvm.dbg.value), not their slot: libNVVM of
# CUDA 13.0 dies with SIGSEGV on an llvm.dbg.declare of an argument's (``arg: N``)
# i1 or half slot, and accepts a dbg.value of the same i1 or half.
_VALUE_ONLY = (ll.IntType(1), ll.HalfType())


def _described(t: Type) -> bool:
    return (isinstance(t, (Scalar, Array, Record)) and value_type(t) is not None) or _handle(t)


def _handle(t: Type) -> bool:
    """A compile-time object that CUDA C holds as a 64-bit handle: the grid group of
    ``cuda.cg.this_grid()`` (cujit needs no run-time value for it: described, with
    no location)."""
    return isinstance(t, PyObject) and type(t.value).__name__ == "GridGroup"


class Variables:
    """The slots and ``DILocalVariable``s of one function's Python variables."""

    def __init__(self, ctx, info, types: dict[int, Type]):
        self.info = info
        self.names: dict[int, list[str]] = {}
        by_name: dict[str, list[Type]] = {}
        fn = ctx.fn
        named = {*fn.var_names, *((p.id, n) for p, n in zip(fn.args, fn.arg_names, strict=True))}
        for vid, name in sorted(named):
            t = types.get(vid)
            if t is None or not _described(t):
                continue
            self.names.setdefault(vid, []).append(name)
            seen = by_name.setdefault(name, [])
            if t not in seen:
                seen.append(t)
        self.types = by_name
        self.params = {p.id: k for k, p in enumerate(fn.args, start=1)}
        self.arg_names = list(fn.arg_names)
        # Block parameters (not the function's): merged values.
        self.merged = {p.id for b in fn.blocks[1:] for p in b.params}
        self.vars: dict[str, ll.DIValue] = {}
        self.slots: dict[int, ll.Value] = {}  # scalar value id -> its slot
        self.array_slots: dict[str, ll.Value] = {}  # array variable -> its slot
        md = ll.MetaDataType()
        self.dbg_declare = ctx.declare("llvm.dbg.declare", ll.VoidType(), [md, md, md])
        self.dbg_value = ctx.declare("llvm.dbg.value", ll.VoidType(), [md, md, md])
        self.expr = ctx.module.add_debug_info("DIExpression", {})
        self.temps: dict[int, ll.Value] = {}  # unnamed scalar op result -> its slot
        self.def_locs: dict[int, object] = {}  # value id -> the Loc that defined it
        computed = {op.result.id for b in fn.blocks for op in b.ops if op.result is not None}
        for vid in sorted(set(self.names) | computed):
            t = types[vid]
            if vid in self.names and isinstance(t, (Scalar, Record)):
                self.slots[vid] = self._zeroed_slot(ctx, value_type(t), self.names[vid][0])
            elif vid not in self.names and isinstance(t, Scalar) and value_type(t) is not None:
                self.temps[vid] = self._zeroed_slot(ctx, value_type(t), f"$v{vid}")

    def _zeroed_slot(self, ctx, lltype: ll.Type, name: str) -> ll.Value:
        def emit():
            slot = ctx.builder.alloca(lltype, name=name)
            slot.align = 8
            ctx.builder.store(ll.Constant(lltype, None), slot)
            return slot

        return in_entry(ctx, emit, located=False)

    def variable(self, ctx, name: str) -> ll.DIValue:
        """The ``DILocalVariable`` of Python variable ``name``."""
        var = self.vars.get(name)
        if var is None:
            ts = self.types[name]
            argno = self.arg_names.index(name) + 1 if name in self.arg_names else 0
            di_type = self._type(ts)
            fields = {
                "name": name,
                "arg": argno,
                "scope": ctx.debug_scope,
                "line": self.info.def_line_of(ctx.fn.loc),
                "file": self.info.file(ctx.fn.loc.file),
                "type": di_type,
            }
            var = self.vars[name] = ctx.module.add_debug_info("DILocalVariable", fields)
        return var

    def _type(self, ts: list[Type]) -> ll.DIValue:
        table = self.info.types
        if len(ts) == 1 and isinstance(ts[0], Record):  # the value is its address
            return table.pointer(table.fresh(ts[0]))
        return table.fresh(ts)

    # -- definitions -------------------------------------------------------

    def define(self, ctx, value, through_memory: bool = False) -> None:
        """``value`` was just lowered: store it where its variables live."""
        llv = ctx.values.get(value.id)
        self.def_locs[value.id] = ctx.loc
        temp = self.temps.get(value.id)
        if temp is not None:
            if llv is not None and llv.type == temp.type.pointee:
                ctx.builder.store(llv, temp)
            return
        if value.id in self.names and _handle(value.type):
            for name in self.names[value.id]:
                self._value(ctx, ll.Constant(I64, ll.Undefined), name)
            return
        if llv is None or value.id not in self.names:
            return
        if isinstance(value.type, Array):
            for name in self.names[value.id]:
                self._store_array(ctx, name, value.type, llv)
            return
        if not through_memory:
            ctx.builder.store(llv, self.slots[value.id])
        for name in self.names[value.id]:
            self._value(ctx, llv, name)

    def _value(self, ctx, llv: ll.Value, name: str) -> None:
        ctx.builder.call(self.dbg_value, [llv, self.variable(ctx, name), self.expr])

    def _store_array(self, ctx, name: str, t: Array, llv: ll.Value) -> None:
        described = array_struct(ctx, t, llv)
        slot = self.array_slots.get(name)
        if slot is None:
            slot = self.array_slots[name] = self._zeroed_slot(ctx, described.type, name)
            var = self.variable(ctx, name)
            in_entry(ctx, lambda: ctx.builder.call(self.dbg_declare, [slot, var, self.expr]))
        if slot.type.pointee == described.type:  # one variable, arrays of one layout
            ctx.builder.store(described, slot)

    def parameter(self, ctx, p) -> None:
        """A parameter: its slot declared as argument N; the body reads the slot."""
        llv = ctx.values.get(p.id)
        if llv is None or p.id not in self.names:
            return
        if isinstance(p.type, Array):
            self.define(ctx, p)
            return
        slot = self.slots[p.id]
        b = ctx.builder
        own = self.arg_names[self.params[p.id] - 1]
        if slot.type.pointee in _VALUE_ONLY:
            self._value(ctx, llv, own)
        else:
            b.call(self.dbg_declare, [slot, self.variable(ctx, own), self.expr])
        b.store(llv, slot)
        ctx.values[p.id] = loaded = b.load(slot)
        for name in self.names[p.id]:
            if name != own:  # ``z = x``: a local holding the parameter's value
                self._value(ctx, loaded, name)

    def returned(self, ctx, value) -> None:
        """A ``return`` of ``value`` (None: of None) is lowered next: its slots."""
        if value is None:
            const = self._zeroed_slot(ctx, _I8_PTR, "$const.none")
            ctx.builder.store(ll.Constant(_I8_PTR, None), const)
            slot = self._zeroed_slot(ctx, _I8_PTR, "$return_value")
            ctx.builder.store(ctx.builder.load(const), slot)
            return
        llv = ctx.values.get(value.id)
        if isinstance(value.type, Scalar) and llv is not None:
            slot = self._zeroed_slot(ctx, llv.type, "$return_value")
            ctx.builder.store(llv, slot)

    # -- block parameters through memory -------------------------------------

    def store_merged(self, ctx, llv: ll.Value, p, slot: ll.Value) -> None:
        """An edge passes ``llv`` to block parameter ``p`` through ``slot``."""
        ctx.builder.store(llv, slot)
        for name in self.names.get(p.id, ()):
            self._value(ctx, llv, name)

    def merged_slot(self, p) -> ll.Value | None:
        """The slot through which block parameter ``p`` passes (None: a phi)."""
        if p.id not in self.merged or not isinstance(p.type, Scalar):
            return None
        return self.slots.get(p.id)


def array_struct(ctx, t: Array, llv: ll.Value) -> ll.Value:
    """numba's array struct for cujit's array value ``llv`` (what ``debugtypes``
    describes): no meminfo nor parent, the element count, itemsize, data, shape
    and byte strides."""
    b = ctx.builder
    data = b.extract_value(llv, 0)
    shape = b.extract_value(llv, 1)
    strides = b.extract_value(llv, 2)
    itemsize = bits_of(t.dtype) // 8 if not isinstance(t.dtype, Record) else t.dtype.itemsize
    if t.layout in ("C", "F"):
        # Contiguous arrays' strides follow from the shape (they may not be passed).
        order = range(t.ndim - 1, -1, -1) if t.layout == "C" else range(t.ndim)
        step = ll.Constant(I64, itemsize)
        for k in order:
            strides = b.insert_value(strides, step, k)
            step = b.mul(step, b.extract_value(shape, k))
    nitems = ll.Constant(I64, 1)
    for k in range(t.ndim):
        nitems = b.mul(nitems, b.extract_value(shape, k))
    lt = array_llvm_type(t)
    if data.type != lt.elements[4]:
        data = b.bitcast(data, lt.elements[4])
    out = ll.Constant(lt, None)
    for k, v in enumerate((nitems, ll.Constant(I64, itemsize), data, shape, strides), start=2):
        out = b.insert_value(out, v, k)
    return out


def in_entry(ctx, emit, located: bool = True):
    """Run ``emit`` with the builder in the entry block, before its branch if it has
    one; ``located=False``: the instructions carry no line (function set-up)."""
    b = ctx.builder
    saved, saved_loc = b.block, b.debug_metadata
    term = ctx.entry.terminator
    if term is not None:
        b.position_before(term)
    else:
        b.position_at_end(ctx.entry)
    if not located:
        b.debug_metadata = None
    try:
        return emit()
    finally:
        b.debug_metadata = saved_loc
        b.position_at_end(saved)
