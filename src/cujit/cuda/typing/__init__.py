"""``cujit.cuda.typing``: numba.cuda.typing's names that libraries import
(``signature``; the modules ``templates`` and ``typeof``), over cujit's types."""

from __future__ import annotations

from cujit.types import Signature, Type


def signature(return_type: Type, *args: Type) -> Signature:
    """numba's ``signature(return_type, *arg_types)``."""
    return Signature(return_type, tuple(args))


__all__ = ["signature"]
