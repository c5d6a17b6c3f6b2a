"""``cujit.cuda.cudadecl``: numba.cuda.cudadecl's ``registry``, through which a library
files attribute templates (``registry.register_attr``) in cujit's extension tables."""

from __future__ import annotations

import types as pytypes

from cujit.extending import register_attr

registry = pytypes.SimpleNamespace(register_attr=register_attr)

__all__ = ["registry"]
