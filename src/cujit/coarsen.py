"""Choosing a kernel's coarsened variant at launch (docs/coarsening.md).

A specialisation whose typed IR ``ir.independence`` proves independent per index gets
a ``Plan``.  Each launch reads a few facts into a bitmask: bit 0, a 1-D grid and block
within CUDA's limits (``MAX_GRID_X``, ``MAX_BLOCK_X``: past them the kernel runs as
written, so the target's launch check refuses the grid the user gave, not the variant's
smaller one);
bit 1, the grid covers the kernel's bound ``n`` as the launch asked (``gx * bx >= n``:
the variant's threads then run exactly the indices the kernel would); bit 2, every
access ``a[i + c]`` with ``i < n`` is in bounds (only where bounds are checked, as on the
CPU target: a failed check would name a thread the kernel does not have); then one bit
per array accessed, its address a multiple of 16 bytes.  Contiguity is in
the argument types.  With every bit set the launch takes the variant (compiled with
``Options(coarsen=k)``, so the disk cache keeps it apart) on a grid of ``ceil(gx / k)``
blocks; with any bit clear, the kernel as written.  The variant compiles when a launch
could first take it, on the GPU in a thread beside that launch (``cujit.variants``).

The launchers the dispatcher makes per configuration (``runtime.launch``) stay as they
are; a configuration of a coarsenable kernel gets one more in front of them, a
``select(args)`` generated for its arguments that tests the facts in one expression and
hands over to the plain or the wide launcher.
"""

from __future__ import annotations

from cujit import config
from cujit.ir.independence import Verdict, analyse
from cujit.runtime import pycode
from cujit.variants import variant

_ALIGN_MASK = 15  # 16-byte alignment
# CUDA's largest 1-D grid and block (every compute capability cujit targets; the CPU
# target's launch keeps the same limits).
MAX_GRID_X, MAX_BLOCK_X = 2**31 - 1, 1024


def verdict_of(result, pyfunc, arg_types, options) -> Verdict:
    """The independence verdict of a compiled kernel: the one its disk-cache entry kept
    (or its compile computed for the entry), else the analysis of its typed IR (compiled
    again up to stage 5 where an entry kept none)."""
    kept = result.outputs.get("independence")
    if kept is not None:
        return kept
    fn = result.outputs.get("passes")
    if fn is None:
        from cujit.pipeline import compile_kernel

        fn = compile_kernel(pyfunc, arg_types, options, stop_after="passes").outputs["passes"]
    return analyse(fn)


def plan_for(kernel, spec) -> Plan | None:
    """``spec``'s plan, or None where the kernel is not coarsened (turned off, a debug
    build, or a rule of ``ir.independence`` fails)."""
    options = kernel._base_options
    if not kernel._flags.get("coarsen", True) or not config.COARSEN.get() or options.debug:
        return None
    verdict = verdict_of(spec.result, kernel.py_func, spec.arg_types, kernel._options())
    if not verdict.ok:
        return None
    checked = options.boundscheck is True or (
        options.boundscheck is None and kernel.target == "cpu"
    )
    return Plan(kernel, spec, verdict, checked)


def _bound_code(expr: tuple) -> str:
    kind = expr[0]
    if kind == "const":
        return repr(expr[1])
    if kind == "arg":
        return f"int(a{expr[1]})"
    if kind == "size":
        return f"a{expr[1]}.size"
    if kind == "shape":
        return f"a{expr[1]}.shape[{expr[2]}]"
    return f"({_bound_code(expr[1])} {kind} {_bound_code(expr[2])})"


def address(a) -> int | None:
    """The address of array ``a``'s first element (device or host), None if unknown."""
    ptr = getattr(a, "device_ptr", None)
    if ptr is not None:
        return int(ptr)
    for name in ("__cuda_array_interface__", "__array_interface__"):
        face = getattr(a, name, None)
        if face is not None:
            return int(face["data"][0])
    return None


