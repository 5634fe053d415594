"""Run the example server: ``python examples/server --dev-key`` (``--help`` for the options)."""

import sys
from pathlib import Path

if not __package__:  # run as a directory (python examples/server): make `server` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server.app import main

sys.exit(main())
