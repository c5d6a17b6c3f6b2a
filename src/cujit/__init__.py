"""cujit: a just-in-time compiler from Python functions to CUDA kernels.

``from cujit import cuda`` gives numba.cuda's API; the type objects
(``float32``, ``int64``...) are importable from here as from numba.
``install_numba_drop_in()`` (or ``CUJIT_NUMBA=1``, or ``python -m cujit run script.py``)
makes unchanged ``import numba.cuda`` programs use cujit.
"""

from cujit.types.core import (  # noqa: F401
    b1,
    bool_,
    boolean,
    byte,
    double,
    f4,
    f8,
    float32,
    float64,
    float_,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intp,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)

__version__ = "0.1.0"


def install_numba_drop_in() -> None:
    """Make ``import numba.cuda`` and ``from numba import cuda`` give cujit in this
    process, whether numba is installed or not (``cujit.numba_drop_in``)."""
    from cujit.numba_drop_in import install_numba_drop_in as install

    install()


def _startup() -> None:
    from cujit import config

    if config.NUMBA.get():  # CUJIT_NUMBA=1
        install_numba_drop_in()


_startup()


def __getattr__(name):
    # ``cuda`` is imported on first use so that ``import cujit`` stays light.
    if name == "cuda":
        import importlib

        return importlib.import_module("cujit.cuda")
    raise AttributeError(f"module 'cujit' has no attribute {name!r}")
