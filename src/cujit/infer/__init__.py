"""Stage 4, type inference: untyped SSA IR -> typed IR (see docs/typed-ir.md).

``infer_types(fn, arg_types)`` is the entry.  Modules: ``driver`` (sweeps and
edge casts), ``numeric`` (promotion and unification rules), ``arith`` and
``access`` (per-op rules), ``calls`` (the callee table) with ``builtin_calls``
and ``cuda_calls``, ``context`` (the state rules share).
"""

from cujit.infer.driver import infer_types

__all__ = ["infer_types"]
