"""docs/guide/environment.md is the table tools/gen_knobs.py makes from config.KNOBS,
and no page of the guide names a CUJIT_* variable that config.py does not declare."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from cujit import config

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "guide" / "environment.md"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_knobs", ROOT / "tools" / "gen_knobs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_page_is_what_the_generator_writes():
    assert PAGE.read_text() == load_generator().render(), (
        "docs/guide/environment.md is stale: run PYTHONPATH=src python tools/gen_knobs.py"
    )


def test_every_declared_knob_has_its_row():
    text = PAGE.read_text()
    for knob in config.KNOBS:
        row = next(
            (line for line in text.splitlines() if line.startswith(f"| `{knob.name}` |")), None
        )
        assert row is not None, f"{knob.name} is missing from {PAGE.name}"
        assert knob.doc.replace("|", "\\|") in row


def test_knobs_are_all_in_the_tuple():
    declared = {v.name for v in vars(config).values() if isinstance(v, config.Knob)}
    assert declared == {k.name for k in config.KNOBS}


def test_the_guide_names_only_declared_knobs():
    names = {k.name for k in config.KNOBS}
    for page in sorted(PAGE.parent.glob("*.md")):
        for name in re.findall(r"CUJIT_[A-Z0-9_]+", page.read_text()):
            assert name in names, f"{page.name} names {name}, which config.py does not declare"


def test_generator_renders_a_new_knob(monkeypatch):
    """The table follows config.KNOBS: a knob added there gets its row, no other edit."""
    extra = config.Knob("CUJIT_EXAMPLE_LIMIT", int, 4, "an example | with a bar")
    monkeypatch.setattr(config, "KNOBS", (*config.KNOBS, extra))
    text = load_generator().render()
    assert "| `CUJIT_EXAMPLE_LIMIT` | integer | `4` | an example \\| with a bar |" in text
