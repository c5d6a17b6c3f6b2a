"""tools/front_end_shares.py reads py-spy's raw stacks into stage and library shares."""

import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def _tool():
    path = os.path.join(HERE, "..", "tools", "front_end_shares.py")
    spec = importlib.util.spec_from_file_location("front_end_shares", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_samples_are_counted_by_stage_and_library(tmp_path):
    ck = "<module> (loop.py:9);compile_kernel (cujit/pipeline.py:391)"
    lines = [
        f"{ck};decode (cujit/bytecode/decode.py:372);get_instructions (dis.py:338) 5",
        f"{ck};decode (cujit/bytecode/decode.py:380) 2",
        f"{ck};lower_kernel (cujit/pipeline.py:284);call (llvmlite/ir/builder.py:881) 7",
        f"{ck};module_texts (cujit/codegen/module.py:160);__repr__ (llvmlite/ir/module.py:243) 3",
        f"{ck};__exit__ (contextlib.py:141) 1",
        "<module> (loop.py:3);_find_and_load (<frozen importlib._bootstrap>:1176) 40",
    ]
    raw = tmp_path / "samples.raw"
    raw.write_text("\n".join(lines) + "\n")
    total, stage, library = _tool().shares(str(raw))
    assert total == 18  # the import's samples are outside compile_kernel
    assert stage == {"bytecode": 7, "llvm: lowering": 7, "llvm: printing": 3, "other": 1}
    assert library == {"dis": 5, "llvmlite": 10}
