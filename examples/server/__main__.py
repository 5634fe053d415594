"""Run the example server: ``python examples/server --dev-key`` (``--help`` for the options)."""

import sys
from pathlib import Path

if not __package__:  # run as a directory (python examples/server): make `server` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:
    from server.app import main
except ImportError as exc:  # a Python without the library or the MCP SDK: say how to get them
    print(
        f"example server: this Python lacks what the server needs ({exc.name or exc}). From the root of "
        "the clone: scripts/bootstrap mcp, then .venv/bin/python examples/server --dev-key "
        "(or, in an environment of your own: pip install './[mcp]')",
        file=sys.stderr,
    )
    sys.exit(2)

sys.exit(main())
