"""What every fuzz target shares: seeding the corpus and starting libFuzzer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import atheris


def run(
    name: str, test_one_input: Callable[[bytes], None], seed_files: Callable[[], dict[str, bytes]]
) -> None:
    """Run libFuzzer on ``test_one_input``; the first corpus directory is seeded when empty.

    Without a corpus argument, ``fuzz/corpus/<name>`` is used. A file argument is an
    input to replay (a crash), not a corpus.
    """
    corpora = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    if not corpora:
        corpora = [str(Path(__file__).resolve().parent / "corpus" / name)]
        sys.argv.append(corpora[0])
    corpus = Path(corpora[0])
    if not corpus.is_file():
        corpus.mkdir(parents=True, exist_ok=True)
    if corpus.is_dir() and not any(corpus.iterdir()):
        for seed_name, seed in seed_files().items():
            (corpus / seed_name).write_bytes(seed)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
