"""The toolchain's part of the cache key, found without loading the toolchain.

Asking libNVVM and nvJitLink their versions means loading them, ~65 ms in a
fresh process (importing ``cuda.pathfinder`` alone is ~45 ms): several times
the budget of a whole cache hit.  So the identity is worked out when a compile
loads the toolchain anyway, and kept in a stamp file in the cache folder that
later processes reuse while nothing that picks the toolchain has changed.

A stamp is named after the inputs of the toolchain search: ``sys.prefix``, the
``sys.path`` entries, the site-packages folders' modification times (a
``pip install`` changes them), and the variables of
``config.TOOLCHAIN_ENV``.  It records the library versions and the path, size
and modification time of libNVVM, nvJitLink and libdevice; a stamp whose files
have changed since (an upgrade in place) is ignored and rewritten.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from cujit import config
from cujit.cache import trust
from cujit.cache.store import hasher

STAMP_PREFIX = "toolchain-"


def identity() -> str:
    """A digest of the toolchain this process uses (or will use) to compile."""
    path = Path(config.cache_dir()) / f"{STAMP_PREFIX}{_selection()[:24]}.json"
    shared = trust.shared(path.parent)
    usable = shared or trust.folder_refusal(path.parent) is None  # else no stamp is kept
    stamp = _read(path, shared) if usable else None
    if stamp is not None:
        return stamp["identity"]
    from cujit.cache.store import atomic_write
    from cujit.ptx import libdevice_path, toolchain_versions

    versions = toolchain_versions()  # loads libNVVM and nvJitLink
    files = [
        _file_id(p)
        for p in (versions["libnvvm_path"], versions["nvjitlink_path"], libdevice_path())
    ]
    versions = {k: v for k, v in versions.items() if not k.endswith("_path")}
    ident = hasher(json.dumps([versions, files], default=list).encode()).hexdigest()
    if not usable:
        return ident
    try:
        atomic_write(
            path,
            json.dumps(
                {"identity": ident, "versions": versions, "files": files}, default=list
            ).encode(),
        )
    except OSError:
        pass  # an unwritable cache folder: the identity is still right for this process
    return ident


def _selection() -> str:
    """A digest of what decides which toolchain the search finds."""
    h = hasher()
    h.update(f"{sys.prefix}\n{config.toolchain_environment()}\n".encode())
    for entry in sys.path:
        # Installing or upgrading a wheel changes its site-packages folder's mtime.
        # Other entries (the script's folder) change too often to follow.
        mtime = None
        if os.path.basename(entry) in ("site-packages", "dist-packages"):
            try:
                mtime = os.stat(entry).st_mtime_ns
            except OSError:
                pass
        h.update(f"{entry} {mtime}\n".encode())
    return h.hexdigest()


def _file_id(path: str) -> list:
    real = os.path.realpath(path)
    st = os.stat(real)
    return [real, st.st_size, st.st_mtime_ns]


def _read(path: Path, shared: bool = False) -> dict | None:
    """The stamp at ``path`` if it is whole, to be trusted (``trust.read``) and its
    files are unchanged."""
    try:
        data = trust.read(path, shared)
        if data is None:
            return None
        stamp = json.loads(data)
        for real, size, mtime in stamp["files"]:
            st = os.stat(real)
            if (st.st_size, st.st_mtime_ns) != (size, mtime):
                return None
        if not isinstance(stamp["identity"], str):
            return None
        return stamp
    except (OSError, ValueError, KeyError, TypeError, trust.Refused):
        return None
