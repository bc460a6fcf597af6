"""The files a study's runs read (traces, arrival logs), by content: each run reads its files
as it starts, in whichever process or machine runs it, so a file that changed since the study
began, or a cluster worker's copy that differs, would give it other input than its study's,
silently. A digest taken as the study begins goes with each run, which checks it."""

from __future__ import annotations

import functools
import hashlib
import os

from .scenario import ScenarioError


def file_digest(path: str) -> str:
    """The first 16 hex digits of the file's SHA-256, hashed once for each version of it."""
    version = os.stat(path)
    return _digest(path, version.st_mtime_ns, version.st_size)


@functools.lru_cache(maxsize=16)
def _digest(path: str, _mtime_ns: int, _size: int) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()[:16]


def changed_inputs(digests: dict[str, str]) -> list[tuple[str, str, str]]:
    """Each file of ``digests`` (by path, as :func:`~nnrpsim.workload_facts.input_digests` gives
    them) that no longer holds what it held then: its path, its digest then and now. A file
    that cannot be read is left to its reader, which names the scenario key."""
    changed = []
    for path, digest in digests.items():
        try:
            now = file_digest(path)
        except OSError:
            continue
        if now != digest:
            changed.append((path, digest, now))
    return changed


def check_inputs(digests: dict[str, str]) -> None:
    """Refuse a run whose files hold other content than its study read as it began."""
    if changed := changed_inputs(digests):
        path, then, now = changed[0]
        raise ScenarioError(
            path,
            f"holds other content than the study read as it began (content {then} then, {now} "
            "here): it changed since, or this worker's copy differs",
        )
