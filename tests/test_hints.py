"""The hints of cujit.hints: each newcomer mistake gives its exact hint and guide page."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from cujit import cuda, hints
from cujit.diagnostics import KernelReturnError, LaunchError, UnsupportedError

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"
G = "\nguide: docs/guide/"


def slug(heading: str) -> str:
    """A Markdown heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_hint_names_a_page_and_section_of_the_guide():
    for key, entry in hints.HINTS.items():
        page, _, section = entry.page.partition("#")
        text = (GUIDE / page).read_text()
        anchors = {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.MULTILINE)}
        assert section in anchors, f"{key}: {entry.page} has no such section"


@cuda.jit(target="cpu")
def fill(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


@cuda.jit("void(float32[:], float32[:])", target="cpu")
def fill_f32(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


X = np.arange(8, dtype=np.float32)

LAUNCHES = [
    (
        "list argument",
        lambda: fill[1, 8]([1.0, 2.0], X),
        (
            "kernel 'fill': argument 0 ('x'): cannot pass a value of Python type list to a kernel\n"
            "hint: kernels take arrays, not lists: pass np.asarray(...) for 'x' (or "
            "cuda.to_device(np.asarray(...)) to keep it on the GPU between launches)"
            f"{G}first-kernel.md#host-arrays-and-device-arrays"
        ),
    ),
    (
        "eager signature, dtype",
        lambda: fill_f32[1, 8](np.arange(8.0), X),
        (
            "No matching definition for argument type(s) (array(float64, 1d, C), "
            "array(float32, 1d, C)) of kernel 'fill_f32', which was compiled for "
            "(array(float32, 1d, A), array(float32, 1d, A))\n"
            "hint: argument 0 ('x') is float64[::1] where the signature has float32[:]; the signature "
            "'void(float64[::1], float32[::1])' would take these arguments, or convert the argument "
            "(x.astype(np.float32)), or drop the signature so that cujit compiles for the types "
            f"each launch passes{G}first-kernel.md#signatures"
        ),
    ),
    (
        "no launch configuration",
        lambda: fill(X, X),
        (
            "kernel 'fill' needs a launch configuration (the launch configuration was not "
            "specified): fill[blocks, threads_per_block](...)\n"
            "hint: give blocks and threads per block in brackets, for instance "
            f"fill[(x.size + 255) // 256, 256](x, out){G}first-kernel.md#launching"
        ),
    ),
    (
        "float grid",
        lambda: fill[X.size / 256, 256](X, X),
        (
            "griddim must be a sequence of integers, got [0.03125]\nhint: compute it with integer division, for "
            f"instance (n + 255) // 256: '/' always gives a float{G}first-kernel.md#launching"
        ),
    ),
    (
        "float block",
        lambda: fill[1, (8.0, 1)](X, X),
        (
            "blockdim must be a sequence of integers, got [8.0, 1]\nhint: compute it with integer division, for "
            f"instance (n + 255) // 256: '/' always gives a float{G}first-kernel.md#launching"
        ),
    ),
    (
        "argument count",
        lambda: fill[1, 8](X),
        (
            "kernel 'fill' takes 2 arguments, 1 given\nhint: pass one value per parameter: "
            f"fill[blocks, threads](x, out){G}first-kernel.md#launching"
        ),
    ),
]


@pytest.mark.parametrize("launch,message", [c[1:] for c in LAUNCHES], ids=[c[0] for c in LAUNCHES])
def test_launch_mistakes(launch, message):
    out = np.full(8, -1.0, np.float32)
    with pytest.raises(LaunchError) as info:
        launch()
    assert str(info.value) == message
    assert (out == -1.0).all()


def test_the_hinted_fixes_work():
    """What the hints say to do runs: np.asarray, astype, the bracket form."""
    out = np.full(8, -1.0, np.float32)
    fill[1, 8](np.asarray([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], dtype=np.float32), out)
    assert (out == np.arange(1, 9)).all()
    x = np.arange(8.0) + 0.5
    fill_f32[1, 8](x.astype(np.float32), out)
    assert (out == x).all()
    fill[(X.size + 255) // 256, 256](X + 1, out)
    assert (out == X + 1).all()


def helper(v):
    return v + 1


def calls_helper(x):
    x[0] = helper(x[0])


def allocates(x):
    y = np.zeros(3)
    x[0] = y[0]


def reduces(x):
    x[0] = np.median(x)  # np.sum(x) compiles: the calling thread reduces the array


COUNTER = 0


def stores_global(x):
    global COUNTER
    COUNTER = 1


def returns(x):
    return x[0]


COMPILES = [
    (
        calls_helper,
        UnsupportedError,
        "call to unsupported function 'helper'",
        (
            f"decorate 'helper' with @cuda.jit(device=True) to call it from a kernel"
            f"{G}first-kernel.md#device-functions"
        ),
    ),
    (
        allocates,
        UnsupportedError,
        "call to unsupported function 'numpy.zeros'",
        (
            "a kernel cannot allocate arrays: use cuda.local.array(shape, dtype) for one per thread "
            "or cuda.shared.array(shape, dtype) for one per block (shape and dtype constants), or "
            f"allocate it on the host and pass it in{G}memory.md#local-arrays"
        ),
    ),
    (
        reduces,
        UnsupportedError,
        "call to unsupported function 'numpy.median'",
        (
            "in a kernel NumPy's math functions take numbers (np.sin(x[i])) or fill an 'out' array "
            "(np.sin(x, out)); for np.median loop over the elements, or combine threads' results with "
            "cuda.atomic.add; docs/numba-api.md lists what kernels can call"
            f"{G}first-kernel.md#what-a-kernel-can-call"
        ),
    ),
    (
        stores_global,
        UnsupportedError,
        "assigning to a 'global' variable is not supported in kernels",
        (
            "a kernel cannot change Python variables: write the result into an array argument "
            "(out[0] = ...) and read that array on the host after the launch"
            f"{G}first-kernel.md#results-go-into-arrays"
        ),
    ),
    (
        returns,
        KernelReturnError,
        "a kernel cannot return a value: a CUDA kernel must have void return type",
        f"write the result into an array argument instead{G}first-kernel.md#results-go-into-arrays",
    ),
]


@pytest.mark.parametrize("fn,cls,message,hint", COMPILES, ids=[c[0].__name__ for c in COMPILES])
def test_compile_mistakes(fn, cls, message, hint):
    with pytest.raises(cls) as info:
        cuda.jit(fn, target="cpu")[1, 1](np.zeros(4, np.float32))
    err = info.value
    assert type(err) is cls and err.message == message and err.hint == hint
    assert str(err).endswith("\nhint: " + hint)  # the guide's line is the error's last


def test_eager_hint_for_a_dimension_mismatch():
    with pytest.raises(LaunchError) as info:
        fill_f32[1, 8](np.zeros((2, 4), np.float32), X)
    assert str(info.value).split("\nhint: ")[1] == (
        "argument 0 ('x') is float32[:, ::1] where the signature has float32[:]; the signature "
        "'void(float32[:, ::1], float32[::1])' would take these arguments, or convert the argument "
        "(x.reshape(...) to 1 dimension(s)), or drop the signature so that cujit compiles for "
        f"the types each launch passes{G}first-kernel.md#signatures"
    )


def test_signature_text_spells_numba_syntax():
    from cujit.types import parse_signature

    sig = parse_signature("void(float32[:, :], int64, boolean, complex128[::1])")
    text = hints.signature_text(sig.args)
    assert text == "void(float32[:, :], int64, boolean, complex128[::1])"
    assert parse_signature(text).args == sig.args  # it parses back, layouts included
