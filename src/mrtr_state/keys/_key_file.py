"""The one reader of key files: :class:`~mrtr_state.keys.reloading.ReloadingKeyring` and the command line.

A key file holds secrets, and whoever may write it may put in a key of their own
and mint tokens every replica accepts. So a key file is read only if it is a
regular file (a FIFO, a device, a socket or a directory at the path is refused
at once: the file is opened without blocking, so a FIFO with no writer never
holds the reader waiting), and not if anyone may write it (unless the caller
allows it). ``docs/operations.md`` says why. What the bytes mean, and how a file
that others may read is reported, is the caller's business.
"""

from __future__ import annotations

import os
import stat

from mrtr_state.errors import KeyringError

__all__ = ["read_key_file"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_key_file(
    path: str, *, max_bytes: int, allow_world_writable: bool = False, how_to_allow: str | None = None
) -> tuple[bytes, int]:
    """At most ``max_bytes`` bytes of the key file at ``path``, and its permission bits.

    Read one byte more than you accept, to see that a file is too large.
    ``how_to_allow`` ends the refusal of a file anyone may write (for example
    ``"pass allow_world_writable=True"``); without it the refusal names only the fix.

    Raises:
        OSError: the file cannot be opened or read (its ``strerror`` says why).
        KeyringError: it is not a regular file, or anyone may write it and that
            is not allowed; the message names the rule, never the contents.
    """
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyringError(
                f"it is not a regular file ({_kind(st.st_mode)}): give the path of the key file"
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & stat.S_IWOTH and not allow_world_writable and os.name != "nt":
            override = f", or {how_to_allow}" if how_to_allow else ""
            raise KeyringError(
                f"anyone may write it (mode {mode:04o}): make it 0600 (chmod 600 FILE){override}"
            )
        chunks: list[bytes] = []
        size = 0
        while size < max_bytes:
            chunk = os.read(fd, max_bytes - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), mode


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"
