"""Foreign code a kernel links: ``cuda.jit(link=[...])`` and ``declare_device(link=...)``.

    k = cuda.jit(link=["shim.cu", cuda.CUSource(text), "lib.ltoir"])(kernel)

Each item becomes a ``LinkFile``: its kind (from the class or the file's suffix: ``.cu``,
``.ptx``, ``.ltoir``, ``.cubin``, ``.fatbin``, ``.o``, ``.a``), a name for messages and
the linker, its bytes (read once, when the kernel or declaration is made) and their
digest.  A ``LinkFile``'s repr is its kind, name and digest: in ``Options.link`` it is
part of the cache key, so a changed file is a different kernel.  At stage 7
``link_inputs`` turns the files into nvJitLink inputs, CUDA sources through NVRTC.
"""

from __future__ import annotations

import os
import re
from dataclasses import field

from cujit.diagnostics import CompileError, CujitError
from cujit.frozen import frozen

SUFFIXES = {
    ".cu": "cu",
    ".ptx": "ptx",
    ".ltoir": "ltoir",
    ".cubin": "cubin",
    ".fatbin": "fatbin",
    ".o": "o",
    ".a": "a",
}


class LinkableCode:
    """Code to link, given as bytes or text rather than a path (numba's classes)."""

    kind = ""
    default_name = "<unnamed>"

    def __init__(self, data, name: str | None = None, setup_callback=None, teardown_callback=None):
        self.data = data
        self._name = name
        self.setup_callback = setup_callback
        self.teardown_callback = teardown_callback

    @property
    def name(self) -> str:
        return self._name or self.default_name

    @staticmethod
    def from_path(path) -> LinkableCode:
        """The file at ``path`` as the class its suffix names."""
        kind = _kind_of(str(path))
        with open(path, "rb") as f:
            data = f.read()
        return KINDS[kind](data, name=os.path.basename(str(path)))

    @staticmethod
    def from_path_or_obj(item) -> LinkableCode:
        return item if isinstance(item, LinkableCode) else LinkableCode.from_path(item)


class CUSource(LinkableCode):
    """CUDA C/C++ source text, compiled with NVRTC for the kernel's architecture."""

    kind = "cu"
    default_name = "<unnamed-cu>"


class PTXSource(LinkableCode):
    kind = "ptx"
    default_name = "<unnamed-ptx>"


class LTOIR(LinkableCode):
    kind = "ltoir"
    default_name = "<unnamed-ltoir>"


class Cubin(LinkableCode):
    kind = "cubin"
    default_name = "<unnamed-cubin>"


class Fatbin(LinkableCode):
    kind = "fatbin"
    default_name = "<unnamed-fatbin>"


class Object(LinkableCode):
    kind = "o"
    default_name = "<unnamed-object>"


class Archive(LinkableCode):
    kind = "a"
    default_name = "<unnamed-archive>"


KINDS = {c.kind: c for c in (CUSource, PTXSource, LTOIR, Cubin, Fatbin, Object, Archive)}


@frozen
class LinkFile:
    """One file to link: what the cache key and the linker see."""

    kind: str
    name: str
    digest: str
    data: bytes = field(repr=False, compare=False)


def _kind_of(path: str) -> str:
    kind = SUFFIXES.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise CujitError(
            f"cannot link '{path}': cujit links {', '.join(SUFFIXES)} files (or cuda.CUSource text)"
        )
    return kind


def link_file(item) -> LinkFile:
    """``item`` (a path or a ``LinkableCode``) as a ``LinkFile``, its bytes read now."""
    if isinstance(item, LinkableCode):
        data = item.data.encode() if isinstance(item.data, str) else bytes(item.data)
        kind, name = item.kind, item.name
    elif isinstance(item, (str, os.PathLike)):
        name = os.fspath(item)
        kind = _kind_of(name)
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise CujitError(f"cannot link '{name}': {exc.strerror}") from None
    else:
        raise CujitError(
            f"link= takes file paths and cuda.CUSource (or other LinkableCode) "
            f"objects, not {type(item).__name__}"
        )
    import hashlib  # here: a kernel that links nothing (a cache hit) must not load it

    return LinkFile(kind, name, hashlib.blake2b(data, digest_size=16).hexdigest(), data)


def link_files(items) -> tuple[LinkFile, ...]:
    """``link=``'s items (one item or a list) as ``LinkFile``s, duplicates dropped."""
    if items is None:
        return ()
    if isinstance(items, (str, os.PathLike, LinkableCode)):
        items = [items]
    return tuple(dict.fromkeys(link_file(i) for i in items))


