"""A kernel whose compile marks itself launch-config sensitive (numba's
``mark_launch_config_sensitive()``, here from a library's intrinsic that bakes the
launch's block size into the code) gets one specialisation per launch configuration,
in-process and in the disk cache (numba's ``.lcs`` marker beside the index; entries
keyed by the configuration)."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap

import numpy as np
import pytest

from cujit import cuda, float64, launchconfig

FODDER = """
from llvmlite import ir as llir

from cujit import cuda, launchconfig, types
from cujit.cuda.extending import intrinsic


@intrinsic
def block_size(typingctx):
    def codegen(context, builder, sig, args):
        cfg = launchconfig.ensure_current_launch_config()
        cfg.dispatcher.mark_launch_config_sensitive()
        return llir.Constant(llir.IntType(64), cfg.blockdim[0])

    return types.int64(), codegen


@cuda.jit(cache=True, target="{target}")
def sized(out):
    if cuda.threadIdx.x == 0:
        out[0] = block_size() + 0.5
"""


@pytest.fixture
def fodder(tmp_path, monkeypatch):
    """``load(target)``: a fresh import of a module with a sensitive kernel."""
    for name in ("CUJIT_CACHE_DIR", "CUJIT_CACHE", "CUJIT_CACHE_KEY_GLOBALS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"lcs_fodder_{os.getpid()}"

    def load(target: str):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(FODDER.format(target=target)))
        sys.modules.pop(name, None)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield load, tmp_path / "__pycache__"
    sys.modules.pop(name, None)


def _files(folder) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(n for n in os.listdir(folder) if not n.endswith(".pyc"))


def test_each_launch_configuration_compiles_its_own_code(fodder):
    load, _ = fodder
    k = load("cpu").sized
    for block, again in ((32, 1), (64, 2), (32, 3), (128, 4), (64, 5)):
        out = np.full(1, np.nan)
        k[1, block](out)
        assert out[0] == block + 0.5, (block, again)  # not the first launch's size
    assert set(k._launch_config_specializations) == {
        ((1, 1, 1), (64, 1, 1), 0),
        ((1, 1, 1), (128, 1, 1), 0),
    }
    (spec,) = k.overloads.values()
    assert spec.launch_config_sensitive
    assert k._lc_default == ((1, 1, 1), (32, 1, 1), 0)


def test_an_insensitive_kernel_keeps_one_specialisation():
    @cuda.jit(target="cpu")
    def plain(out):
        out[0] = cuda.blockDim.x + 0.5

    for block in (32, 64):
        out = np.full(1, np.nan)
        plain[1, block](out)
        assert out[0] == block + 0.5
    assert plain._launch_config_specializations == {} and plain._lc_default is None


def _compile_for(kernel, block):
    """A launch's compile, without the launch (no GPU here): the configuration current."""
    cfg = kernel[1, block]
    key = launchconfig.config_key(cfg)
    target = (
        kernel
        if key == kernel._lc_default or kernel._lc_default is None
        else (kernel._launch_config_kernel(key))
    )
    return target, target._compile_launching((np.zeros(1),), cfg)


def test_disk_cache_keys_a_sensitive_kernel_by_configuration(fodder):
    load, pycache = fodder
    mod = load("cuda")
    owner, spec = _compile_for(mod.sized, 32)
    files = _files(pycache)
    assert sum(f.endswith(".lcs") for f in files) == 1 and len(files) == 3  # index, entry
    assert "i64 32" in str(spec.result.outputs["llvm"])
    _compile_for(mod.sized, 64)
    assert len(_files(pycache)) == 4
    again = load("cuda")
    first, spec32 = _compile_for(again.sized, 32)
    assert first is again.sized and sum(again.sized.stats.cache_hits.values()) == 1
    assert spec32.launch_config_sensitive and again.sized._lc_default is not None
    sub, spec64 = _compile_for(again.sized, 64)
    assert sub is not again.sized and sum(sub.stats.cache_hits.values()) == 1
    assert sum(sub.stats.cache_misses.values()) == 0 and len(_files(pycache)) == 4
    assert "i64 64" in str(spec64.result.outputs["llvm"])
    assert "i64 32" in str(spec32.result.outputs["llvm"])


def test_a_marked_kernel_compiled_with_no_launch_misses(fodder):
    load, pycache = fodder
    _compile_for(load("cuda").sized, 32)
    later = load("cuda").sized
    with pytest.raises(Exception, match="No launch config set"):
        later.compile((float64[::1],))  # the marker: keyed by "no launch config", compiled
