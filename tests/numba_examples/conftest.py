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
    for name in _TARGET_NAMES:
        monkeypatch.delitem(namespace, name, raising=False)
    return request.param
