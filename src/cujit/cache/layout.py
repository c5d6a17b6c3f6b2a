"""Where a kernel's cache entries live, and the index of each kernel's entries.

numba's layout: a ``cache=True`` kernel's files go in the ``__pycache__`` folder beside
its source file, where that folder can be made and written; otherwise (a read-only
package, a function with no source file) in the per-user cache folder, where also the
kernels that only ``CUJIT_CACHE=1`` caches go.  ``CUJIT_CACHE_DIR`` puts every entry in
the folder it names instead.

Beside its entries (one file per specialisation, ``store.entry_path``) each kernel has
one index file, ``<module>.<qualname>-<line>.py<XY>.nbi``, numba's name for it, in
numba's format, since numba's CPU cache (``numba.njit(cache=True)`` of the same
function) keeps its index under the same name: a pickled version string, then the
pickled pair (source stamp, table).  cujit adds its entries to the table under keys of
its own, ``("cujit", source file, code fingerprint, key)`` -> entry file name, plain
tuples and strings that numba's reader loads and ignores, and it leaves numba's entries,
version and stamp as they are (a fresh index gets numba's version and the stamp numba's
CPU cache gives a source file, the SHA-256 of its bytes): the two targets' entries live
side by side, as they do under numba-cuda.
A kernel whose compile marked itself launch-config sensitive
(``kernel.mark_launch_config_sensitive()``) also has numba's marker ``<index>.lcs``:
from then on its entries' keys include the launch configuration they were compiled for.
cujit finds its entries by their file names (its hits never read the index); the index
lets it remove what is stale: when a kernel's code changes, the entries made from the
old code can never be hit again (their keys cover the code), so saving an entry for
the new code removes them.

cujit never unpickles the index: ``pickledata`` parses it as data, numba's keys (its
types are rebuilt by calls) kept as inert records of what they name.  A rewrite keeps
such records only from an index file this user owns, and only those naming numba's own
modules; an index that names anything else (a pickle planted to run code) is refused
with a warning and written afresh.  A ``__pycache__`` is used only where it is private
to this user (``trust.folder_refusal``); otherwise the per-user folder takes its entries.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
import warnings
from pathlib import Path

from cujit import config
from cujit.cache import store, trust

INDEX_SUFFIX = ".nbi"
LAUNCH_CONFIG_SUFFIX = ".lcs"
PYCACHE = "__pycache__"


def _source_file(pyfunc) -> str | None:
    code = getattr(pyfunc, "__code__", None)
    path = getattr(code, "co_filename", "") or ""
    return path if path and not path.startswith("<") and os.path.isfile(path) else None


def _writable_pycache(source: str) -> Path | None:
    """The ``__pycache__`` beside ``source`` where this user can write it and it is
    private to them (made 0700 where absent); else None."""
    folder = Path(source).resolve().parent / PYCACHE
    try:
        os.mkdir(folder, trust.FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        try:
            trust.fix_mode(folder, trust.FOLDER_MODE, folder=True)
        except OSError:
            return None
    if trust.folder_refusal(folder) is not None:
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


def marker_path(folder: Path, pyfunc) -> Path:
    """numba's launch-config marker beside the index (``<index name>.lcs``): present once
    a compile of the kernel said its code depends on the launch configuration."""
    return index_path(folder, pyfunc).with_suffix(LAUNCH_CONFIG_SUFFIX)


def launch_config_marked(folder: Path, pyfunc) -> bool:
    return marker_path(folder, pyfunc).exists()


def mark_launch_config(folder: Path, pyfunc) -> None:
    """Leave the marker (a failure costs later processes one compile each, no more);
    never through a symbolic link put in its place."""
    flags = os.O_WRONLY | os.O_CREAT | trust.NOFOLLOW | trust.CLOEXEC
    try:
        fd = os.open(marker_path(folder, pyfunc), flags, trust.FILE_MODE)
        os.close(fd)
    except OSError:
        pass


def code_fingerprint(pyfunc) -> str:
    """A digest of the function's own code (bytecode, constants, names) and, unless the
    key covers global values (``CUJIT_CACHE_KEY_GLOBALS``), of its source file, which the
    key then covers (``key.source_digest``)."""
    h = store.hasher(marshal.dumps(pyfunc.__code__))
    if not config.CACHE_KEY_GLOBALS.get():
        from cujit.cache.key import source_digest

        h.update(str(source_digest(pyfunc.__code__.co_filename)).encode())
    return h.hexdigest()[:32]


def source_stamp(path: str) -> bytes | None:
    """numba's CPU cache's stamp of a source file: the SHA-256 digest of its bytes."""
    import hashlib

    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).digest()
    except OSError:
        return None


def _numba_version() -> str:
    """numba's version, which heads a fresh index so that numba's CPU cache reads it."""
    from importlib import metadata

    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:
        return "cujit"


# numba's index names these (its types, rebuilt by copyreg); anything else is not its.
_NUMBA_MODULES = ("numba", "numba_cuda")
_NUMBA_GLOBALS = {("copyreg", "_reconstructor"), ("builtins", "object")}


def _numba_named(found: set) -> bool:
    return all(g in _NUMBA_GLOBALS or g[0].split(".")[0] in _NUMBA_MODULES for g in found)


def _read(path: Path) -> tuple[object, object, dict] | None:
    """(version, stamp, table) of an index file, read as data (``pickledata``), or None:
    absent, or not to be used (then a warning says why, and the index is written anew).
    Values that need code to be built (numba's types) stay only from a file this user
    owns and only where they name numba's own modules."""
    from cujit.cache import pickledata  # here, not at the top: a cache hit does not need it

    try:
        found = trust.read_with_status(path, trust.shared(path.parent))
        if found is None:
            return None
        data, st = found
        values = pickledata.read_all(data)
        if len(values) != 2 or not isinstance(values[1], tuple) or len(values[1]) != 2:
            raise trust.Refused("it is not an index: not numba's two pickles")
        version, (stamp, table) = values[0], values[1]
        if not isinstance(table, dict):
            raise trust.Refused("it is not an index: its table is not a dict")
        named = pickledata.globals_named(values)
        if not _numba_named(named):
            other = sorted(f"{m}.{n}" for m, n in named if not _numba_named({(m, n)}))
            raise trust.Refused(
                f"it would call {', '.join(other[:3])}, which no index of numba's does"
            )
    except trust.Refused as exc:
        _refused_index(path, str(exc))
        return None
    except ValueError as exc:
        _refused_index(path, f"it is not an index ({exc})")
        return None
    if named and trust.POSIX and st.st_uid != os.geteuid():  # not ours to write again
        table = {k: v for k, v in table.items() if not pickledata.globals_named((k, v))}
        version = version if isinstance(version, str) else _numba_version()
        stamp = stamp if not pickledata.globals_named(stamp) else None
    return version, stamp, table


def _refused_index(path: Path, why: str) -> None:
    from cujit.cache.key import user_level

    warnings.warn(
        f"cujit refused the kernel cache index {path}: {why}; writing a new one",
        RuntimeWarning,
        stacklevel=user_level(),
    )


def _ours(key, source: str) -> bool:
    return isinstance(key, tuple) and len(key) == 4 and key[:2] == ("cujit", source)


def record(folder: Path, pyfunc, key: str, entry: Path) -> None:
    """Add ``entry`` (of ``key``) to ``pyfunc``'s index; remove the entries its index
    lists for code the function no longer has.  Failures cost only the tidying."""
    path = index_path(folder, pyfunc)
    source = os.path.abspath(pyfunc.__code__.co_filename)
    code = code_fingerprint(pyfunc)
    found = _read(path)
    # An index numba wrote keeps its version and stamp: numba judges its own entries by
    # them (a stale stamp makes it see none), whatever its version's stamp is.
    if found is None:
        version, stamp, table = _numba_version(), source_stamp(source), {}
    else:
        version, stamp, table = found
    for k in [k for k in table if _ours(k, source) and k[2] != code]:
        name = table.pop(k)
        if not isinstance(name, str) or os.path.basename(name) != name or name != name.strip():
            continue  # only a file of this folder, by its plain name
        stale = folder / name
        if stale != entry and stale.suffix == store.SUFFIX:
            store._remove(stale)
    table[("cujit", source, code, key)] = entry.name
    from cujit.cache import pickledata

    try:
        data = pickledata.write(version) + pickledata.write((stamp, table))
        store.atomic_write(path, data)
    except (OSError, ValueError):
        pass
