"""Hot loops pause the cyclic GC and leave it as they found it, even when they raise."""

from __future__ import annotations

import gc

import pytest

from nnrpsim.gc_pause import cyclic_gc_paused


@pytest.mark.parametrize("enabled", [True, False])
def test_the_gc_is_paused_inside_and_restored_after(enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with pytest.raises(RuntimeError), cyclic_gc_paused():
            assert not gc.isenabled()
            raise RuntimeError("a loop that fails")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
