"""docs/dask.md shows examples/dask_stencil.py whole, as it is (the file a test runs)."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_dask_doc_includes_the_example_as_it_is():
    with open(os.path.join(ROOT, "examples", "dask_stencil.py")) as f:
        example = f.read()
    with open(os.path.join(ROOT, "docs", "dask.md")) as f:
        doc = f.read()
    assert len(example) > 1000
    assert "```python\n" + example + "```\n" in doc
