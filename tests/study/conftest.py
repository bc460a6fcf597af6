"""Small scenarios for the study tests (seconds, not minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SMALL = {
    "study": {"name": "small", "seed": 4, "replications": 2, "duration": "40s", "warmup": "5s"},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "20s"}, "operations": {"rate_per_s": 1}},
    "sweep": {
        "grid": {
            "host_policy.ttl_fraction": [0.1, 0.5],
            "workload.invalidations.rate_per_s": [0, 0.02],
        }
    },
}


@pytest.fixture
def small_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(SMALL))
    return path


def write_yaml(folder: Path, document: dict | str, name: str = "s.yaml") -> Path:
    path = folder / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path
