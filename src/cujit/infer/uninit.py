"""Local variables read where no assignment reaches them, with numba's semantics.

Python raises ``UnboundLocalError`` at such a read; numba compiles it: the variable has
the type its assignments give it (elsewhere in the function), and the read gives an
unspecified value of that type.  A variable merged with an assigned value takes its
partner's type (the driver's ``undef_types``); one read with no assignment on any path
to it takes the type unified over the variable's assignments (``var_types``, gathered
after each sweep from the function's ``var_names``), and cujit warns at that read with
numba's words, "Detected uninitialized variable c".  A variable assigned nowhere that
is typed keeps no type: reading it is still an error (``Typer.check_defined``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from cujit.diagnostics import Loc, NumbaWarning
from cujit.infer.numeric import unify
from cujit.types import NoneType, Type

if TYPE_CHECKING:
    from cujit.infer.context import Typer


class UninitializedVariableWarning(NumbaWarning):
    """A read of a local variable that no assignment reaches: its value is unspecified."""


def gather_var_types(t: Typer, var_types: dict[str, Type]) -> bool:
    """Unify into ``var_types`` the types this sweep gave each variable's assigned
    values; whether the type of a variable this sweep read unassigned changed (only
    then does another sweep have something to learn)."""
    changed = set()
    for vid, name in t.fn.var_names:
        v = t.env.get(vid)
        if v is None or v.type is None or vid in t.undef_names:
            continue
        if isinstance(v.type, NoneType):
            continue
        old = var_types.get(name)
        new = v.type if old is None else unify(old, v.type)
        if new is not None and new != old:
            var_types[name] = new
            changed.add(name)
    return bool(changed & t.unassigned_reads)


def unassigned_type(t: Typer, name: str, loc: Loc) -> Type | None:
    """The type of a read of ``name`` that no assignment reaches (None while its
    assignments are untyped); the final sweep warns at it."""
    t.unassigned_reads.add(name)
    ty = t.var_types.get(name)
    if ty is not None and t.final:
        # Reported at the user's line, not at a frame of cujit's.
        warnings.warn_explicit(
            UninitializedVariableWarning(
                f"Detected uninitialized variable {name}: local variable '{name}' may be "
                "used before it is assigned; here it holds an unspecified value"
            ),
            UninitializedVariableWarning,
            loc.file,
            loc.line,
        )
    return ty
