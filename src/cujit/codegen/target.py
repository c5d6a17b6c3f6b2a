"""What code generation needs to know about a machine: the ``Target`` tables' shape.

Stage 6 defines the interface and the targets (``cujit.targets.cuda``,
``cujit.targets.cpu``) fill it in, so ``codegen`` imports no target and each
target imports ``codegen``.  ``cujit.targets`` re-exports both names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from cujit import forksafe
from cujit.frozen import frozen


class LazyTable(Mapping):
    """A lowering table whose rarely used families load at the first name its other
    rows lack: ``rows``, then ``more()``'s rows (none of them a name ``rows`` has), made
    once.  Iterating, counting or testing membership loads them first."""

    def __init__(self, rows: dict, more: Callable[[], dict]):
        self._rows, self._more = rows, more
        self._lock = forksafe.renewed(threading.Lock())

    def _load(self) -> bool:
        """Add ``more()``'s rows unless they are in; whether a lookup should retry."""
        if self._more is None:
            return False
        with self._lock:  # a thread that waited here finds them added
            if self._more is not None:
                extra = self._more()
                clash = extra.keys() & self._rows.keys()
                if clash:  # a table's own mistake: tests/test_intrinsic_table.py
                    raise RuntimeError(f"lazily loaded lowerings shadow rows: {sorted(clash)}")
                self._rows.update(extra)
                self._more = None
        return True

    def __getitem__(self, name):
        try:
            return self._rows[name]
        except KeyError:
            if self._load():
                return self._rows[name]
            raise

    def __iter__(self):
        self._load()
        return iter(self._rows)

    def __len__(self) -> int:
        self._load()
        return len(self._rows)

    def __contains__(self, name) -> bool:
        return name in self._rows or (self._load() and name in self._rows)


@frozen
class MathFn:
    """An external scalar math function: its symbol and how many float arguments it takes.

    The argument and result types are the float type the entry is keyed by.  With
    ``asm`` set, ``symbol`` is inline assembly (``$0`` the result, ``$1``... the
    arguments) emitted in place of a call: an instruction no library function wraps.
    """

    symbol: str
    nargs: int = 1
    asm: bool = False


@frozen
class Target:
    """Everything target-specific that lowering consults.

    ``intrinsics`` maps an ``Intrinsic.name`` to ``lower(ctx, op, args) -> value | None``
    (``ctx`` is a :class:`cujit.codegen.context.FunctionLowering`).  ``math`` maps
    ``(name, "float32" | "float64")`` to a :class:`MathFn`; besides the ``math.*``
    intrinsics, codegen itself uses ``floor``, ``fmod`` and ``copysign`` for Python's
    float ``//`` and ``%``.  ``kernel_metadata`` adds whatever marks the function a
    kernel (``!nvvm.annotations`` for NVVM); None for a host target.  ``fastmath``:
    the tables are the fast-math variant (``jit(fastmath=True)``): ``math`` then holds
    the approximate functions, and ``("divide", float type)`` where a float ``/`` is a
    call; a float ``/`` by zero raises no ZeroDivisionError in debug mode.

    Three hooks let a target that has no hardware thread state (the CPU target)
    pass it in and shape the function; the CUDA target leaves them empty:

    - ``hidden_params``: ``(name, LLVM type)`` pairs put before the ABI parameters
      (the intrinsic lowerings read them from ``ctx.llfn.args``);
    - ``prologue(ctx)``: emits into the entry block after the parameters are unpacked;
    - ``lower_return(ctx)``: emits what ends the kernel (default ``ret void``);
    - ``callee_hidden_params``: the leading hidden parameters that device functions
      receive too (forwarded by every call; see ``cujit.codegen.functions``);
    - ``callee_prologue(ctx)``: emits into a device function's entry block (the CPU
      target's stack guard in a function that calls itself).

    ``callee_module(module)``: where the target's toolchain links modules, each device
    function gets a module of its own, which this stamps with what every module needs
    (NVVM's ``!nvvmir.version``); None: device functions live in the kernel's module.
    """

    name: str
    triple: str
    data_layout: str
    intrinsics: Mapping[str, Callable]
    math: Mapping[tuple[str, str], MathFn]
    generic_addrspace: int = 0
    global_addrspace: int = 0  # where module globals live (the debug-mode error record)
    shared_addrspace: int | None = None
    kernel_metadata: Callable | None = None
    hidden_params: tuple = ()
    prologue: Callable | None = None
    lower_return: Callable | None = None
    callee_hidden_params: tuple = ()
    callee_prologue: Callable | None = None
    callee_module: Callable | None = None
    fastmath: bool = False
    # Native float16 operations (``codegen/half.py``): name -> lowering; empty: plain LLVM.
    half: Mapping[str, Callable] | None = None

    def __hash__(self) -> int:  # the tables are dicts; a target is identified by its name
        return hash((self.name, self.triple, self.fastmath))
