"""``python -m mrtr_state``: the ``mrtr-state`` command line."""

import sys

from mrtr_state.cli import main

sys.exit(main())
