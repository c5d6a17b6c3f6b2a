"""Cache faults, stale values: every kind of value a kernel freezes, changed between
processes.  A process compiles each kernel through the cache; the files change; a
second process must miss and compile the new value; a third must hit and still
see the new value.  A value with no sound key makes the kernel uncacheable, with
a warning that says why (``cache_fault_files`` writes the project)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import cache_fault_files as files

TESTS = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(TESTS), "src")


def _child(project, cache, names) -> dict:
    env = dict(
        os.environ,
        CUJIT_CACHE_DIR=str(cache),
        CUJIT_TARGET="cuda",
        PYTHONPATH=os.pathsep.join([SRC, str(project), TESTS]),
        PYTHONDONTWRITEBYTECODE="1",
    )
    proc = subprocess.run(
        [sys.executable, "-c", files.CHILD, ",".join(names)],
        env=env,
        capture_output=True,
        text=True,
        cwd=project,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_kind_of_global_changed_between_processes(tmp_path):
    project, cache = tmp_path / "project", tmp_path / "cache"
    project.mkdir()
    files.write(project, "A")
    first = _child(project, cache, files.KERNELS)
    for name in files.KERNELS:
        assert first[name] == [False, True, False], (name, first[name])  # a miss, value A
    files.write(project, "B")
    second = _child(project, cache, files.KERNELS)
    stale = [n for n in files.KERNELS if second[n] != [False, False, True]]
    assert not stale, {n: second[n] for n in stale}  # each missed and compiled value B
    third = _child(project, cache, files.KERNELS)
    for name in files.KERNELS:
        assert third[name] == [True, False, True], (name, third[name])  # a hit, value B
    assert first["warnings"] == second["warnings"] == third["warnings"] == []


def test_a_value_without_a_sound_key_is_uncacheable_with_a_reason(tmp_path):
    project, cache = tmp_path / "project", tmp_path / "cache"
    project.mkdir()
    files.write(project, "A")
    first = _child(project, cache, ["k_opaque"])
    assert first["k_opaque"] == [False, True, False]
    (warning,) = first["warnings"]
    assert "k_opaque" in warning and "without the disk cache" in warning
    assert "Opaque" in warning and "address" in warning
    assert not [p for p in cache.iterdir() if p.suffix == ".cujit"] if cache.exists() else True
    files.write(project, "B")
    assert _child(project, cache, ["k_opaque"])["k_opaque"] == [False, False, True]
