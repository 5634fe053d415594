"""Build hook: ship the profile's vectors inside the package, as ``mrtr_state/_vectors/``.

The vectors stay where every implementation's tests read them (``spec/vectors/``); the
wheel gets a copy, so ``mrtr-state conformance`` runs from an installed wheel without a
clone. The sdist carries ``spec/vectors/`` (MANIFEST.in), so a wheel built from the sdist
gets the same copy. Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

VECTORS = Path(__file__).resolve().parent / "spec" / "vectors"


class BuildWithVectors(build_py):
    """``build_py`` that also copies ``spec/vectors/*.json`` to ``mrtr_state/_vectors/``."""

    def run(self) -> None:
        """Build the package, then add the vectors (not in an editable install: it reads the clone's)."""
        super().run()
        if getattr(self, "editable_mode", False):
            return
        files = sorted(VECTORS.glob("*.json"))
        if not files:
            raise SystemExit(f"setup.py: no vectors in {VECTORS} (the sdist must carry spec/vectors)")
        target = Path(self.build_lib) / "mrtr_state" / "_vectors"
        target.mkdir(parents=True, exist_ok=True)
        for file in files:
            shutil.copyfile(file, target / file.name)


setup(cmdclass={"build_py": BuildWithVectors})
