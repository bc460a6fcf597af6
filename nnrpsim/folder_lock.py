"""One study at a time in a results folder: a second study started on a folder that one is
writing would mix its runs in (or, resumed with other sweep values, move them under it), so
it is refused while the first holds the folder's lock; and ``nnrpsim plot`` holds it too, as it
redraws the plots a study draws as it ends. The system releases the lock when the process
ends, however it ends (a killed study leaves none behind)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .scenario import ScenarioError

try:
    import fcntl
except ImportError:  # (Windows has no flock: there, nothing stops a second study)
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".nnrpsim-lock"
"""The file in a results folder whose lock a study holds (empty, and left there: removing a
file another process may be about to lock would let two hold a lock each)."""


STUDY_WAITS = "wait for it to end, or choose another --out"
"""What a study refused a folder another run holds is told to do."""


@contextmanager
def folder_held(folder: Path, key: str = "--out", then: str = STUDY_WAITS) -> Iterator[None]:
    """Hold ``folder``'s lock for the block, or refuse at once where another run holds it,
    naming ``key`` (what gave the folder) and what to do ``then``."""
    try:
        lock = open(folder / LOCK_FILE, "a")  # noqa: SIM115 (closed below, after the block)
    except OSError as err:
        raise ScenarioError(key, f"cannot write in {folder}: {err.strerror}") from None
    with lock:
        if fcntl is not None:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ScenarioError(
                    key, f"{folder} is being written by another nnrpsim run: {then}"
                ) from None
        yield
