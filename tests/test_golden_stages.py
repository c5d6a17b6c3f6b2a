"""Stages 4-6 print exactly their reviewed golden output (tools/update_golden_stages.py
regenerates it; review the diff)."""

from __future__ import annotations

import golden_stages as gs
import pytest


@pytest.mark.parametrize("name", gs.KERNELS)
@pytest.mark.parametrize("stage", gs.STAGES)
def test_stage_golden(name, stage):
    expected = gs.path(name, stage).read_text()
    assert gs.render(name)[stage] == expected, (
        f"{gs.path(name, stage)} is stale: run tools/update_golden_stages.py and review"
    )
