"""GPU ufuncs and reductions with numba.cuda's API: ``vectorize``, ``guvectorize``,
``reduce`` / ``Reduce``, built from kernels that ``cujit.jit`` compiles."""

from cujit.ufunc.vectorize import UFunc, vectorize  # noqa: F401
