"""Reading tokens, key files and JSON; writing private key files safely.

Every failure here is the operator's input, not a bug, so it becomes a
:class:`CliError`: one line on standard error, exit status 2, no traceback. No
message holds file contents (a key file's text is a secret), only the file's name
and what is wrong with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import Any, Final

from mrtr_state.cli._text import shown
from mrtr_state.errors import KeyringError
from mrtr_state.keys._key_file import read_key_file
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE, Key, Keyring

__all__ = [
    "MAX_INPUT_BYTES",
    "STDIO",
    "CliError",
    "load_ring",
    "parse_json",
    "read_text",
    "read_token",
    "write_private",
]

#: The most this tool reads from a file or standard input: far more than any key
#: file or token, little enough that a wrong file (a disk image, /dev/zero) is refused.
MAX_INPUT_BYTES: Final = 1 << 20

#: The name that means standard input (or output) instead of a file.
STDIO: Final = "-"


class CliError(Exception):
    """Bad input or a usage mistake: reported as one line on standard error, exit status 2."""


def read_text(source: str, *, what: str) -> str:
    """The UTF-8 text of a key file, or of standard input for ``-``; ``what`` names it in messages.

    A file is read as :class:`~mrtr_state.keys.reloading.ReloadingKeyring` reads one: a
    regular file only, and not one that anyone may write.
    """
    if source == STDIO:
        name = "standard input"
        if sys.stdin is None:  # started with file descriptor 0 closed
            raise CliError(f"cannot read the {what} from standard input: it is closed")
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        name = shown(source)
        if os.path.isdir(source):  # the reader refuses it too; this says it plainly
            raise CliError(f"cannot read the {what} {name}: it is a directory")
        try:
            # The library's key file reader: a regular file only (a FIFO is refused, never
            # waited on), and never one that anyone may write.
            data, _mode = read_key_file(source, max_bytes=MAX_INPUT_BYTES + 1)
        except FileNotFoundError:
            raise CliError(f"cannot read the {what} {name}: no such file") from None
        except PermissionError:
            raise CliError(f"cannot read the {what} {name}: permission denied") from None
        except OSError as exc:
            raise CliError(f"cannot read the {what} {name}: {exc.strerror or type(exc).__name__}") from None
        except KeyringError as exc:
            raise CliError(f"cannot read the {what} {name}: {exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise CliError(f"the {what} {name} is larger than {MAX_INPUT_BYTES >> 20} MiB; is it the right file?")
    try:
        # utf-8-sig: a byte order mark written by an editor is not the operator's mistake.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CliError(f"the {what} {name} is not UTF-8 text") from None


def read_token(argument: str) -> str:
    """The token given on the command line, or read from standard input for ``-``."""
    text = read_text(STDIO, what="token") if argument == STDIO else argument
    # A token has no white space; around it there often is (a newline from echo or a paste).
    return text.strip()


def parse_json(text: str, *, what: str) -> Any:
    """Parse JSON text; the message says where it breaks, never what the text holds."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise CliError(f"{what} is JSON nested too deeply to read") from None
    except ValueError:
        # Python refuses to convert an integer literal of more than sys.get_int_max_str_digits()
        # digits (4300 by default); no key, token or argument needs one.
        raise CliError(
            f"{what} holds an integer literal too long to read (more than "
            f"{sys.get_int_max_str_digits()} digits)"
        ) from None


def load_ring(source: str | None, *, environ: Mapping[str, str] | None = None) -> Keyring:
    """The key ring in a file (``-`` for standard input), or in ``MRTR_STATE_KEYS`` for ``None``.

    A file holds a JWKS, as ``mrtr-state keygen`` writes it, or a single JWK. The
    environment variable takes everything :meth:`Keyring.from_env` does.
    """
    if source is None:
        env = os.environ if environ is None else environ
        try:
            return Keyring.from_env(DEFAULT_KEYS_VARIABLE, environ=env)
        except KeyringError as exc:
            if not env.get(DEFAULT_KEYS_VARIABLE, "").strip():
                raise CliError(f"no key file given, and {exc}") from None
            raise CliError(f"the keys in {DEFAULT_KEYS_VARIABLE} cannot be used: {exc}") from None
    name = "standard input" if source == STDIO else shown(source)
    text = read_text(source, what="key file")
    document = parse_json(text, what=f"the key file {name}")  # says where bad JSON breaks
    try:
        # The text, not the parsed document, goes to the core: it reads key material
        # strictly (no duplicate members, bounded nesting), as it does for the variable.
        if isinstance(document, dict) and "keys" not in document and "kty" in document:
            return Keyring([Key.from_jwk(text)])
        return Keyring.from_jwks(text)
    except KeyringError as exc:
        raise CliError(f"the key file {name} cannot be used: {exc}") from None


def write_private(path: str, text: str, *, force: bool) -> None:
    """Write ``text`` (a secret) to ``path`` with mode 0600, never readable by others for a moment.

    A new file is created with ``O_EXCL`` and mode 0600 from its first instant. With
    ``force``, the text goes to a 0600 temporary file in the same directory that
    then replaces ``path`` in one rename, so readers see the old file or the new
    one, never a part. Without ``force`` an existing ``path`` is refused.
    """
    name = shown(path)
    if os.path.isdir(path):
        raise CliError(f"cannot write {name}: it is a directory")
    if force:
        _replace(path, text, name)
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        # O_CREAT | O_EXCL also refuses a symbolic link, even a dangling one.
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise CliError(f"{name} exists; give --force to replace it") from None
    except OSError as exc:
        raise CliError(f"cannot write {name}: {exc.strerror or type(exc).__name__}") from None
    try:
        _write_all(fd, text)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)  # ours: O_EXCL created it a moment ago
        raise CliError(f"cannot write {name}: {exc.strerror or type(exc).__name__}") from None


def _replace(path: str, text: str, name: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        # mkstemp creates the file with mode 0600 and O_EXCL.
        fd, temporary = tempfile.mkstemp(prefix=".mrtr-state-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise CliError(f"cannot write {name}: {exc.strerror or type(exc).__name__}") from None
    try:
        _write_all(fd, text)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise CliError(f"cannot write {name}: {exc.strerror or type(exc).__name__}") from None


def _write_all(fd: int, text: str) -> None:
    """Write, set mode 0600 exactly (a umask may have taken bits away), flush to disk, close."""
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        if hasattr(os, "fchmod"):
            os.fchmod(file.fileno(), 0o600)
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
