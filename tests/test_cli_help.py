"""``cujit --help`` is plain text, and the demo's last words point to the guide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cujit import cli

ROOT = Path(__file__).resolve().parent.parent


def help_text(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        cli.main([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [(), ("demo",), ("explain",), ("cache",)], ids=["cujit", "demo", "explain", "cache"]
)
def test_help_has_no_markup(capsys, argv):
    text = help_text(capsys, *argv)
    assert text.startswith("usage: cujit")
    for markup in ("``", ":func:", ":class:", ".. "):
        assert markup not in text, (markup, text)


def test_help_lists_the_commands_and_points_to_the_guide(capsys):
    text = help_text(capsys)
    assert "cujit on the command line." in text
    assert re.search(r"python -m cujit demo +compile and run an embedded saxpy", text)
    assert text.rstrip().endswith("The user guide: docs/guide/ in cujit's source.")


def test_next_steps_name_what_exists():
    assert "docs/guide/" in cli.NEXT_STEPS and (ROOT / "docs" / "guide" / "README.md").exists()
    assert "python -m cujit explain FILE.py:KERNEL --sig" in cli.NEXT_STEPS
    assert "CUJIT_TARGET=cpu" in cli.NEXT_STEPS
