"""The pure layers stay pure: protocol and engine import neither simpy nor pandas."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["nnrpsim.protocol", "nnrpsim.engine", "nnrpsim.engine.replay"])
def test_pure_layer_imports(package):
    code = (
        f"import sys, {package}; "
        "bad = sorted({'simpy', 'pandas', 'matplotlib', 'libcachesim'} & set(sys.modules)); "
        "print(','.join(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""
