"""Test configuration: the ``gpu`` marker skips cleanly where no GPU is present."""

from __future__ import annotations

import importlib
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests import the shared kernel set


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def repo_script(monkeypatch):
    """``repo_script("tools", "first_compile_time")``: a script of the repository's
    ``tools/`` or ``bench/`` imported as a module, its folder on ``sys.path`` for the
    test (``sys.path`` as it was afterwards, entries the script added too)."""

    def load(folder: str, name: str):
        monkeypatch.syspath_prepend(os.path.join(REPO, folder))
        return importlib.import_module(name)

    return load


def has_gpu() -> bool:
    try:
        from cujit.runtime import context

        return context.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
