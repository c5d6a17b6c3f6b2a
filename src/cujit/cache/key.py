"""The cache key of one kernel specialisation: a 256-bit BLAKE2b digest over everything that
changes the code.

- the kernel's code objects, nested ones included: ``co_code``, the exception
  table, the constants, the names, the argument counts and flags (line numbers
  only under ``debug``, where they reach the output);
- each function's source file, by a digest of its bytes: as numba's cache, a global
  that the file binds to a literal at its top level (``Z = 1``) and that holds plain
  data counts as a constant of the compile, frozen when it was made, and an entry stays
  valid while that file is unchanged (a value changed at run time, ``mod.Z = 10``, is
  not seen; ``kernel.recompile()`` compiles afresh; ``CUJIT_CACHE_KEY_GLOBALS=1`` keys
  every value instead).  Globals imported or computed (``from consts import X``,
  ``N = consts.X * 2``), and those of functions without a source file, are keyed by
  value, so that an edit of another file is never served stale;
- the values of the other globals and of the closure variables the code names, as irgen
  freezes them into constants: numbers, strings and tuples by type and ``repr``,
  arrays by dtype, shape and bytes, types and functions by qualified name
  (namedtuple classes and values with their fields),
  modules by name plus the values of the attributes the code names in them,
  submodules reached that way included (``pkg.sub.FACTOR``), classes by name
  plus the class attributes the code names (``K.SCALE``, through the MRO), other
  objects by ``repr`` plus the instance attributes the code names,
  Python functions (device functions to come) transitively by their own key, device
  functions with their own ``jit`` options;
- the argument types, the ``Options`` (``verify`` aside: it checks, never
  changes, the code);
- the environment: cujit's version and sources, the toolchain (see
  ``toolchain.py``) and the Python implementation and minor version; for the CPU
  target the host instead of the toolchain: CPU name and features, data layout,
  llvmlite's and LLVM's versions (``engine.host_identity``), and every function's
  line numbers, which its checks' messages name.

A value with no stable fingerprint (an object whose ``repr`` is its address, a
property, an attribute a ``__getattr__`` computes) makes the kernel uncacheable:
``kernel_key`` warns once per kernel with the reason, returns None, and the
caller compiles without the cache, rather than risk a stale hit.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import types as pytypes

from cujit import config
from cujit.cache import extension_key, toolchain
from cujit.cache.store import hasher
from cujit.options import Options
from cujit.types import Type, is_namedtuple_class
from cujit.types.core import is_device_array_global

FORMAT = 12  # bump when what the key covers, or what an entry holds, changes
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


class Uncacheable(Exception):
    """A value the kernel uses has no stable fingerprint."""


class CapturesDeviceArray(Uncacheable):
    """The kernel uses a global or captured device array: its address is in the code,
    and no other process has the array there."""


def kernel_key(pyfunc, arg_types, options: Options, strict: bool = False) -> str | None:
    """The hex key of ``pyfunc`` compiled for ``arg_types`` with ``options``; None if
    some value it uses cannot be fingerprinted.  ``strict`` (the kernel itself asked for
    ``cache=True``): a device array it uses raises ``CapturesDeviceArray`` instead."""
    h = hasher()
    h.update(f"cujit-kernel-key {FORMAT}\n".encode())
    h.update(environment_digest(options.target).encode())
    seen = _Seen(by_source=not config.CACHE_KEY_GLOBALS.get())
    # The CPU target's checks name source lines in their messages (its entries keep
    # them): its keys cover lines as debug builds' do.
    lines = options.debug or options.target == "cpu"
    try:
        _function(getattr(pyfunc, "py_func", pyfunc), h, lines, seen)
    except Uncacheable as why:
        if strict and isinstance(why, CapturesDeviceArray):
            raise
        _warn_uncacheable(pyfunc, str(why))
        return None
    except RecursionError:  # the walk over what it calls recurses once per level
        _warn_uncacheable(pyfunc, "it calls device functions nested too deep to fingerprint")
        return None
    try:
        _type_class_extensions(h, lines, seen)
        if seen.library or extension_key.touches_library(arg_types):
            extension_key.library_entries(h, lambda f: _function(f, h, lines, seen))
    except Uncacheable as why:
        _warn_uncacheable(pyfunc, str(why))
        return None
    for t in arg_types:
        h.update(f"arg {type(t).__name__}:{t}\n".encode())
    for f in dataclasses.fields(options):
        if f.name != "verify":
            h.update(f"opt {f.name}={getattr(options, f.name)!r}\n".encode())
    return h.hexdigest()


_env: str | None = None  # the CUDA target's environment digest, once worked out
_host_env: str | None = None  # the CPU target's
_warned: set[str] = set()


def _warn_uncacheable(pyfunc, why: str) -> None:
    import warnings

    name = getattr(pyfunc, "__qualname__", repr(pyfunc))
    code = getattr(getattr(pyfunc, "py_func", pyfunc), "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else name
    if where in _warned:
        return
    _warned.add(where)
    warnings.warn(
        f"kernel {name!r} ({where}) is compiled without the disk cache: {why}, so "
        "no key can tell when it changes",
        RuntimeWarning,
        stacklevel=user_level(),
    )


def user_level() -> int:
    """The ``stacklevel`` of the first frame outside cujit, for a warning its caller makes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level


