"""Why a path the user gave cannot be read, in words. pathlib's ``is_file`` answers False for a
missing file but raises for a name the system refuses (longer than it allows, say): both are
bad input, said in one line naming the path, never a traceback. An empty name, which pathlib
reads as the current folder, is bad input too; and a folder to write in that the system refuses
leaves none of the folders made on the way to it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from itertools import takewhile
from pathlib import Path

from .scenario import ScenarioError

NO_SUCH_FILE = "no such file"


def file_problem(path: Path) -> str | None:
    """None for a regular file; otherwise why it is none: :data:`NO_SUCH_FILE`, "a folder, not
    a file", "not a regular file" (a device, a pipe: ``/dev/zero`` was said to be missing), or
    the system's reason ("File name too long")."""
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return "a folder, not a file"
        return "not a regular file" if path.exists() else NO_SUCH_FILE
    except OSError as err:
        return err.strerror or type(err).__name__


def is_folder(path: Path) -> bool:
    """``path.is_dir()``, but False for a name the system refuses, where ``is_dir`` raises:
    whatever then reads or writes it as a file says why (:func:`file_problem`)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def make_folders(folders: Iterable[Path]) -> list[Path]:
    """``folder.mkdir(parents=True, exist_ok=True)`` for each, but a failure removes the folders
    this call made before it raises: ``--out o/<a name too long>`` left an empty ``o``.
    Returns the folders it made, the outermost first."""
    made: list[Path] = []
    try:
        for folder in folders:
            missing = list(takewhile(lambda path: not is_folder(path), (folder, *folder.parents)))
            for path in reversed(missing):
                try:
                    path.mkdir()
                except FileExistsError:
                    if not is_folder(path):
                        raise
                    continue  # (another process made it meanwhile: not this call's)
                made.append(path)
    except OSError:
        _remove_folders(made)
        raise
    return made


def check_folder_can_be_made(folder: Path) -> None:
    """Make ``folder`` and the folders on the way to it, then remove those again; raises the
    system's :class:`OSError` where one cannot be made. A check before a long run: whether
    ``o/new/<a name too long>`` can be made shows only once ``new`` exists."""
    _remove_folders(make_folders([folder]))


def _remove_folders(made: list[Path]) -> None:
    """Remove the folders :func:`make_folders` made, the innermost first."""
    for path in reversed(made):
        with contextlib.suppress(OSError):  # (no longer empty: another process wrote in it)
            path.rmdir()


def given_path(value: str | os.PathLike[str], field: str) -> Path:
    """``Path(value)``, refusing an empty string, which pathlib reads as the current folder:
    ``--out "$UNSET"`` wrote a study's files among whatever was where the command ran."""
    if isinstance(value, str) and not value:
        raise ScenarioError(field, "must not be empty")
    return Path(value)
