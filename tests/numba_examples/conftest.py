"""The ``target`` fixture of the numba.cuda conformance suite (this folder): it picks the
target through ``CUJIT_TARGET`` and makes ``cujit.cuda`` resolve its host names again
(it keeps the first ones it resolves), so the same code runs on either target."""

from __future__ import annotations

import pytest

from cujit import cuda
from cujit.cuda import _CPU_NAMES

# numba.cuda's host names that cujit.cuda resolves per target (its ``_CPU_NAMES``).
_TARGET_NAMES = tuple(_CPU_NAMES)  # the names whose home depends on CUJIT_TARGET


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def target(request, monkeypatch):
    monkeypatch.setenv("CUJIT_TARGET", request.param)
    namespace = vars(cuda)
    before = {name: namespace.pop(name) for name in _TARGET_NAMES if name in namespace}
    yield request.param
    # Forget what this target resolved, so later tests (in any file) resolve afresh.
    for name in _TARGET_NAMES:
        namespace.pop(name, None)
    namespace.update(before)
