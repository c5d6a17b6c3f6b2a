"""numba.cuda's ``bf16`` module: the bfloat16 type and the functions kernels call on it.

``bfloat16`` (also ``nv_bfloat16``) is cujit's type: ``bfloat16(x)`` in a kernel
converts, ``bfloat16[:]`` is an array type.  The functions are placeholders typed by
``cujit.infer.bf16_calls``; ``math.sqrt`` and the other ``math`` functions numba-cuda
overloads for bfloat16 return bfloat16 too.
"""

from cujit.bf16 import FUNCTIONS as _FUNCTIONS
from cujit.types import bfloat16

nv_bfloat16 = bfloat16

globals().update(_FUNCTIONS)

__all__ = ["bfloat16", *_FUNCTIONS]
