"""numba-cuda's ``_internal.cuda_bf16``: bfloat16's functions under CUDA's own names
(``__hadd``, ``__float2bfloat16_rz``, ``htrunc``...) and the type as ``nv_bfloat16``.

They are the objects of ``cujit.cuda.bf16`` (``cujit.bf16.CUDA_NAMES``).
"""

from cujit.bf16 import CUDA_NAMES as _CUDA_NAMES
from cujit.types import bfloat16

nv_bfloat16 = bfloat16

globals().update(_CUDA_NAMES)

__all__ = ["nv_bfloat16", *_CUDA_NAMES]
