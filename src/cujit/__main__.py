"""``python -m cujit``: see cujit.cli."""

import sys

from cujit.cli import main

sys.exit(main())
