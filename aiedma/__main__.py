"""``python -m aiedma`` is the ``aiedma`` command."""

import sys

from .cli import main

sys.exit(main())