def environment_digest(target: str = "cuda") -> str:
    """What this process's cujit, toolchain and Python contribute to every key of
    ``target``: the CUDA toolchain's identity, or for the CPU target the host's (its
    CPU name and features, data layout, llvmlite and LLVM: ``engine.host_identity``)."""
    global _env, _host_env
    found = _host_env if target == "cpu" else _env
    if found is None:
        import cujit

        h = hasher()
        h.update(f"cujit {cujit.__version__} {sources_digest()}\n".encode())
        h.update(f"python {sys.implementation.name} {sys.version_info[:2]}\n".encode())
        if target == "cpu":
            from cujit.targets.cpu.engine import host_identity

            h.update(f"host {host_identity()}\n".encode())
            found = _host_env = h.hexdigest()
        else:
            h.update(f"toolchain {toolchain.identity()}\n".encode())
            found = _env = h.hexdigest()
    return found


def sources_digest() -> str:
    """Size and modification time of every cujit source file.

    The version alone misses a development tree's edits; reading every file
    costs ~3 ms per process where ``stat`` costs ~0.3 ms.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hasher()
    stack = [root]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as it:
            for item in sorted(it, key=lambda e: e.name):
                if item.is_dir() and item.name != "__pycache__":
                    stack.append(item.path)
                elif item.name.endswith(".py"):
                    st = item.stat()
                    h.update(f"{item.path[len(root) :]} {st.st_size} {st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _function(fn, h, debug: bool, seen: set) -> None:
    code = getattr(fn, "__code__", None)
    if code is None:
        raise Uncacheable(f"{fn!r} has no code object")
    if id(fn) in seen:  # recursion, or two references to one function
        h.update(b"seen\n")
        return
    seen.add(id(fn))
    h.update(f"function {fn.__module__}.{fn.__qualname__}\n".encode())
    names: set[str] = set()
    _code(code, h, debug, names)
    getattr(seen, "names", set()).update(names)  # a _Seen: the names the code uses
    frozen = getattr(seen, "by_source", False) and _source_key(code, h, seen)
    _globals(fn, names, _assigned_in(code.co_filename) if frozen else frozenset(), h, debug, seen)
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
        h.update(f"closure {name}=".encode())
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            h.update(b"<empty>\n")
            continue
        _value(contents, h, debug, seen, names)
    for default in fn.__defaults__ or ():
        h.update(b"default ")
        _value(default, h, debug, seen, names)


def _globals(fn, names: set, frozen: frozenset, h, debug: bool, seen: set) -> None:
    """The globals and builtins the code names, in a fixed order (a name that is
    neither, an attribute, is already covered by ``co_names``); a plain-data global
    named in ``frozen`` (assigned at the top level of the function's source file) by its
    name alone: that file's digest keys it."""
    fn_builtins = getattr(fn, "__builtins__", None) or {}
    if isinstance(fn_builtins, pytypes.ModuleType):
        fn_builtins = vars(fn_builtins)
    for name in sorted(names):
        if name in fn.__globals__:
            value = fn.__globals__[name]
            if name in frozen and _is_data(value):
                h.update(f"global {name}: data\n".encode())
                continue
            h.update(f"global {name}=".encode())
            _value(value, h, debug, seen, names)
        elif name in fn_builtins:
            h.update(f"builtin {name}=".encode())
            _value(fn_builtins[name], h, debug, seen, names)


def _is_data(v) -> bool:
    """Plain data that numba's cache takes as a constant of the compile."""
    if isinstance(v, (*_PLAIN, frozenset)):
        return True
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return all(map(_is_data, v))
    return type(v).__module__ == "numpy" and hasattr(v, "tobytes")


_digests: dict[str, tuple[int, int, str]] = {}  # path -> (mtime_ns, size, digest)


def source_digest(path: str) -> str | None:
    """A digest of the source file's bytes (None where it cannot be read), read once per
    process while its size and modification time stay the same."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    known = _digests.get(path)
    if known is not None and known[:2] == (st.st_mtime_ns, st.st_size):
        return known[2]
    try:
        with open(path, "rb") as f:
            digest = hasher(f.read()).hexdigest()
    except OSError:
        return None
    _digests[path] = (st.st_mtime_ns, st.st_size, digest)
    return digest


_assigned: dict[str, tuple[str, frozenset]] = {}  # path -> (digest, names)


def _assigned_in(path: str) -> frozenset:
    """The names a module's source binds to a literal at its top level (``Z = 1``,
    ``SHAPE = (4, 4)``; in its top-level ``if``, ``try`` and ``with`` blocks too), and
    binds in no other way there: the globals whose values that file's digest stands for.
    A name it imports (``from consts import X``) or computes (``N = consts.X * 2``) is not
    among them: its value is keyed, so that an edit of another file is seen."""
    digest = source_digest(path)
    known = _assigned.get(path)
    if known is not None and known[0] == digest:
        return known[1]
    import ast

    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    if any(
        isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
        for n in ast.walk(tree)
    ):
        return frozenset()  # a star import may bind any name
    literal: set[str] = set()
    other: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            body.extend(node.body)
            body.extend(getattr(node, "orelse", ()))
            body.extend(getattr(node, "finalbody", ()))
            for handler in getattr(node, "handlers", ()):
                body.extend(handler.body)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_literal(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            literal.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:  # any other binding at the top level: a loop, a walrus, a tuple target...
            other.update(
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            )
    found = frozenset(literal - other)
    _assigned[path] = (digest, found)
    return found


def _is_literal(node) -> bool:
    import ast

    if node is None:
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _source_key(code, h, seen) -> bool:
    """Key the function's source file (once per file); False where it has none."""
    path = code.co_filename
    if not path or path.startswith("<"):
        return False
    digest = source_digest(path)
    if digest is None:
        return False
    if path not in seen.files:
        seen.files.add(path)
        h.update(f"source {os.path.basename(path)} {digest}\n".encode())
    return True


