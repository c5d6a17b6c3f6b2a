"""``cujit.cuda.typing``: numba.cuda.typing's modules that libraries import
(``templates``, ``typeof``), over cujit's extension API."""

from cujit.types import Signature as signature  # noqa: N813 -- numba's name

__all__ = ["signature"]