class Plan:
    """What a launch of one coarsenable specialisation needs (see the module docstring)."""

    def __init__(self, kernel, spec, verdict: Verdict, checked: bool):
        self.kernel, self.plain, self.verdict, self.k = kernel, spec, verdict, verdict.width
        self.wide = None  # the variant's Specialization, compiled on first use
        self.pending = None  # its compile in a thread (cujit.variants)
        self.asked = False  # a launch could have taken it (cujit.variants)
        self.arrays = verdict.arrays
        bounds = [_bound_code(b.expr) + (" + 1" if b.inclusive else "") for b in verdict.bounds]
        self.bound_code = bounds[0] if len(bounds) == 1 else f"min({', '.join(bounds)})"
        # Where bounds are checked, the variant runs only where no check can fail: its
        # threads are not the kernel's, so an error would name the wrong one.
        self.inside = verdict.reach if checked else ()
        nargs = len(spec.arg_types)
        self._args = ", ".join(f"a{i}" for i in range(nargs)) + ("," if nargs else "")
        # compiled once per text: most kernels' bounds read alike (``a3.size``)
        env: dict = {}
        src = f"def bound({self._args}):\n    return {self.bound_code}\n"
        exec(pycode.code(src, "<cujit coarsen bound>"), env)  # noqa: S102
        self.bound = env["bound"]
        self.full = (1 << (3 + len(self.arrays))) - 1

    def facts(self, args, grid, block) -> int:
        """The launch's bitmask (the module docstring names the bits)."""
        from cujit.runtime.launch import normalize_dims

        (gx, gy, gz), (bx, by, bz) = normalize_dims(grid, "grid"), normalize_dims(block, "block")
        one_d = gy == gz == by == bz == 1 and gx <= MAX_GRID_X and bx <= MAX_BLOCK_X
        mask = 1 if one_d else 0
        try:
            n = self.bound(*args)
            sizes = [(args[p].size, lo, hi) for p, lo, hi in self.inside]
        except Exception:  # noqa: BLE001 -- an argument the launch will refuse itself
            return 0
        # An array of another library may say its size otherwise (torch's .size() is a
        # method): the facts then cannot be read, and the kernel runs as written.
        if not all(isinstance(v, int) for v in (n, *(size for size, _, _ in sizes))):
            return 0
        mask |= 2 if gx * bx >= n else 0
        from cujit.coarsen_select import within

        mask |= 4 if all(within(size, n, lo, hi) for size, lo, hi in sizes) else 0
        for bit, p in enumerate(self.arrays):
            ptr = address(args[p])
            if ptr is not None and not ptr & _ALIGN_MASK:
                mask |= 8 << bit
        return mask

    def select(self, spec, args, grid, block):
        """(specialisation, grid) for this launch: the variant's where every fact holds."""
        if self.facts(args, grid, block) != self.full:
            return spec, grid
        wide = variant(self, coarsen=self.k)
        return (spec, grid) if wide is None else (wide, self.wide_grid(grid))

    def wide_grid(self, grid) -> tuple[int, int, int]:
        from cujit.runtime.launch import normalize_dims

        gx = normalize_dims(grid, "grid")[0]
        return (-(-gx // self.k), 1, 1)

    def launch_grid(self, spec, grid):
        """The grid a launcher made for ``spec`` (plain or wide) binds."""
        return self.wide_grid(grid) if spec is self.wide else grid

    def selector(self, launch_config, spec, launcher):
        """The launcher to put in front of ``launch_config``'s, or None when its selector
        exists already (it now holds ``launcher`` for ``spec``)."""
        from cujit.coarsen_select import make_selector

        return make_selector(self, launch_config, spec, launcher)


def describe(fn) -> str:
    """What ``explain`` and the report say of kernel ``fn`` (typed IR after stage 5)."""
    return analyse(fn).describe()
