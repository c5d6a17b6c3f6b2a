"""What to do about the mistakes newcomers make most: one table, mistake -> hint.

Each entry names the mistake, the hint's text (a format string filled with the
user's own names) and the page of the user guide (``docs/guide/``) that explains
it.  The places that raise call :func:`hint` (a ``hint:`` line and a ``guide:``
line, for ``CompileError(hint=...)``) or :func:`with_hint` (the message with both
lines appended, for errors that are a message alone).  ``tests/test_hints.py``
checks that every page and section named here exists.
"""

from __future__ import annotations

from cujit.frozen import frozen

GUIDE = "docs/guide/"


@frozen
class Hint:
    """A line of advice an error carries, and the guide page that explains it."""

    text: str  # str.format template over the names the raising site passes
    page: str  # a page of docs/guide/, with its section: "first-kernel.md#launching"


HINTS: dict[str, Hint] = {
    "list-argument": Hint(
        "kernels take arrays, not lists: pass np.asarray(...) for {name!r} (or "
        "cuda.to_device(np.asarray(...)) to keep it on the GPU between launches)",
        "first-kernel.md#host-arrays-and-device-arrays",
    ),
    "eager-mismatch": Hint(
        "{which}; the signature {sig!r} would take these arguments, or convert the "
        "argument ({conversion}), or drop the signature so that cujit compiles for the "
        "types each launch passes",
        "first-kernel.md#signatures",
    ),
    "no-launch-config": Hint(
        "give blocks and threads per block in brackets, for instance "
        "{kernel}[({first}.size + 255) // 256, 256]({args})",
        "first-kernel.md#launching",
    ),
    "float-dimension": Hint(
        "compute it with integer division, for instance (n + 255) // 256: '/' always gives a float",
        "first-kernel.md#launching",
    ),
    "argument-count": Hint(
        "pass one value per parameter: {kernel}[blocks, threads]({args})",
        "first-kernel.md#launching",
    ),
    "host-function": Hint(
        "decorate {name!r} with @cuda.jit(device=True) to call it from a kernel",
        "first-kernel.md#device-functions",
    ),
    "numpy-allocation": Hint(
        "a kernel cannot allocate arrays: use cuda.local.array(shape, dtype) for one per "
        "thread or cuda.shared.array(shape, dtype) for one per block (shape and dtype "
        "constants), or allocate it on the host and pass it in",
        "memory.md#local-arrays",
    ),
    "numpy-function": Hint(
        "in a kernel NumPy's math functions take numbers (np.sin(x[i])) or fill an 'out' "
        "array (np.sin(x, out)); for {name} loop over the elements, or combine threads' "
        "results with cuda.atomic.add; docs/numba-api.md lists what kernels can call",
        "first-kernel.md#what-a-kernel-can-call",
    ),
    "global-store": Hint(
        "a kernel cannot change Python variables: write the result into an array "
        "argument (out[0] = ...) and read that array on the host after the launch",
        "first-kernel.md#results-go-into-arrays",
    ),
    "kernel-return": Hint(
        "write the result into an array argument instead", "first-kernel.md#results-go-into-arrays"
    ),
    "unsynchronized-read": Hint(
        "a launch returns before its kernel has run: after launching on {stream}, call "
        "cuda.synchronize() (or that stream's synchronize()) before reading the array",
        "memory.md#mapped-and-managed-memory",
    ),
}

NUMPY_ALLOCATORS = frozenset(
    (
        "zeros",
        "ones",
        "empty",
        "full",
        "array",
        "arange",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "linspace",
        "eye",
        "identity",
        "asarray",
        "copy",
    )
)


def hint(key: str, **names: object) -> str:
    """The hint ``key`` filled with ``names``, then its guide page on a line of its own:
    the text of ``CompileError(hint=...)``, which renders it after ``hint:``."""
    entry = HINTS[key]
    return f"{entry.text.format(**names)}\nguide: {GUIDE}{entry.page}"


def with_hint(message: str, key: str, **names: object) -> str:
    """``message`` followed by the hint's two lines, for errors that are a message alone."""
    return f"{message}\nhint: {hint(key, **names)}"


def signature_text(types) -> str:
    """Argument types in numba's signature syntax: ``void(float64[:], int64)``."""
    return "void(" + ", ".join(map(_spell, types)) + ")"


def _spell(t) -> str:
    dtype, ndim = getattr(t, "dtype", None), getattr(t, "ndim", None)
    if dtype is not None and ndim is not None:  # an array, in numba's slice spelling
        dims = [":"] * ndim
        layout = getattr(t, "layout", "A")
        if ndim and layout in "CF":  # 'A' takes any layout
            dims[-1 if layout == "C" else 0] = "::1"
        return f"{_spell(dtype)}[{', '.join(dims)}]"
    text = str(t)
    return "boolean" if text == "bool" else text


def eager_mismatch(kernel: str, argnames, declared, given, accepts=None) -> str:
    """The hint for arguments no eager signature of ``kernel`` takes: the first argument
    the first signature does not take (``accepts(want, got)``; by default, the first that
    differs), the signature that would take them all."""
    which, conversion = "the argument types differ from the signature", "x.astype(...)"
    # A call may pass more or fewer arguments than the signature declares.
    for k, (want, got) in enumerate(zip(declared, given, strict=False)):
        if not (accepts(want, got) if accepts else _spell(want) == _spell(got)):
            name = argnames[k] if k < len(argnames) else f"#{k}"
            which = (
                f"argument {k} ({name!r}) is {_spell(got)} where the signature has {_spell(want)}"
            )
            conversion = _conversion(name, want, got)
            break
    return hint("eager-mismatch", which=which, sig=signature_text(given), conversion=conversion)


def _conversion(name: str, want, got) -> str:
    """How the user's argument ``name`` becomes of the declared type ``want``."""
    if getattr(want, "ndim", None) is None:  # a scalar
        return f"np.{_spell(want)}({name})"
    if getattr(got, "ndim", want.ndim) != want.ndim:
        return f"{name}.reshape(...) to {want.ndim} dimension(s)"
    if getattr(got, "dtype", want.dtype) != want.dtype:
        return f"{name}.astype(np.{want.dtype})"
    return f"np.{'asfortranarray' if want.layout == 'F' else 'ascontiguousarray'}({name})"


def launch_form(kernel: str, argnames, args) -> str:
    """The hint for a kernel called without a launch configuration, in the user's names:
    the grid covers the first array argument."""
    # The user may pass the wrong number of arguments: name the first array among both.
    first = next(
        (n for n, a in zip(argnames, args, strict=False) if hasattr(a, "shape")),
        argnames[0] if argnames else "x",
    )
    return hint("no-launch-config", kernel=kernel, first=first, args=", ".join(argnames))
