"""``cujit.cuda.random``: numba.cuda.random's name for cujit's xoroshiro128+ generators,
so ``from numba.cuda.random import create_xoroshiro128p_states`` ports by changing
``numba`` to ``cujit``.  The implementation is ``cujit.random``."""

from cujit.random import *  # noqa: F401,F403
from cujit.random import __all__  # noqa: F401
