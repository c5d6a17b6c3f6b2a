"""Choosing a kernel's 32-bit index variant at launch (docs/index32.md).

A specialisation whose compile found int64 index arithmetic that small arrays would let
it compare and divide in int32 (``codegen.narrow.worth_narrowing``: the compile
result's ``"index32"`` output, kept by the disk cache) gets a ``Plan``, unless it is
coarsened (``cujit.coarsen`` comes first), turned off, or a debug build.  A launch
takes the variant, compiled with ``Options(index32=True)`` (so the disk cache keeps it
apart; compiled as ``cujit.variants`` says), when these facts hold, and the kernel as
written otherwise:

- the grid spans at most ``abi.INDEX32_LIMIT`` threads along each axis
  (``grid[k] * block[k]``), read once per launch configuration;
- every array argument holds 1..``INDEX32_LIMIT`` elements (so each extent lies there
  too), read at every launch: one class test and one comparison per array;
- the arrays of each shape group (``abi.shape_groups``: the contiguous arrays of one
  number of dimensions, two or more, and one layout) have equal shapes: one tuple
  comparison per member after the first.

Each launch configuration of a planned specialisation keeps one generated
``select(args)`` in front of its launchers, as a coarsened one does
(``cujit.coarsen_select``): it tests the arrays' sizes in one expression and calls the
variant's launcher or the plain one.
"""

from __future__ import annotations

import math

from cujit import config
from cujit.abi import INDEX32_LIMIT, shape_groups
from cujit.types import Array
from cujit.variants import variant


def plan_for(kernel, spec) -> Plan | None:
    """``spec``'s plan, or None where no launch takes the variant."""
    options = kernel._base_options
    if not kernel._flags.get("index32", True) or not config.INDEX32.get() or options.debug:
        return None
    if not spec.result.outputs.get("index32"):
        return None
    return Plan(kernel, spec)


def grid_fits(grid, block) -> bool:
    """At most ``INDEX32_LIMIT`` threads along each axis of the launch."""
    from cujit.runtime.launch import normalize_dims

    dims = zip(normalize_dims(grid, "grid"), normalize_dims(block, "block"), strict=True)
    return all(g * b <= INDEX32_LIMIT for g, b in dims)


def shape_of(a) -> tuple | None:
    """Array argument ``a``'s shape, None where it cannot be told (an object of another
    library: its interface's shape, where it exports one)."""
    import numpy as np

    from cujit.runtime.memory import DeviceArray

    if isinstance(a, (DeviceArray, np.ndarray)):
        return tuple(a.shape)
    for name in ("__cuda_array_interface__", "__array_interface__"):
        face = getattr(a, name, None)
        if isinstance(face, dict) and isinstance(face.get("shape"), tuple):
            return face["shape"]
    return None


class Plan:
    """What a launch of one specialisation with a 32-bit index variant needs."""

    def __init__(self, kernel, spec):
        self.kernel, self.plain = kernel, spec
        self.wide = None  # the variant's Specialization, compiled on first use
        self.pending = None  # its compile in a thread (cujit.variants)
        self.asked = False  # a launch could have taken it (cujit.variants)
        self.arrays = tuple(p for p, t in enumerate(spec.arg_types) if isinstance(t, Array))
        self.groups = shape_groups(spec.arg_types)

    def facts(self, args, grid, block) -> bool:
        """Whether this launch may take the variant (the module docstring's facts)."""
        try:
            if not grid_fits(grid, block):
                return False
            shapes = {p: shape_of(args[p]) for p in self.arrays}
        except Exception:  # noqa: BLE001 -- an argument the launch will refuse itself
            return False
        if any(shape is None for shape in shapes.values()):
            return False
        sizes = [math.prod(shape) for shape in shapes.values()]
        if not all(isinstance(n, int) and 0 < n <= INDEX32_LIMIT for n in sizes):
            return False
        return all(shapes[p] == shapes[group[0]] for group in self.groups for p in group)

    def select(self, spec, args, grid, block):
        """(specialisation, grid) for this launch: the variant's where the facts hold."""
        if not self.facts(args, grid, block):
            return spec, grid
        return variant(self, index32=True) or spec, grid

    def launch_grid(self, spec, grid):
        """The grid a launcher made for ``spec`` binds: the launch's own."""
        return grid

    def selector(self, launch_config, spec, launcher):
        """The launcher to put in front of ``launch_config``'s, or None when its selector
        exists already (it now holds ``launcher`` for ``spec``)."""
        if launcher is None:
            return None
        for existing in launch_config.launchers:
            if getattr(existing, "index_plan", None) is self:
                existing.slots[spec is self.wide] = launcher
                return None
        if not grid_fits(launch_config.grid, launch_config.block):
            return launcher  # this configuration never takes the variant
        slots = [None, None]
        slots[spec is self.wide] = launcher
        select = _generate(self, slots)
        select.index_plan, select.slots = self, slots
        return select


def _generate(plan: Plan, slots: list):
    from cujit.runtime.memory import DeviceArray

    nargs = len(plan.plain.arg_types)
    names = ", ".join(f"a{i}" for i in range(nargs)) + ("," if nargs else "")
    facts = [f"a{p}.__class__ is DA and 0 < a{p}.size <= L" for p in plan.arrays]
    facts += [f"a{p}.shape == a{g[0]}.shape" for g in plan.groups for p in g[1:]]
    tests = " and ".join(facts)
    src = (
        "def select(args):\n"
        "    try:\n"
        f"        {names} = args\n"
        f"        small = {tests or 'True'}\n"
        "    except Exception:\n"
        "        return False\n"
        "    launcher = slots[1] if small else slots[0]\n"
        "    return launcher is not None and launcher(args)\n"
    )
    env = {"DA": DeviceArray, "L": INDEX32_LIMIT, "slots": slots}
    name = plan.kernel.__name__
    exec(compile(src, f"<cujit index32 select {name}>", "exec"), env)  # noqa: S102
    return env["select"]
