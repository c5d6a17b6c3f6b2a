"""GPU ufuncs and reductions with numba.cuda's API: ``vectorize``, ``guvectorize``,
``reduce`` / ``Reduce``, built from kernels that ``cujit.jit`` compiles."""

from cujit.ufunc.gufunc import GUFunc, guvectorize  # noqa: F401
from cujit.ufunc.reduce import Reduce, reduce  # noqa: F401
from cujit.ufunc.vectorize import UFunc, vectorize  # noqa: F401
