"""numba's ufunc builder protocol for ``target='cuda'``: ``numba.vectorize`` and
``numba.guvectorize`` import ``numba.cuda.vectorizers`` on demand, which under the
numba drop-in is this module; the builders here make cujit's ufuncs."""

from __future__ import annotations

from cujit.ufunc.gufunc import GUFunc, check_gufunc_options, guvectorize
from cujit.ufunc.vectorize import UFunc, check_vectorize_options


class CUDAVectorize:
    """``Vectorize(func, identity=, cache=, targetoptions=)``; ``add(sig)``; ``build_ufunc()``."""

    def __init__(self, func, identity=None, cache=False, targetoptions=None):
        if cache:
            raise TypeError("caching is not supported")
        check_vectorize_options(dict(targetoptions or {}))
        self.py_func, self.identity, self.signatures = func, identity, []

    def add(self, sig=None) -> None:
        self.signatures.append(sig)

    def disable_compile(self) -> None:
        """numba calls this after eager signatures; cujit's ufunc then has no lazy loops."""

    def build_ufunc(self) -> UFunc:
        return UFunc(self.py_func, self.signatures, None, self.identity)


class CUDAGUFuncVectorize:
    """``GUVectorize(func, layout, identity=, cache=, targetoptions=, writable_args=)``."""

    def __init__(
        self, func, signature, identity=None, cache=False, targetoptions=None, writable_args=()
    ):
        if cache:
            raise TypeError("caching is not supported")
        check_gufunc_options(dict(targetoptions or {}))
        self.py_func, self.layout, self.identity, self.signatures = func, signature, identity, []

    def add(self, sig=None) -> None:
        self.signatures.append(sig)

    def disable_compile(self) -> None:
        """As ``CUDAVectorize.disable_compile``."""

    def build_ufunc(self) -> GUFunc:
        return guvectorize(self.signatures, self.layout, identity=self.identity)(self.py_func)
