"""numba's config by numba's names (``cujit.numba_config``): the performance and config
warnings it turns on, ``jit``'s defaults it supplies, and the compile dumps
(``cujit.dumps``) it asks for."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cujit import cuda, dumps, numba_config
from cujit.bytecode import decode
from cujit.cfg import build_cfg
from cujit.diagnostics import NumbaInvalidConfigWarning, NumbaPerformanceWarning
from cujit.types import float64


@pytest.fixture
def setting(monkeypatch):
    """Set numba config values on cujit's module for one test."""

    def put(name, value):
        monkeypatch.setattr(numba_config, name, value)

    return put


def add_one(a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        b[i] = a[i] + 1.5


def looped(a, n):
    total = 0.0
    for i in range(n):
        if i % 2:
            total += i
    a[0] = total


def _performance(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, NumbaPerformanceWarning)]


def test_low_occupancy_warning_follows_the_config(setting):
    k = cuda.jit(target="cpu")(add_one)
    assert _performance(lambda: k[2, 4]) == []
    setting("CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    found = _performance(lambda: k[3, 4])
    assert len(found) == 1 and "Grid size 3" in str(found[0].message)
    assert _performance(lambda: k[256, 4]) == []  # enough blocks


def test_host_array_warning_follows_the_config(setting):
    from cujit.targets.cpu import memory  # the CPU target's device arrays

    k = cuda.jit(target="cpu")(add_one)
    a = np.arange(8, dtype=np.float64)
    b = np.full(8, -7.0)
    assert _performance(lambda: k[1, 8](a, b)) == []
    setting("CUDA_WARN_ON_IMPLICIT_COPY", 1)
    found = _performance(lambda: k[1, 8](a, b))
    assert len(found) == 1 and "Host array" in str(found[0].message)
    np.testing.assert_array_equal(b, a + 1.5)
    da, db = memory.to_device(a), memory.to_device(b)
    assert _performance(lambda: k[1, 8](da, db)) == []  # device arrays: no copy


def _config_warnings(**options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.jit(**options)
    return [w for w in caught if issubclass(w.category, NumbaInvalidConfigWarning)]


def test_debug_with_default_opt_warns_unless_opt_is_off(setting):
    assert len(_config_warnings(debug=True)) == 1
    assert _config_warnings(debug=True, opt=False) == []
    setting("OPT", 0)
    assert _config_warnings(debug=True) == []


def test_debuginfo_default_is_jits_debug(setting):
    setting("CUDA_DEBUGINFO_DEFAULT", 1)
    setting("OPT", 0)
    k = cuda.jit(target="cpu")(add_one)
    assert k._base_options.debug
    assert not cuda.jit(debug=False, target="cpu")(add_one)._base_options.debug


def test_opt_zero_in_the_config_compiles_unoptimised(setting):
    setting("OPT", 0)
    assert cuda.jit(target="cpu")(add_one)._base_options.opt == 0
    assert cuda.jit(opt=True, target="cpu")(add_one)._base_options.opt == 3


def test_dominators_of_a_loop():
    cfg = build_cfg(decode(looped))
    dom = dumps.dominators(cfg)
    entry = cfg.blocks[0].id
    for block in cfg.blocks:
        assert entry in dom[block.id] and block.id in dom[block.id]
        # a block's dominators dominate each other in a chain: its immediate one
        # is dominated by all the others
        for d in dom[block.id]:
            assert dom[d] <= dom[block.id]
    header = next(b for b in cfg.blocks if b.loop_header)
    body = [b for b in cfg.blocks if header.id in b.preds and b.id != header.id]
    assert body and all(header.id in dom[b.id] for b in body)


@pytest.mark.parametrize(
    "name,present",
    [
        ("DUMP_BYTECODE", "BINARY_OP(arg="),
        ("DUMP_CFG", "CFG dominators"),
        ("DUMP_IR", "const(float, 1.5)"),
        ("DUMP_LLVM", "LLVM DUMP add_one"),
        ("DUMP_ASSEMBLY", "ASSEMBLY add_one"),
    ],
)
def test_each_dump_prints_only_its_stage(setting, capsys, name, present):
    setting(name, 1)
    cuda.jit((float64[:], float64[:]), target="cpu")(add_one)
    out = capsys.readouterr()
    assert present in out.out and out.err == ""
    others = {"BYTECODE DUMP", "CFG DUMP", "IR DUMP", "LLVM DUMP", "ASSEMBLY"}
    mine = {h for h in others if h in out.out}
    assert len(mine) == 1


def test_no_dump_unless_asked(capsys):
    cuda.jit((float64[:], float64[:]), target="cpu")(add_one)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("target", ["cuda", "cpu"])
def test_cuda_dumps_show_the_kernel_annotation_and_nvvms_ptx(setting, capsys, target):
    # on the CPU target too: its dumps, as its inspection, show the kernel's CUDA code
    setting("DUMP_LLVM", 1)
    setting("DUMP_ASSEMBLY", 1)
    cuda.jit((float64[:], float64[:]), target=target)(add_one)
    out = capsys.readouterr().out
    assert '!"kernel", i32 1' in out
    assert "Generated by NVIDIA NVVM Compiler" in out
    assert out.index("LLVM DUMP") < out.index("ASSEMBLY add_one")


def test_the_drop_in_serves_this_module_as_numbas_config():
    from cujit.numba_drop_in import cuda_module

    assert cuda_module("numba.cuda.core.config") is numba_config


def test_followed_module_supplies_the_values(monkeypatch):
    import types

    other = types.SimpleNamespace(CUDA_LOW_OCCUPANCY_WARNINGS=1, DUMP_IR=1)
    monkeypatch.setattr(numba_config, "_FOLLOWED", [])
    numba_config.follow(other)
    assert numba_config.get("CUDA_LOW_OCCUPANCY_WARNINGS") == 1
    assert numba_config.dumps() == frozenset({"ir"})
    assert numba_config.get("OPT") == numba_config.OPT  # not in it: cujit's own
    other.DUMP_IR = 0  # read at each use, as numba's config is
    assert numba_config.dumps() == frozenset()
