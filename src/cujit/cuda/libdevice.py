"""numba.cuda's ``cuda.libdevice``: every libdevice function, callable inside kernels.

``from cujit.cuda import libdevice`` then ``libdevice.sincos(x)`` in a kernel.  The
functions, their types and their symbols are the table ``cujit.libdevice.FUNCTIONS``;
the names here are the placeholders kernels call (on the host they raise).
"""

from __future__ import annotations

from cujit import device_api
from cujit.libdevice import FUNCTIONS


def _make(name: str) -> device_api.DeviceOnly:
    fn = FUNCTIONS[name]
    params = ", ".join(str(a) for a in fn.args)
    stub = device_api.DeviceOnly(f"libdevice.{name}",
                                 f"libdevice's {fn.symbol}({params}) -> {fn.returns}")
    device_api.ALL[stub.key] = stub  # pickles by name like the other placeholders
    return stub


globals().update({name: _make(name) for name in FUNCTIONS})
__all__ = list(FUNCTIONS)
