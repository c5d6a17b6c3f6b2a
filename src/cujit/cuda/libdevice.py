"""numba.cuda's ``cuda.libdevice``: every libdevice function, callable inside kernels.

``from cujit.cuda import libdevice`` then ``libdevice.sincos(x)`` in a kernel.  The
functions, their types and their symbols are the table ``cujit.libdevice.FUNCTIONS``;
the names here are the placeholders kernels call (on the host they raise).
"""

from __future__ import annotations

from cujit.libdevice import FUNCTIONS, PLACEHOLDERS

globals().update(PLACEHOLDERS)
__all__ = list(FUNCTIONS)
