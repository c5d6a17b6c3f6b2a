"""The generated ``select(args)`` launcher of a coarsenable kernel's launch configuration.

It unpacks the arguments, tests the launch facts of ``cujit.coarsen`` in one
expression (each array a ``DeviceArray`` whose ``device_ptr`` is a multiple of 16, the
bound within the configuration's ``gx * bx`` threads) and calls the wide launcher when
they all hold, the plain one otherwise.  A slot not filled yet answers False: the
general path launches and then fills it.  The grid's shape (1-D) is known when the
selector is made; a configuration that is not 1-D gets no selector.
"""

from __future__ import annotations

from cujit.runtime import pycode
from cujit.runtime.memory import DeviceArray


def make_selector(plan, launch_config, spec, launcher):
    """See ``Plan.selector``."""
    if launcher is None:
        return None
    for existing in launch_config.launchers:
        if getattr(existing, "coarse_plan", None) is plan:
            existing.slots[spec is plan.wide] = launcher
            return None
    from cujit.runtime.launch import normalize_dims

    (gx, gy, gz) = normalize_dims(launch_config.grid, "grid")
    (bx, by, bz) = normalize_dims(launch_config.block, "block")
    if not gy == gz == by == bz == 1:
        return launcher  # never coarsened: the plain launcher alone
    slots = [None, None]
    slots[spec is plan.wide] = launcher
    select = _generate(plan, gx * bx, slots)
    select.coarse_plan, select.slots = plan, slots
    return select


def _generate(plan, threads: int, slots: list):
    names = plan._args
    arrays = [f"a{p}" for p in plan.arrays]
    classes = " and ".join(f"{a}.__class__ is DA" for a in arrays)
    pointers = " | ".join(f"{a}.device_ptr" for a in arrays)
    facts = f"{classes} and not (({pointers}) & 15) and {plan.bound_code} <= T"
    if plan.inside:
        facts += "".join(
            f" and within(a{p}.size, {plan.bound_code}, {lo}, {hi})" for p, lo, hi in plan.inside
        )
    src = (
        "def select(args):\n"
        "    try:\n"
        f"        {names} = args\n"
        f"        wide = {facts}\n"
        "    except Exception:\n"
        "        return False\n"
        "    launcher = slots[1] if wide else slots[0]\n"
        "    return launcher is not None and launcher(args)\n"
    )
    env = {"DA": DeviceArray, "T": threads, "slots": slots, "min": min, "int": int}
    env["within"] = within
    exec(pycode.code(src, "<cujit coarsen select>"), env)  # noqa: S102
    return env["select"]


def within(size: int, n: int, lo: int, hi: int) -> bool:
    """Indices ``i + c`` for ``0 <= i < n``, ``lo <= c <= hi``, all valid (a negative one
    counts from the end, as Python's)."""
    return n <= 0 or (size >= n + hi and size >= -lo)
