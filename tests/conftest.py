"""Test configuration: the ``gpu`` marker skips cleanly where no GPU is present."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # tests import the shared kernel set


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