def _code(code, h, debug: bool, names: set) -> None:
    h.update(
        f"code {code.co_qualname} {code.co_argcount} {code.co_posonlyargcount} "
        f"{code.co_kwonlyargcount} {code.co_flags} {code.co_varnames} "
        f"{code.co_freevars} {code.co_cellvars} {code.co_names}\n".encode()
    )
    h.update(code.co_code)
    h.update(code.co_exceptiontable)
    if debug:  # line numbers reach the output only as debug info
        h.update(f"lines {code.co_filename} {code.co_firstlineno}\n".encode())
        h.update(code.co_linetable)
    names.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            _code(const, h, debug, names)
        else:
            h.update(f"const {_const(const)}\n".encode())


def _const(c) -> str:
    if isinstance(c, tuple):
        return "(" + ",".join(map(_const, c)) + ")"
    if isinstance(c, frozenset):  # its repr's order depends on string hashing
        return "frozenset{" + ",".join(sorted(map(_const, c))) + "}"
    return f"{type(c).__name__}:{c!r}"


def _value(v, h, debug: bool, seen: set, names: set) -> None:  # noqa: C901 -- one branch per kind of global a kernel can capture, in the order irgen freezes them
    """Fingerprint one global or closure value as irgen will freeze it."""
    if isinstance(v, (*_PLAIN, frozenset)):
        h.update(f"{_const(v)}\n".encode())
    elif is_device_array_global(v):  # taken by reference: its address is in the code
        raise CapturesDeviceArray(f"a global {type(v).__qualname__} is taken by reference")
    elif isinstance(v, (tuple, list)):  # items may be any value, not only constants
        h.update(f"{type(v).__name__} {getattr(v, '_fields', '')} {len(v)}\n".encode())
        for item in v:
            _value(item, h, debug, seen, names)
    elif isinstance(v, Type):
        h.update(f"type {type(v).__name__}:{v}\n".encode())
    elif isinstance(v, pytypes.ModuleType):
        _module(v, h, debug, seen, names)
    elif is_namedtuple_class(v):  # its fields and defaults shape the code that uses it
        h.update(f"namedtuple {v.__module__}.{v.__qualname__} {v._fields}\n".encode())
        _value(tuple(v._field_defaults.items()), h, debug, seen, names)
    elif _is_intrinsic(v):  # a library's @intrinsic: its typing and code generator
        h.update(f"intrinsic {v.__qualname__}\n".encode())
        _took_library(seen, True)
        _function(v._defn, h, debug, seen)
    elif isinstance(v, pytypes.FunctionType) or hasattr(v, "py_func"):
        _function(getattr(v, "py_func", v), h, debug, seen)
        _overloads(v, h, debug, seen)
        # A device function's own jit options (inline, forceinline, fastmath, opt...)
        # shape the code of the kernels that call it.
        for name, flag in sorted(getattr(v, "_flags", {}).items()):
            h.update(f"device-function flag {name}\n".encode())
            _value(flag, h, debug, seen, names)
    elif isinstance(v, type) and not _library(v):
        _class(v, h, debug, seen, names)
        _extension(v, h, debug, seen)
    elif isinstance(v, (type, pytypes.BuiltinFunctionType)) or isinstance(
        getattr(v, "__qualname__", None), str
    ):
        # Library classes, builtins, numpy ufuncs, cujit's device placeholders: by name.
        h.update(f"named {getattr(v, '__module__', None)}.{v.__qualname__}\n".encode())
    elif type(v).__module__ == "numpy" and hasattr(v, "tobytes"):
        # numpy scalars and arrays: the dtype and the bytes (a scalar's repr
        # may round; its bytes do not).
        h.update(f"numpy {type(v).__name__} {v.dtype.str} {getattr(v, 'shape', ())}\n".encode())
        h.update(v.tobytes())
    else:
        text = repr(v)
        if " at 0x" in text or " object at " in text:
            raise Uncacheable(
                f"a global value of type {type(v).__qualname__} has no "
                "stable fingerprint (its repr is its address)"
            )
        h.update(f"repr {type(v).__module__}.{type(v).__qualname__} {text}\n".encode())
        _attributes(v, getattr(v, "__dict__", {}), h, debug, seen, names)


