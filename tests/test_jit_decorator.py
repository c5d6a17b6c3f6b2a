"""``@cuda.jit`` (``cujit.decorator``): the bound decorator ``cujit.dispatcher`` exports,
and numba's config warnings pointing at the user's decorator line."""

from __future__ import annotations

import warnings

import pytest

from cujit import cuda, dispatcher
from cujit.diagnostics import NumbaInvalidConfigWarning


def test_dispatcher_exports_the_decorator_cuda_uses():
    assert dispatcher.jit is cuda.jit
    assert isinstance(cuda.jit(lambda a: None), dispatcher.Kernel)
    assert not isinstance(cuda.jit(device=True)(lambda a: a), dispatcher.Kernel)


def test_declared_signature_is_parsed_at_the_decorator():
    with pytest.raises(Exception) as info:
        cuda.jit("void(notatype[:])")
    assert "notatype" in str(info.value)


@pytest.mark.parametrize("options", [dict(opt=True), dict(), dict(lineinfo=True, opt=False)])
def test_config_warning_names_the_users_line(options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cuda.jit(debug=True, **options)(lambda a: None)
        line = _line() - 1
    found = [w for w in caught if issubclass(w.category, NumbaInvalidConfigWarning)]
    assert len(found) == 1
    assert found[0].filename == __file__ and found[0].lineno == line


def _line() -> int:
    import sys

    return sys._getframe(1).f_lineno
