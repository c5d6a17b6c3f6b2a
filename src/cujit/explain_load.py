"""Loading a kernel for ``python -m cujit explain FILE.py:KERNEL`` without running the script.

A kernel's globals (imported modules, constants, the device functions it calls)
must exist, with their values, for it to compile, so the file's top level cannot
be skipped altogether.  Nor may it run as a script would: its launches would run
(or fail with NoGPUError where there is no GPU) and its output would mix into the
listing.  So explain runs the *definitions* only:

- the top-level statements that bind names run, one by one: ``import``, ``def``,
  ``class``, assignments, and ``if`` blocks (often version or platform switches);
- the statements that only act are skipped: bare expressions (calls, prints,
  launches), loops, ``with``, ``try``, ``del`` and ``if __name__ == "__main__"``;
- while they run, kernel launches are disabled (one reached anyway, say inside an
  assignment, fails that statement alone), and their printed output goes to stderr;
- a statement that fails is skipped with a one-line note on stderr; the kernel is
  looked up afterwards.

A file that uses ``numba.cuda`` (``from numba import cuda``, ``import numba.cuda``...)
loads with the numba drop-in installed, as ``python -m cujit run`` runs it: its
``cuda`` is cujit's, whether or not numba is installed.
"""

from __future__ import annotations

import ast
import contextlib
import os
import sys
import types

from cujit.diagnostics import printable

_BINDING = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.If,
)


class LaunchDisabled(RuntimeError):
    """A launch reached while explain loads the file's definitions."""


def load_kernel(target: str, command: str = "explain"):
    """The Python function of ``FILE.py:KERNEL`` (a kernel's ``py_func``); exits with a
    one-line message (no traceback) when the file or the kernel cannot be found, the
    message opening with ``cujit <command>:`` (``explain``, ``report``)."""
    head = f"cujit {command}:"
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"{head} expected FILE.py:KERNEL, got {target!r}")
    shown = printable(path)
    if not os.path.isfile(path):
        raise SystemExit(f"{head} no such file: {shown}")
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        tree = ast.parse(source, filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        raise SystemExit(f"{head} cannot read {shown}: {printable(str(exc))}") from None
    if uses_numba_cuda(tree):
        from cujit.numba_drop_in import install_numba_drop_in

        install_numba_drop_in()
    module = types.ModuleType(f"_cujit_{command}_target")
    module.__file__ = os.path.abspath(path)
    sys.modules[module.__name__] = module  # dataclasses and pickling look modules up
    sys.path.insert(0, os.path.dirname(module.__file__))  # its sibling imports
    with _launches_disabled(command), contextlib.redirect_stdout(sys.stderr):
        for stmt in tree.body:
            if _binds(stmt):
                _run(stmt, path, module, head)
    return _kernel_of(module, name, f"{head} {shown}")


def uses_numba_cuda(tree: ast.AST) -> bool:
    """Whether a module imports ``numba.cuda`` or reads ``numba.cuda``, anywhere in it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Attribute) and node.attr == "cuda":
            value = node.value
            names = [f"{value.id}.cuda"] if isinstance(value, ast.Name) else []
        else:
            continue
        if any(n == "numba.cuda" or n.startswith("numba.cuda.") for n in names):
            return True
    return False


def _kernel_of(module: types.ModuleType, name: str, where: str):
    obj = getattr(module, name, None)
    if obj is None:
        raise SystemExit(f"{where} defines no function {name!r} at its top level")
    fn = getattr(obj, "py_func", obj)
    if not isinstance(fn, types.FunctionType):
        raise SystemExit(f"{where}:{printable(name)} is a {type(obj).__name__}, not a kernel")
    return fn


def _binds(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, _BINDING):
        return False
    if isinstance(stmt, ast.If):  # `if __name__ == "__main__":` is the script's work
        test = stmt.test
        return not (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
        )
    return True


def _run(stmt: ast.stmt, path: str, module: types.ModuleType, head: str) -> None:
    code = compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec")
    try:
        exec(code, module.__dict__)  # noqa: S102 - the user's own definitions
    except Exception as exc:  # noqa: BLE001 - the file's own failure: note it, go on
        print(
            printable(
                f"{head} skipped {path}:{stmt.lineno}: {type(exc).__name__}: {_first_line(exc)}"
            ),
            file=sys.stderr,
        )


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


@contextlib.contextmanager
def _launches_disabled(command: str):
    from cujit.dispatcher import Kernel

    def refuse(self, *args, **kwargs):
        raise LaunchDisabled(
            f"kernel {self.__name__!r} is not launched while {command} loads the file's definitions"
        )

    saved = Kernel._launch
    Kernel._launch = refuse
    try:
        yield
    finally:
        Kernel._launch = saved