# Packages whose classes a kernel uses by name only (dtypes, numpy scalar types, cujit's
# own placeholders): their attributes are the library's, not the user's.
_LIBRARIES = ("builtins", "numpy", "cujit", "math", "cmath", "operator")


def _library(cls: type) -> bool:
    return (cls.__module__ or "").split(".")[0] in _LIBRARIES


class _Seen(set):
    """The ids of the values a key has taken in, the names their code uses, the source
    files keyed, and whether plain-data globals are keyed by their file (``by_source``)."""

    def __init__(self, by_source: bool = False) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.files: set[str] = set()
        self.by_source = by_source
        self.library = False  # it took in an entry of the extension tables


def _extension(obj, h, debug: bool, seen: set) -> None:
    """A library's callable (``cujit.extending``): its typer and its lowering functions
    make the code of a call, so they are part of the key."""
    from cujit.types import extension

    _took_library(seen, extension_key.templates(obj, h, lambda f: _function(f, h, debug, seen)))
    factory = extension.CALLABLES.get(obj)
    if factory is None:
        return
    _took_library(seen, True)
    _function(factory, h, debug, seen)
    for specs, impl in extension.LOWERINGS.get(obj, ()):
        h.update(f"lowering {specs}\n".encode())
        _function(impl, h, debug, seen)


