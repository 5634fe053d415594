"""The suite's rule for missing tools: a test that needs one skips locally and fails under CI=true."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

#: Whether this is a CI run (``CI`` is 1, true or yes, in any case): then no test may skip for a missing tool.
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_tool(message: str) -> NoReturn:
    """Skip the calling test (or test module, when called at import) with ``message``, which names what is
    missing; under CI=true, fail it instead."""
    if IN_CI:
        pytest.fail(f"{message} (CI=true: a missing tool is a failure)")
    pytest.skip(message, allow_module_level=True)
