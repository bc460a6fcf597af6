"""Build nnrpsim, compiling the discrete-event model's event loop with mypyc.

The modules below are where a run of the model spends its own time (a frame's decisions, the
link, the server, the operation window, the records, the cache policy, the auditor, and the
simulation whose attributes they all read). Compiled, the default scenario runs about 1.5 times
as many frames a second; their sources stay the reference, type-checked by the same
compile. ``NNRPSIM_COMPILE=0`` builds without compiling (pure Python, same results; extensions
an earlier build left in the tree still run while their sources are unchanged, and `make clean`
removes them). Each build records a digest of what it compiled, so that an edited source is
never shadowed by an old extension (see nnrpsim/model/compiled.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

MODEL = Path("nnrpsim/model")
COMPILED = [
    *("host.py", "link.py", "server.py", "window.py", "records.py"),
    *("decisions.py", "policies.py", "auditor.py"),  # what the host and server call per frame
    "simulation.py",  # the run's wiring, which every host and server reads attributes of
]
RECORD = "compiled_sources.json"  # nnrpsim.model.compiled.BUILD_RECORD


class RecordingBuildExt(build_ext):
    """Compiles, then records the digests of the sources compiled beside their extensions. A
    build that fails leaves no record, so no extension it left behind is taken as current."""

    def run(self) -> None:
        if not self.extensions:
            return super().run()
        # all in nnrpsim/model: in the tree (an editable install) or in the wheel's build
        record = Path(self.get_ext_fullpath(self.extensions[0].name)).parent / RECORD
        record.unlink(missing_ok=True)
        super().run()
        record.write_text(json.dumps(DIGESTS, indent=1))


def compiled_extensions() -> tuple[list, dict[str, str]]:
    """mypyc's extensions, and the digests of the sources it read: it generates their C here,
    when ``setup.py`` runs; the build compiles that C later."""
    if os.environ.get("NNRPSIM_COMPILE", "1") == "0":
        return [], {}
    from mypyc.build import mypycify

    digests = {name: hashlib.sha256((MODEL / name).read_bytes()).hexdigest() for name in COMPILED}
    sources = [str(MODEL / name) for name in COMPILED]
    return mypycify(sources, opt_level="3", group_name="nnrpsim.model.native"), digests


EXTENSIONS, DIGESTS = compiled_extensions()
setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": RecordingBuildExt})
