"""tools/ci_shards.py, which splits the suite for .ci/run: every file pytest collects is in
exactly one shard, the shards' times are about equal, and the totals add up."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
ci_shards = importlib.import_module("ci_shards")  # tools/ is no package


def test_the_files_are_those_pytest_collects(tmp_path):
    (tmp_path / "tests" / "sub").mkdir(parents=True)
    (tmp_path / "tests" / "__pycache__").mkdir()
    for name in (
        "test_a.py",
        "b_test.py",
        "helpers.py",
        "conftest.py",
        "sub/test_c.py",
        "__pycache__/test_d.py",
    ):
        (tmp_path / "tests" / name).write_text("")
    assert ci_shards.test_files(str(tmp_path)) == [
        "tests/b_test.py",
        "tests/sub/test_c.py",
        "tests/test_a.py",
    ]


def test_every_file_is_in_exactly_one_shard_and_the_times_are_even():
    files = [f"tests/test_{k}.py" for k in range(40)]
    seconds = {f"tests/test_{k}.py": float(k) for k in range(0, 40, 2)}  # half unknown
    for n in (1, 3, 4, 7):
        parts = ci_shards.shards(files, seconds, n)
        assert len(parts) == n
        together = [f for _, names in parts for f in names]
        assert sorted(together) == sorted(files)  # each once
        times = [sum(seconds.get(f, ci_shards.DEFAULT_S) for f in names) for _, names in parts]
        assert [t for t, _ in parts] == times
        # Longest first into the least loaded: no shard exceeds another by more than the
        # longest single file.
        assert max(times) - min(times) <= max(seconds.values())


def test_the_real_suite_is_split_whole():
    files = ci_shards.test_files()
    assert "tests/test_ci_shards.py" in files and len(files) > 100
    parts = ci_shards.shards(files, ci_shards.read_durations(), 4)
    assert sorted(f for _, names in parts for f in names) == files


def test_an_empty_shard_is_refused_rather_than_given_to_pytest_as_no_file():
    n = len(ci_shards.test_files()) + 1
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "ci_shards.py"), str(n), str(n)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "has no file" in proc.stderr


def test_totals_add_the_last_lines_of_the_shards(tmp_path):
    one, two = tmp_path / "1.log", tmp_path / "2.log"
    one.write_text("....\n12 passed, 3 skipped, 4 deselected, 1 warning in 10.50s\n")
    # the interpreter's exit may print after pytest's summary (a ResourceWarning naming a
    # file's mode and number): the summary is still the line read
    two.write_text(
        "F.\n1 failed, 20 passed, 2 deselected in 61.25s (0:01:01)\n"
        "sys:1: ResourceWarning: unclosed file <_io.TextIOWrapper name=12 mode='w'>\n"
    )
    line = ci_shards.totals([str(one), str(two)])
    assert line == ("32 passed, 3 skipped, 6 deselected, 1 warning, 1 failed in 72 s over 2 shards")


def test_record_sums_each_files_phases_and_read_durations_reads_them_back(tmp_path):
    log = tmp_path / "durations.log"
    log.write_text(
        "============ slowest durations ============\n"
        "3.50s call     tests/test_a.py::test_one[1]\n"
        "0.25s setup    tests/test_a.py::test_one[1]\n"
        "1.00s call     tests/sub/test_b.py::TestX::test_two\n"
        "0.00s teardown tests/test_a.py::test_one[1]\n"
        "12 passed in 5.00s\n"
    )
    out = tmp_path / "durations.txt"
    assert ci_shards.record([str(log)], str(out)) == 2
    assert ci_shards.read_durations(str(out)) == {
        "tests/test_a.py": 3.75,
        "tests/sub/test_b.py": 1.0,
    }
