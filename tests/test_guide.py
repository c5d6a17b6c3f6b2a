"""Every example in docs/guide/ runs, and prints what its page shows.

A page's fenced ```python blocks run in order in one subprocess (a namespace shared, as
a reader pasting them one after another would have), with CUJIT_TARGET=cpu and a
timeout; an ```output block right after a python block is what that block must print
(its file shows as ``example.py``).  Blocks fenced ```python gpu need a GPU: they run
in the gpu-marked test, on the CUDA target, with every other block of the page (the
CPU examples must hold on the GPU too) except those fenced ```python cpu (a kernel's
print(), whose GPU output arrives at a later synchronisation, out of order with the
page's); ``needs=cupy`` names modules whose absence skips the block.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
PAGES = sorted(GUIDE.glob("*.md"))
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)
MARK = "\x00-- end of block --\x00"

# Run in the subprocess: each block compiled as "example.py" with its source in
# linecache (so errors show its lines), its stdout between markers.
RUNNER = r"""
import json, linecache, sys, traceback
blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
for source, needs in blocks:
    try:
        for name in needs:
            __import__(name)
    except ImportError as exc:
        print(f"skipped: {exc}")
    else:
        linecache.cache["example.py"] = (len(source), None, source.splitlines(True), "example.py")
        exec(compile(source, "example.py", "exec"), namespace)
    sys.stdout.flush()
    print(MARK, flush=True)
""".replace("MARK", repr(MARK))


@dataclass
class Block:
    source: str
    gpu: bool  # needs a GPU: run by the gpu test only
    cpu: bool  # holds on the CPU target only: not run by the gpu test
    needs: tuple[str, ...]
    output: str | None  # what the block prints, where the page shows it
    line: int


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text()
    found: list[Block] = []
    for m in FENCE.finditer(text):
        info, body = m.group(1).split(), m.group(2)
        if not info:
            continue
        if info[0] == "output":
            assert found and found[-1].output is None, f"{page.name}: output without code"
            found[-1].output = body
        elif info[0] == "python":
            needs = tuple(
                n for word in info[1:] if word.startswith("needs=") for n in word[6:].split(",")
            )
            found.append(
                Block(
                    body,
                    "gpu" in info[1:],
                    "cpu" in info[1:],
                    needs,
                    None,
                    text.count("\n", 0, m.start()) + 1,
                )
            )
    return found


def run_blocks(page: Path, blocks: list[Block], env: dict, timeout: int = 240) -> list[str]:
    payload = json.dumps([(b.source, list(b.needs)) for b in blocks])
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=payload,
        text=True,
        check=False,
        capture_output=True,
        env=env,
        cwd=str(GUIDE),
        timeout=timeout,
    )
    outputs = proc.stdout.split(MARK + "\n")
    assert proc.returncode == 0, (
        f"{page.name}: block {len(outputs)} (of {len(blocks)}, "
        f"line {blocks[min(len(outputs), len(blocks)) - 1].line}) "
        f"failed:\n{proc.stderr[-4000:]}"
    )
    return outputs[: len(blocks)]


def child_env(target: str | None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    for name in [n for n in env if n.startswith("CUJIT_")]:
        del env[name]  # the page's examples run under the defaults they describe
    if target:
        env["CUJIT_TARGET"] = target
    return env


def check(page: Path, gpu: bool) -> None:
    blocks = [b for b in blocks_of(page) if (not b.cpu if gpu else not b.gpu)]
    if not blocks:
        pytest.skip(f"{page.name} has no examples for the {'GPU' if gpu else 'CPU'}")
    outputs = run_blocks(page, blocks, child_env(None if gpu else "cpu"))
    for block, printed in zip(blocks, outputs, strict=True):
        if block.output is not None and not printed.startswith("skipped: "):
            assert printed == block.output, (
                f"{page.name}:{block.line}: printed\n{printed}"
                f"\nwhere the page shows\n{block.output}"
            )


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_examples_on_the_cpu_target(page):
    check(page, gpu=False)


@pytest.mark.gpu
@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_examples_on_the_gpu(page):
    check(page, gpu=True)


def test_the_guide_has_examples_that_check_their_output():
    blocks = [b for p in PAGES for b in blocks_of(p)]
    assert len(PAGES) >= 9 and len([b for b in blocks if b.output is not None]) >= 15


def test_every_link_between_pages_resolves():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).resolve().exists(), f"{page.name} -> {target}"
