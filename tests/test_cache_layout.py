"""Where ``cache=True`` kernels' entries go (``cujit.cache.layout``): numba's layout, the
``__pycache__`` beside the source with one index file per kernel, the per-user folder as
the fallback, stale entries removed when a kernel's code changes; and ``kernel.stats``."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap

import pytest

from cujit.types import float32, int32

KERNEL = """
from cujit import cuda

@cuda.jit(cache=True)
def bump(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        a[i] += {step}
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A fresh import of a module holding one cache=True kernel (``step`` in its code)."""
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("CUJIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    src = tmp_path / "src"
    src.mkdir()
    monkeypatch.syspath_prepend(str(src))
    name = f"cache_layout_fodder_{os.getpid()}"

    def load(step: int = 1):
        (src / f"{name}.py").write_text(textwrap.dedent(KERNEL.format(step=step)))
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield load, src / "__pycache__", tmp_path / "user"
    sys.modules.pop(name, None)


def _files(folder):
    if not folder.is_dir():
        return [], []
    names = sorted(n for n in os.listdir(folder) if not n.endswith(".pyc"))
    return [n for n in names if n.endswith(".nbi")], [n for n in names if n.endswith(".cujit")]


def test_entries_and_one_index_beside_the_source(module):
    load, pycache, user = module
    k = load().bump
    k.compile((float32[:],))
    index, entries = _files(pycache)
    assert len(index) == 1 and len(entries) == 1
    assert index[0].endswith(f".bump-4.py{sys.version_info[0]}{sys.version_info[1]}.nbi")
    k.compile((int32[:],))
    index2, entries2 = _files(pycache)
    assert index2 == index and len(entries2) == 2 and entries[0] in entries2
    assert not user.exists() or _files(user) == ([], [])


def test_stats_count_misses_then_hits_in_a_new_import(module):
    load, pycache, _ = module
    k = load().bump
    k.compile((float32[:],))
    k.compile((int32[:],))
    assert sum(k.stats.cache_hits.values()) == 0 and sum(k.stats.cache_misses.values()) == 2
    assert k.stats.cache_path == str(pycache.resolve())
    again = load().bump
    assert again is not k
    again.compile((int32[:],))
    assert dict(again.stats.cache_hits) == {(int32[:],): 1}
    assert sum(again.stats.cache_misses.values()) == 0


def test_changed_code_removes_the_old_entries(module):
    load, pycache, _ = module
    load(step=1).bump.compile((float32[:],))
    (old,) = _files(pycache)[1]
    load(step=2).bump.compile((float32[:],))
    index, entries = _files(pycache)
    assert len(index) == 1 and len(entries) == 1 and entries[0] != old


def test_unwritable_pycache_falls_back_to_the_user_folder(module):
    load, pycache, user = module
    pycache.mkdir()
    pycache.chmod(0o500)
    try:
        if os.access(pycache, os.W_OK):
            pytest.skip("this user can write a read-only folder (root)")
        load().bump.compile((float32[:],))
        assert _files(pycache) == ([], [])
        assert len(_files(user / "cujit")[1]) == 1
    finally:
        pycache.chmod(0o700)


def test_cache_dir_variable_puts_entries_there(module, tmp_path, monkeypatch):
    load, pycache, _ = module
    chosen = tmp_path / "chosen"
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(chosen))
    load().bump.compile((float32[:],))
    assert len(_files(chosen)[1]) == 1 and _files(pycache) == ([], [])
