"""``cujit.cuda.np``: numba.cuda.np's ``numpy_support`` module for cujit's types."""

from cujit.cuda.np import numpy_support  # noqa: F401
