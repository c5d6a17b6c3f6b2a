"""``cujit.cuda.typing.typeof``: ``typeof(value)``, the cujit type of a Python value
(a library's class through ``typeof_impl``), as numba.cuda.typing.typeof gives it."""

from cujit.extending import typeof_impl
from cujit.types import typeof

__all__ = ["typeof", "typeof_impl"]
