"""``numba.cuda.args``: the argument hints ``In``/``Out``/``InOut`` and ``wrap_arg``."""

from cujit.arghints import ArgHint, In, InOut, Out, wrap_arg  # noqa: F401