_COMPILED: dict[tuple, bytes] = {}  # (digest, arch, lto, include) -> NVRTC's output


def link_inputs(
    files, arch: tuple[int, int], include: tuple[str, ...] = (), lto: bool = False
) -> tuple[tuple[str, bytes, str], ...]:
    """nvJitLink's inputs for ``files``: CUDA sources compiled with NVRTC (to LTO-IR when
    ``lto`` or another input is LTO-IR, so that the link optimises across them, else to
    PTX), ``include`` their extra include directories."""
    from cujit.ptx.nvrtc import compile_cuda

    lto = lto or any(f.kind == "ltoir" for f in files)
    out = []
    for f in files:
        if f.kind != "cu":
            out.append((f.kind, f.data, f.name))
            continue
        key = (f.digest, tuple(arch), lto, tuple(include))
        code = _COMPILED.get(key)
        if code is None:
            code = _COMPILED[key] = compile_cuda(
                f.data, f.name, arch, ltoir=lto, include=tuple(include)
            )
        out.append(("ltoir" if lto else "ptx", code, f.name))
    return tuple(out)


def foreign_calls(fn) -> dict:
    """symbol -> the first ``foreign.call`` op (``cuda.declare_device``) in typed IR ``fn``
    or a device function it calls."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        for block in f.blocks:
            for op in block.ops:
                if getattr(op, "name", None) == "foreign.call":
                    found.setdefault(op.attr("symbol"), op)
        todo.extend(f.callees)
    return found


def foreign_files(calls: dict) -> tuple[LinkFile, ...]:
    """The files the declarations of ``calls`` (``foreign_calls``) link, in order."""
    found: dict[LinkFile, None] = {}
    for op in calls.values():
        found.update(dict.fromkeys(op.attr("files")))
    return tuple(found)


_PROTO = re.compile(r"\.(visible|extern)\s+\.func\s*(\(([^)]*)\))?\s*(\w+)\s*\(([^)]*)\)")


def prototypes(ptx: str, which: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """name -> (result, parameters) of the ``.func``s PTX text ``ptx`` defines
    (``which`` "visible") or calls (``which`` "extern"), each as its ``.param`` types."""
    out = {}
    for m in _PROTO.finditer(ptx):
        if m.group(1) == which:
            out[m.group(4)] = (_params(m.group(3) or ""), _params(m.group(5)))
    return out


def _params(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\.param\s+((?:\.align\s+\d+\s+)?\.\w+)", text))


def check_prototypes(kernel_ptx: str, inputs, calls: dict) -> None:
    """A declared signature that differs from the PTX definition's is the user's error,
    raised at the call (nvJitLink links such a call and only prints a warning)."""
    called = prototypes(kernel_ptx, "extern")
    for kind, data, name in inputs:
        if kind != "ptx":
            continue
        text = data.decode(errors="replace") if isinstance(data, bytes) else data
        for sym, proto in prototypes(text, "visible").items():
            want = called.get(sym)
            if sym in calls and want is not None and want != proto:
                op = calls[sym]
                raise CompileError(
                    f"'{sym}' is declared{_at(op)} as {_sig(op)}, which does not match its "
                    f"definition in '{name}': {_proto(proto)} where the declaration needs "
                    f"{_proto(want)}",
                    op.loc,
                )


def undefined_symbol(log: str, calls: dict, files) -> CompileError | None:
    """The user's error for nvJitLink's "Undefined reference" to a declared function."""
    m = re.search(r"Undefined reference to '(\w+)'", log)
    op = calls.get(m.group(1)) if m else None
    if op is None:
        return None
    names = ", ".join(f"'{f.name}'" for f in files) or "no files (link=[...] is empty)"
    return CompileError(
        f"'{m.group(1)}' is declared{_at(op)} with cuda.declare_device, but "
        f"none of the linked files defines it; linked: {names}",
        op.loc,
    )


def _at(op) -> str:
    loc = op.attr("declared")
    return f" at {loc.file}:{loc.line}" if loc is not None else ""


def _sig(op) -> str:
    args = ", ".join(str(t) for t in op.attr("args"))
    return f"{op.attr('return')}({args}) ({op.attr('abi')} ABI)"


def _proto(proto) -> str:
    ret, params = proto
    return f"({', '.join(params)}) returning {', '.join(ret) or 'nothing'}"
