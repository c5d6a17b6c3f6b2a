"""``numba.cuda.launchconfig``: the launch configuration of the compilation under way."""

from cujit.launchconfig import (  # noqa: F401
    capture_compile_config,
    current_launch_config,
    ensure_current_launch_config,
)
