"""bench/launch_bench.py's JIT floor without a GPU: the fresh-process script that compiles
FRESH's saxpy from its LLVM IR at the launch (``FRESH_JIT_FLOOR``) is a valid program,
its toolchain calls make the cubin cujit's own compile makes, and the name it gives the
kernel per process reaches the cubin."""

import ast
import re

import pytest


@pytest.fixture
def bench(repo_script):
    return repo_script("bench", "launch_bench")


@pytest.fixture
def floor(bench, tmp_path):
    script = bench.fresh_jit_floor_script(str(tmp_path))
    compile(script, "<jit floor>", "exec")  # a program
    # Everything before the warm-up thread starts defines the toolchain calls and
    # touches no device: run it here.
    head, sep, _ = script.partition("warm = threading.Thread(")
    assert sep
    ns: dict = {}
    exec(head, ns)  # noqa: S102 -- the bench's own script
    return script, ns


def test_the_script_compiles_the_ir_to_the_cubin_cujit_makes(bench, floor):
    script, ns = floor
    spec, _, _, _ = bench._fresh_floor_parts()
    path = ast.literal_eval(re.search(r'with open\((.*?), "rb"\)', script).group(1))
    with open(path, "rb") as fh:
        ir = fh.read()
    assert ir == spec.result.outputs["llvm"].encode()
    assert ns["cubin_of"](ir) == spec.result.cubin  # the same options as cujit's compile


def test_the_kernel_is_renamed_in_each_process(floor):
    script, ns = floor
    symbol = ast.literal_eval(re.search(r"symbol = (b'[^']*') \+ os.urandom", script).group(1))
    path = ast.literal_eval(re.search(r'with open\((.*?), "rb"\)', script).group(1))
    with open(path, "rb") as fh:
        ir = fh.read()
    renamed = ir.replace(b'@"' + symbol + b'"', b'@"' + symbol + b'0a1b2c3d"')
    assert renamed != ir  # the script's replacement finds the kernel's definition
    assert symbol + b"0a1b2c3d" in ns["cubin_of"](renamed)


def test_the_warm_up_kernel_is_cujits(floor):
    script, ns = floor
    tiny = ast.literal_eval(re.search(r"args=\((b'.*?'),\)\)", script, re.S).group(1))
    assert b"_tiny_kernel" in tiny
    assert ns["cubin_of"](tiny)


def test_fresh_rounds_option(bench, monkeypatch):
    # ``--fresh-rounds``: how many processes per tool the fresh-process part runs.
    monkeypatch.setattr(bench, "FRESH_ROUNDS", bench.FRESH_ROUNDS)  # restored afterwards
    bench.set_fresh_rounds(31)
    assert bench.FRESH_ROUNDS == 31
    with pytest.raises(SystemExit, match="at least 1"):
        bench.set_fresh_rounds(0)
    assert bench.FRESH_ROUNDS == 31
