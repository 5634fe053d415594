"""Seed the fuzz corpora from spec/vectors.

Every vector token goes into corpus/open, and every JSON text a token carries (header, claims) and every
arguments text into corpus/strict_reader.

Run from rust/fuzz before the first ``cargo +nightly fuzz run`` (rust/README.md, "Fuzzing"); standard
library only.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
VECTORS = HERE.parents[1] / "spec" / "vectors"


def _decoded(segment: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except ValueError:
        return None


def _write(folder: Path, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha256(data).hexdigest()[:16]).write_bytes(data)


def main() -> None:
    """Write the seeds (files named by their content's digest, so a second run adds nothing)."""
    for name in ("tokens.json", "encrypted.json"):
        for vector in json.loads((VECTORS / name).read_text(encoding="utf-8"))["vectors"]:
            token = vector["token"]
            _write(HERE / "corpus" / "open", token.encode())
            segments = token.split(".")
            for segment in segments[:2] if len(segments) == 3 else segments[:1]:
                text = _decoded(segment)
                if text is not None:
                    _write(HERE / "corpus" / "strict_reader", text)
    for vector in json.loads((VECTORS / "arguments.json").read_text(encoding="utf-8"))["vectors"]:
        text = vector.get("arguments_text") or json.dumps(vector.get("arguments"))
        _write(HERE / "corpus" / "strict_reader", text.encode())


if __name__ == "__main__":
    main()
