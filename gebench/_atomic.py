"""Atomic file writes for files other processes may read or write at the same time (dump and report folders).

Each write goes to a temporary file with a name no other writer uses (``.<name>.<pid>.<random>.part``, hidden, in
the target's directory) and is renamed over the target in one step, so a reader sees the old file or the new one,
never a half-written one, and several processes writing into one folder never share a temporary file. Two
writers of the *same* target name leave one complete version (the last rename wins).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["copy_file_atomically", "temporary_name", "write_bytes_atomically", "write_chunks_atomically",
           "write_text_atomically"]

_log = logging.getLogger(__name__)


def temporary_name(path: Path) -> Path:
    """A fresh temporary path next to ``path``: ``.<name>.<pid>.<random hex>.part``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.part")


def _open_exclusive(tmp: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    return os.open(tmp, flags, 0o666)  # the umask applies, as for a file opened with open(path, "w")


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[tuple[Path, int]]:
    """Yield a fresh temporary file next to ``path`` (its name and an open descriptor the block must close or
    hand to ``open``) and rename it over ``path`` when the block ends; when the block (or the rename) raises, the
    temporary file is removed and ``path`` keeps its previous content."""
    tmp = temporary_name(path)
    fd = _open_exclusive(tmp)
    try:
        yield tmp, fd
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` through a uniquely named temporary file and a rename.

    The str is written through a text-mode file (no encoded copy of the whole text is held in memory).

    Raises:
        OSError: the directory is missing or not writable, the disk is full, ... The temporary file is removed
            (also when the write is interrupted) and ``path`` keeps its previous content.
    """
    path = Path(path)
    write_chunks_atomically(path, (text,), encoding=encoding)
    return path


def write_chunks_atomically(path: Path, chunks: Iterable[str], *, encoding: str = "utf-8",
                            link: Path | None = None) -> bool:
    """Write the strs of ``chunks`` one after the other to ``path`` through a uniquely named temporary file and a
    rename, never holding the whole text.

    ``link``: also hard-link the finished file as ``link`` (a name of the caller's, for copies of the file made
    later). Returns whether that link was made: a file system without hard links makes none, which is not an
    error.

    Raises:
        OSError: as :func:`write_text_atomically`. Errors raised by ``chunks`` propagate. The temporary file (and
            the link) are removed and ``path`` keeps its previous content.
    """
    linked = False
    try:
        with _replacing(path) as (tmp, fd):
            with open(fd, "w", encoding=encoding, newline="") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            if link is not None:
                try:
                    os.link(tmp, link)
                    linked = True
                except OSError as exc:
                    _log.debug("no hard link %s to %s (%s)", link, path, exc)
    except BaseException:
        if linked and link is not None:
            link.unlink(missing_ok=True)
        raise
    return linked


def write_bytes_atomically(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a uniquely named temporary file and a rename.

    Raises:
        OSError: as :func:`write_text_atomically`; ``path`` keeps its previous content.
    """
    path = Path(path)
    with _replacing(path) as (_, fd), open(fd, "wb") as fh:
        fh.write(data)
    return path


def copy_file_atomically(source: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """Copy the file ``source`` to ``path`` through a uniquely named temporary file and a rename. The bytes are
    copied by the operating system where it can (``shutil.copyfile``: ``sendfile`` on Linux), not through Python.

    Raises:
        OSError: ``source`` cannot be read, or as :func:`write_text_atomically`; ``path`` keeps its previous
            content.
    """
    path = Path(path)
    with _replacing(path) as (tmp, fd):
        os.close(fd)  # the name is ours alone; copyfile then writes into it
        shutil.copyfile(source, tmp)
    return path
