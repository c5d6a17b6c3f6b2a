"""Where a kernel's cache entries live, and the index of each kernel's entries.

numba's layout: a ``cache=True`` kernel's files go in the ``__pycache__`` folder beside
its source file, where that folder can be made and written; otherwise (a read-only
package, a function with no source file) in the per-user cache folder, where also the
kernels that only ``CUJIT_CACHE=1`` caches go.  ``CUJIT_CACHE_DIR`` puts every entry in
the folder it names instead.

Beside its entries (one file per specialisation, ``store.entry_path``) each kernel has
one index file, ``<module>.<qualname>-<line>.py<XY>.nbi``, numba's name for it: a JSON
table of the kernel's entries and the fingerprint of the code they were compiled
from.  When a kernel's code changes, the entries made from the old code can never be
hit again (their keys cover the code), so saving an entry for the new code removes
them: the folder holds no dead entries of a kernel that was edited.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import sys
from pathlib import Path

from cujit import config
from cujit.cache import store

INDEX_SUFFIX = ".nbi"
PYCACHE = "__pycache__"


def _source_file(pyfunc) -> str | None:
    code = getattr(pyfunc, "__code__", None)
    path = getattr(code, "co_filename", "") or ""
    return path if path and not path.startswith("<") and os.path.isfile(path) else None


def _writable_pycache(source: str) -> Path | None:
    folder = Path(source).resolve().parent / PYCACHE
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK | os.X_OK) else None


def entry_folder(pyfunc, beside_source: bool = True) -> Path:
    """The folder of ``pyfunc``'s entries (see the module docstring); the per-user folder
    unless ``beside_source`` (``cache=True`` on the kernel: ``CUJIT_CACHE=1``, which
    caches every kernel, keeps them all in the per-user folder)."""
    if config.CACHE_DIR.is_set() or not beside_source:
        return Path(config.cache_dir())
    source = _source_file(pyfunc)
    found = _writable_pycache(source) if source is not None else None
    return found if found is not None else Path(config.cache_dir())


def index_path(folder: Path, pyfunc) -> Path:
    """The index file of ``pyfunc``'s entries in ``folder``."""
    code = pyfunc.__code__
    stem = Path(code.co_filename).stem
    qualname = re.sub(r"[^A-Za-z0-9_.]", "_", getattr(pyfunc, "__qualname__", "kernel"))
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return folder / f"{stem}.{qualname[:64]}-{code.co_firstlineno}.{tag}{INDEX_SUFFIX}"


def code_fingerprint(pyfunc) -> str:
    """A digest of the function's own code (bytecode, constants, names)."""
    return store.hasher(marshal.dumps(pyfunc.__code__)).hexdigest()[:32]


def _read(path: Path) -> dict:
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def record(folder: Path, pyfunc, key: str, entry: Path) -> None:
    """Add ``entry`` (of ``key``) to ``pyfunc``'s index; remove the entries its index
    lists for code the function no longer has.  Failures cost only the tidying."""
    path = index_path(folder, pyfunc)
    table = _read(path)
    code, source = code_fingerprint(pyfunc), os.path.abspath(pyfunc.__code__.co_filename)
    if table.get("file") not in (None, source):  # another file's kernel of the same name
        table = {}
    entries = table.get("entries", {}) if table.get("code") == code else {}
    if table.get("code") not in (None, code):
        for name in table.get("entries", {}).values():
            stale = folder / name
            if stale != entry and stale.suffix == store.SUFFIX:
                store._remove(stale)
    entries[key] = entry.name
    table = {"function": pyfunc.__qualname__, "file": source, "code": code, "entries": entries}
    try:
        store.atomic_write(path, json.dumps(table, sort_keys=True).encode())
    except OSError:
        pass
