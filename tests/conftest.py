"""Shared test fixtures: where ../shared lives, and a few helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NNRPSIM_SHARED", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared folder not found at {SHARED} (set NNRPSIM_SHARED)")
    return SHARED


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