def _took_library(seen: set, took: bool) -> None:
    if took and isinstance(seen, _Seen):
        seen.library = True


def _is_intrinsic(v) -> bool:
    from cujit.types import extension

    try:
        return v in extension.INTRINSICS
    except TypeError:  # unhashable: not one
        return False


def _overloads(fn, h, debug: bool, seen: set) -> None:
    """A function a library overloads: its typing functions choose the code a call
    compiles, so they are part of the key."""
    from cujit.types import extension

    try:
        typing_fns = extension.OVERLOADS.get(fn, ())
    except TypeError:
        return
    _took_library(seen, extension_key.templates(fn, h, lambda f: _function(f, h, debug, seen)))
    _took_library(seen, bool(typing_fns))
    for typing_fn in typing_fns:
        h.update(b"overload\n")
        _function(typing_fn, h, debug, seen)


def _type_class_entries() -> list[tuple[str, str, list]]:
    """Every (type class, name) entry libraries filed: methods, overloaded attributes,
    lowered attributes and templates' ``resolve_<name>``, as (class, name, functions)."""
    from cujit.types import extension

    out = []
    for table in (extension.METHODS, extension.ATTRIBUTE_OVERLOADS):
        out += [(f"{c.__module__}.{c.__qualname__}", n, list(fns)) for (c, n), fns in table.items()]
    for (c, n), impl in extension.ATTRIBUTE_LOWERINGS.items():
        out.append((f"{c.__module__}.{c.__qualname__}", n, [impl]))
    for template in extension.ATTRIBUTE_TEMPLATES:
        for attr, value in vars(template).items():
            if attr.startswith("resolve_") and isinstance(value, pytypes.FunctionType):
                out.append((f"{template.__module__}.{template.__qualname__}", attr[8:], [value]))
    return sorted(out, key=lambda e: (e[1], e[0]))


def _type_class_extensions(h, debug: bool, seen: _Seen) -> None:
    """The type-class entries (``_type_class_entries``) whose name the kernel's code (or
    an entry taken in) uses as an attribute: what ``value.name`` can mean there."""
    taken: set[int] = set()
    grew = True
    while grew:  # an entry's own code may use further names
        grew = False
        for k, (cls, name, fns) in enumerate(_type_class_entries()):
            if k in taken or name not in seen.names:
                continue
            taken.add(k)
            grew = seen.library = True
            h.update(f"type-class entry {cls}.{name}\n".encode())
            for fn in fns:
                _function(fn, h, debug, seen)


def _module(mod, h, debug: bool, seen: set, names: set) -> None:
    """A module by name, and the values of the attributes the code names in it
    (``consts.TILE``), submodules followed (``pkg.sub.FACTOR``), since a changed
    value changes the code.  Library modules (numpy, math) are keyed by name."""
    h.update(f"module {mod.__name__}\n".encode())
    if id(mod) in seen or mod.__name__.split(".")[0] in _LIBRARIES:
        return
    seen.add(id(mod))
    _attributes(mod, vars(mod), h, debug, seen, names)


def _class(cls: type, h, debug: bool, seen: set, names: set) -> None:
    """A user's class: its name, and the class attributes the code names (``K.SCALE``),
    looked up as Python does, through the MRO."""
    h.update(f"class {cls.__module__}.{cls.__qualname__}\n".encode())
    if id(cls) in seen:
        return
    seen.add(id(cls))
    for name in sorted(names):
        for klass in cls.__mro__:
            if name not in vars(klass):
                continue
            if not _library(klass):  # cujit's base classes (types.Type): its sources key them
                h.update(f"  class attr {klass.__qualname__}.{name}=".encode())
                _value(vars(klass)[name], h, debug, seen, names)
            break
    if "__getattr__" in vars(type(cls)):  # a metaclass that computes class attributes
        raise Uncacheable(
            f"class {cls.__qualname__}'s attributes are computed (its "
            "metaclass defines __getattr__)"
        )


def _attributes(owner, attrs: dict, h, debug: bool, seen: set, names: set) -> None:
    """The values in ``attrs`` (an object's own) of the names the code uses."""
    for name in sorted(names):
        if name in attrs:
            h.update(f"  attr {name}=".encode())
            _value(attrs[name], h, debug, seen, names)
