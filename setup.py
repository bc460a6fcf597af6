"""Build nnrpsim, compiling the discrete-event model's event loop and the lease engine's scalar
paths with mypyc.

The modules below are where a run spends its own time: of the model, a frame's decisions, the
link, the server, the operation window, the records, the cache policy, the auditor, and the
simulation whose attributes they all read; of the engine, the lease table's one-at-a-time
resolves and installs, its eviction front, its index of owners' slots, and the replay on the
table with the host rules and frame bookkeeping it shares with the ordered replay. Compiled,
the default scenario runs 1.9-2.5 times as many frames a second and the replay on the table
about twice as many references;
their sources stay the reference, type-checked by the same compile. ``NNRPSIM_COMPILE=0``
builds without compiling (pure Python, same results; extensions an earlier build left in the
tree still run while their sources are unchanged, and `make clean` removes them). Each build
records a digest of what it compiled, so that an edited source is never shadowed by an old
extension (see nnrpsim/compiled.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

PACKAGE = Path("nnrpsim")
COMPILED = [  # (relative to the package, as nnrpsim.compiled names them)
    *("model/host.py", "model/link.py", "model/server.py", "model/window.py"),
    # what the host and server call per frame
    *("model/records.py", "model/decisions.py", "model/policies.py", "model/auditor.py"),
    "model/held_memory.py",  # what a server integrates at each PUT burst
    "model/simulation.py",  # the run's wiring, which every host and server reads attributes of
    # the lease table, which a server calls per reference, and the replay on it (the ordered
    # replay's loop, on dicts and lists, runs no faster compiled)
    *("engine/table.py", "engine/owner_index.py", "engine/eviction.py"),
    *("engine/replay/on_table.py", "engine/replay/frame.py", "engine/replay/host_rules.py"),
    "engine/replay/bursts.py",  # which of the leases a PUT frees its host is told of
]
RECORD = "compiled_sources.json"  # nnrpsim.compiled.BUILD_RECORD


class RecordingBuildExt(build_ext):
    """Compiles, then records the digests of the sources compiled, in the package. A
    build that fails leaves no record, so no extension it left behind is taken as current."""

    def run(self) -> None:
        if not self.extensions:
            return super().run()
        # in the package: in the tree (an editable install) or in the wheel's build
        package_dir = Path(self.get_ext_fullpath(f"{PACKAGE.name}.any_module")).parent
        record = package_dir / RECORD
        record.unlink(missing_ok=True)
        super().run()
        record.write_text(json.dumps(DIGESTS, indent=1))


def compiled_extensions() -> tuple[list, dict[str, str]]:
    """mypyc's extensions, and the digests of the sources it read: it generates their C here,
    when ``setup.py`` runs; the build compiles that C later."""
    if os.environ.get("NNRPSIM_COMPILE", "1") == "0":
        return [], {}
    from mypyc.build import mypycify

    digests = {name: hashlib.sha256((PACKAGE / name).read_bytes()).hexdigest() for name in COMPILED}
    sources = [str(PACKAGE / name) for name in COMPILED]
    # one group (its shared library is nnrpsim/native__mypyc): the model's calls into the table
    # are direct; in nnrpsim, not nnrpsim.model, so that loading it never imports the model.
    # No debug information (gcc -g0, where mypyc's default is -g1): the same machine code, and
    # the group's one C file of 8 MB compiles in three quarters of the time
    extensions = mypycify(sources, opt_level="3", debug_level="0", group_name="nnrpsim.native")
    return extensions, digests


EXTENSIONS, DIGESTS = compiled_extensions()
setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": RecordingBuildExt})
