"""Started in the child processes of numba-cuda's tests under tools/numba_suite.py (the
worker puts this folder first on their PYTHONPATH): gives them the worker's routing and
reports cujit's compiles and launches to the worker (tools/numba_suite_routing.py)."""

import os
import sys

if os.environ.get("CUJIT_SUITE_CHILD_EVENTS"):
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import numba_suite_routing

    numba_suite_routing.install_in_child()
