"""Kernels with ``assert`` for the robustness suites: outside the test modules, whose
asserts pytest rewrites into code no kernel can contain."""

from cujit import cuda


def d_assert_in_if(x):
    i = cuda.grid(1)
    if i == 3:
        assert False  # <-  # noqa: B011 -- the kernel under test asserts False on purpose
    x[i] = 1.0


def d_assert_message(x):
    i = cuda.grid(1)
    assert i < 2, "i too big"  # <-
