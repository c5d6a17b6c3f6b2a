"""Whether a message names one of cujit's own source files.

A user's checkout may well live under a folder called ``cujit`` (this repository
does), so an error that rightly names the user's file contains the word; what it
must not contain is a path to a file of the ``cujit`` package itself.
"""

from __future__ import annotations

import os

import cujit

PACKAGE_DIR = os.path.dirname(os.path.abspath(cujit.__file__))


def _own_files() -> tuple[str, ...]:
    """Every cujit source file, as ``cujit/sub/mod.py`` (the tail a traceback or a
    ``__file__`` would show), longest first."""
    root = os.path.dirname(PACKAGE_DIR)
    out = []
    for folder, _, files in os.walk(PACKAGE_DIR):
        for name in files:
            if name.endswith(".py"):
                out.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return tuple(sorted(out, key=len, reverse=True))


OWN_FILES = _own_files()


def internal_paths(text: str) -> list[str]:
    """The cujit source paths ``text`` names (the package folder, or any
    ``cujit/...py`` file of the package)."""
    found = [PACKAGE_DIR] if PACKAGE_DIR in text else []
    flat = text.replace("\\", "/")
    return found + [f for f in OWN_FILES if f in flat]
