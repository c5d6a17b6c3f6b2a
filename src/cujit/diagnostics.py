"""Source locations and the errors cujit shows its users.

Every user-facing error renders as a compiler diagnostic:

    kernel.py:12:9: error: cannot index a scalar of type float32
        y = a[i]
            ^
    hint: ...

and never names cujit's own files.  Setting ``CUJIT_SHOW_INTERNALS=1`` keeps
the internal traceback for bug reports (read by ``cujit.config``).
"""

from __future__ import annotations

import functools
import linecache
import pickle

from cujit.frozen import frozen


@frozen
class Loc:
    """A position in the user's source: file, 1-based line, 0-based column."""

    file: str
    line: int
    col: int = 0
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"

    def source_line(self) -> str | None:
        text = linecache.getline(self.file, self.line)
        return text.rstrip("\n") if text else None


UNKNOWN_LOC = Loc("<unknown>", 0, 0)


class CujitError(Exception):
    """Base of every error cujit raises on purpose."""


class CompileError(CujitError):
    """A kernel that cujit cannot compile, pointing at the user's line."""

    kind = "error"

    def __init__(self, message: str, loc: Loc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.call_chain: list[str] = []
        # Exception's, not the next class's: under the numba drop-in numba's error
        # classes follow in the MRO (numba_drop_in.adopt_numba_errors), and their
        # constructors would rewrite the message.
        Exception.__init__(self, self.render())

    def render(self) -> str:
        where = f"{self.loc}: " if self.loc is not None and self.loc.line > 0 else ""
        parts = [f"{where}{self.kind}: {self.message}"]
        if self.loc is not None and self.loc.line > 0:
            src = self.loc.source_line()
            if src is not None:
                stripped = src.lstrip()
                indent = len(src) - len(stripped)
                parts.append("    " + stripped)
                col = max(self.loc.col - indent, 0)
                width = 1
                if self.loc.end_col is not None and self.loc.end_col > self.loc.col:
                    width = self.loc.end_col - self.loc.col
                parts.append("    " + " " * col + "^" * width)
        for where in self.call_chain:  # innermost call first
            parts.append(f"note: called from {where}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.render()


class UnsupportedError(CompileError):
    """A Python construct or library call that cujit kernels do not support."""

    kind = "unsupported"


class KernelReturnError(CompileError, TypeError):
    """A kernel that returns a value: a TypeError, as numba's ("must have void return
    type")."""


class TypingError(CompileError):
    """Operands or arguments whose types do not fit the operation."""

    kind = "type error"


class RequireLiteralValue(TypingError):
    """An argument that must be a compile-time constant and is not; the message names
    numba's class of the same meaning, which numba's messages carry."""

    kind = "type error: RequireLiteralValue"


class ConstantValueError(TypingError, ValueError):
    """A compile-time constant of the right type whose value the operation refuses (a
    ValueError too, as numba raises for one, such as an alignment that is no power of 2)."""

    kind = "value error"


class LoweringError(CompileError):
    """A library's code generator that built a wrong value (numba's LoweringError)."""

    kind = "lowering error"

    @property
    def msg(self) -> str:
        return self.message


class SignatureError(TypingError, TypeError):
    """A type signature that does not parse or names a type kernels cannot take, reported
    at the user's line that gave it (a TypeError too, as numba raises for one)."""

    kind = "bad signature"


def def_loc(loc: Loc) -> Loc:
    """The ``def`` line of the function whose code starts at ``loc``: Python's first line
    is the first decorator's, and what is said of the function's own header (its
    parameters, a debugger's breakpoint) belongs on the ``def``."""
    import linecache

    for line in range(loc.line, loc.line + 64):
        text = linecache.getline(loc.file, line).lstrip()
        if not text:
            break
        if text.startswith(("def ", "async def ")):
            return Loc(loc.file, line, 0)
    return loc


def caller_loc() -> Loc | None:
    """The innermost frame of the call stack outside cujit's own files: the user's
    line that called into cujit (None when there is none)."""
    import os
    import sys

    root = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(root) and not frame.f_code.co_filename.startswith("<frozen"):
            return Loc(frame.f_code.co_filename, frame.f_lineno, 0)
        frame = frame.f_back
    return None


class InternalCompilerError(CujitError):
    """An unexpected failure inside cujit itself: always a bug."""

    def __init__(self, stage: str, kernel: str, loc: Loc | None, cause: BaseException):
        self.stage = stage
        self.kernel = kernel
        self.loc = loc
        self.cause = cause
        where = f" (kernel defined at {loc})" if loc is not None else ""
        Exception.__init__(  # not numba's constructor (see CompileError)
            self,
            f"internal compiler error in stage '{stage}' while compiling "
            f"'{kernel}'{where}: {type(cause).__name__}: {cause}\n"
            "This is a bug in cujit; please report it with the kernel's source "
            "(set CUJIT_SHOW_INTERNALS=1 for the internal traceback).",
        )

    def __reduce__(self):
        # Its constructor's arguments are not its args: rebuild it from the message and
        # the attributes, so that it crosses processes (Dask workers, multiprocessing).
        return (_restore_error, (type(self), self.args, self.__dict__))


def _restore_error(cls, args: tuple, state: dict) -> Exception:
    error = Exception.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class LaunchError(CujitError):
    """A kernel launch that cannot be made as written (bad grid, bad arguments)."""


class DeviceFunctionLaunchError(LaunchError, RuntimeError):
    """A device function launched as a kernel: a RuntimeError, as numba's."""


class LaunchValueError(LaunchError, ValueError):
    """A launch configuration that is missing or out of range: a ValueError, as numba's."""


class LaunchTypeError(LaunchError, TypeError):
    """Launch dimensions or arguments of the wrong type: a TypeError, as numba's."""


class JitOptionError(CujitError, ValueError):
    """A ``cuda.jit`` keyword that this kind of function cannot take (``link=`` on a
    device function): a ValueError, as numba raises it."""


class UncacheableKernel(CujitError, pickle.PicklingError):
    """``cache=True`` on a kernel whose code cannot be reused by another process (it
    holds a device array's address): a PicklingError, as numba's."""


class UncacheableLinkedKernel(CujitError, RuntimeError):
    """``cache=True`` on a kernel that links files (``link=``): refused with a
    RuntimeError, as numba refuses it, since an entry cannot tell when they change."""


class NumbaWarning(UserWarning):
    """The base of the warnings cujit gives under numba's names (``cujit.cuda.errors``)."""


class NumbaPerformanceWarning(NumbaWarning):
    """Code that runs, but slower than it could (a small grid, host arrays copied)."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """Options that contradict each other (``debug=True`` with ``lineinfo=True``); one
    of them is ignored."""


class NumbaDebugInfoWarning(NumbaWarning):
    """Debug information asked for but incomplete: the function's source cannot be
    found (it was made by ``exec``)."""


class NoGPUError(CujitError):
    """Raised at launch time when no CUDA GPU or driver is available."""


@frozen
class KernelFailure:
    """Where a debug-mode kernel failed; rides on the raised exception as
    ``exc.kernel_failure`` (``cujit.runtime.debug`` makes it)."""

    kernel: str
    loc: Loc
    thread: tuple[int, int, int]
    block: tuple[int, int, int]


def printable(text: str) -> str:
    """``text`` for a terminal: each character Python would not print as itself (control
    characters, a newline, an escape sequence's ESC) written as its escape, as ``repr``
    writes it; other characters, unicode letters among them, left alone."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def api_boundary(fn):
    """Decorate a public entry point so the errors it raises show the user's frames only.

    CPython adds every frame an exception passes through to its traceback, so an
    error raised deep in the compiler would list a dozen cujit frames above its
    message.  The outermost boundary drops them (and the chained internal cause)
    and re-raises: what remains is the user's frames and this one re-raise line.
    An inner boundary's re-raise is dropped in turn by the next one out.
    ``CUJIT_SHOW_INTERNALS=1`` leaves the traceback untouched for bug reports.
    """

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            if not user_facing(error):
                raise
            hide_internals(error)  # cujit frames: CUJIT_SHOW_INTERNALS=1
            raise  # bare: adds no frame of this function

    return entry


def hide_internals(error: BaseException) -> BaseException:
    """Drop ``error``'s traceback so far and its chained internal cause, as ``raise
    error.with_traceback(None) from None`` would.  Re-raised by a bare ``raise`` in the
    ``except`` block that caught it, the traceback then holds the caller's frames only:
    CPython adds the raising frame for ``raise error``, never for a bare ``raise``."""
    error.__traceback__ = None
    error.__cause__ = None
    error.__suppress_context__ = True
    return error


def user_facing(error: Exception) -> bool:
    """Whether ``error`` should reach the user without cujit's frames (for boundaries
    written inline on hot paths, where a decorator's extra call would cost)."""
    from cujit import config  # light, but kept out of import-time work

    if config.SHOW_INTERNALS.get():
        return False
    return isinstance(error, CujitError) or isinstance(
        getattr(error, "kernel_failure", None), KernelFailure
    )
