"""Whether the hot loops run compiled, and their sources whenever the build is not current.

Installing nnrpsim (``pip install -e .``, which every make target runs) compiles with mypyc the
modules of the discrete-event model's event loop and of the lease engine's scalar paths (the
lease table, its eviction front, the replay on the table): an extension beside each source,
which Python imports before the source. An edit to a source does not reach its extension until
the next build, so a build that is not current would run old code without a word. The build
records a digest of each source it compiled (``BUILD_RECORD``); ``import nnrpsim`` compares
them before any of those modules loads, and if one differs, if the record is missing, or if
``NNRPSIM_INTERPRETED`` is set, all of them load from their sources (compiled modules call one
another directly: half a build is no build). Only an out-of-date build warns. An extension
of a module the recorded build did not compile (an earlier build's, which compiled more) cannot
load at all, its code not in the build's shared library: that module loads from its source,
the build's modules compiled.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

BUILD_RECORD = "compiled_sources.json"
"""Written by setup.py in the package: ``{"model/host.py": sha256 of the source compiled, ...}``."""
INTERPRETED_VARIABLE = "NNRPSIM_INTERPRETED"
PACKAGE_DIR = Path(__file__).resolve().parent


def source_digest(path: Path) -> str:
    """What the build record holds for a source: the SHA-256 of its bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extensions(directory: Path) -> list[str]:
    """The sources under ``directory`` that have an extension module beside them, as paths
    relative to it (``"model/host.py"``)."""
    return sorted(
        {  # (a file may end in several of the suffixes: ".abi3.so" and ".so")
            source.relative_to(directory).as_posix()
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            for path in directory.rglob(f"*{suffix}")
            if (source := path.with_name(f"{path.name.split('.')[0]}.py")).is_file()
        }
    )


def module_name(source: str) -> str:
    """The module a source of this package is: ``"model/host.py"`` -> ``nnrpsim.model.host``."""
    return f"{__package__}.{source[:-3].replace('/', '.')}"


def _record(directory: Path) -> dict[str, str] | None:
    record_path = directory / BUILD_RECORD
    return json.loads(record_path.read_text()) if record_path.is_file() else None


def out_of_date(directory: Path) -> list[str]:
    """The sources the recorded build compiled that changed since, or, without a record, every
    source with an extension: what makes the build not current."""
    record = _record(directory)
    if record is None:
        return extensions(directory)
    return [
        name
        for name in extensions(directory)
        if name in record and record[name] != source_digest(directory / name)
    ]


def left_behind(directory: Path) -> list[str]:
    """The sources with an extension that the recorded build did not compile: an earlier
    build's (which compiled more), whose module the build's shared library does not hold."""
    record = _record(directory)
    return [] if record is None else [name for name in extensions(directory) if name not in record]


class _FromSources(importlib.abc.MetaPathFinder):
    """Finds these modules' sources before the path finder finds their extensions."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = sources

    def find_spec(
        self, fullname: str, path: object, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        return None if source is None else importlib.util.spec_from_file_location(fullname, source)


def _choose() -> str:
    """Load every compiled module of this package from its source unless the build is current
    (and those it left behind, always); say which way it went."""
    compiled = extensions(PACKAGE_DIR)
    if not compiled:
        return "interpreted (not compiled)"
    if os.environ.get(INTERPRETED_VARIABLE):
        status = f"interpreted ({INTERPRETED_VARIABLE} is set)"
    else:
        changed = out_of_date(PACKAGE_DIR)
        if not changed:
            _load_from_sources(left_behind(PACKAGE_DIR))
            return "compiled"
        status = (
            f"interpreted ({', '.join(changed)} changed since the build)"
            if (PACKAGE_DIR / BUILD_RECORD).is_file()
            else "interpreted (no record of the build that left its extensions)"
        )
        warnings.warn(
            f"nnrpsim's model and lease table run {status}, 1.2-2 times slower: `make build` "
            "(or `pip install -e .`) compiles them again",
            RuntimeWarning,
            stacklevel=2,
        )
    _load_from_sources(compiled)
    return status


def _load_from_sources(sources: list[str]) -> None:
    if sources:
        finder = _FromSources({module_name(name): PACKAGE_DIR / name for name in sources})
        sys.meta_path.insert(0, finder)


STATUS = _choose()
"""``"compiled"``, or ``"interpreted (...)"`` with the reason."""
