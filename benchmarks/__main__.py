"""Run benchmark groups, print a table, optionally write one flat JSON object of figures."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

GROUPS = ("protocol", "engine", "model", "sweep")
TARGETS = {
    "protocol.orb_decode_per_s": (">=", 50e6),
    "protocol.orb_decode_speedup_vs_struct": (">=", 100.0),
    "engine.lookup_refs_per_s": (">=", 5e6),
    "engine.expire_1m_ms": ("<=", 10.0),
    "engine.invalidate_namespace_1m_ms": ("<=", 10.0),
    "engine.bytes_per_lease": ("<=", 96.0),
    "engine.replay_ttl_evals_per_s": (">=", 20e6),
    "engine.replay_ttl_evals_per_s_non_reset": (">=", 20e6),
    "engine.lru_replay_vs_libcachesim": (">=", 0.25),
    "model.frames_per_s": (">=", 50_000.0),
    "model.events_ratio_vs_simpy": (">=", 0.5),
    "sweep.speedup_2_workers": (">=", 1.7),
    "sweep.runner_overhead_fraction": ("<", 0.05),
}
"""The issues' speed targets: the table says of each figure whether this run met it (a figure
is one run's, on a machine whose speed varies; nothing fails on it)."""


def _verdict(name: str, value: float) -> str:
    if name not in TARGETS:
        return ""
    op, target = TARGETS[name]
    met = {">=": value >= target, "<=": value <= target, "<": value < target}[op]
    return f"  target {op} {target:,.10g}: {'met' if met else 'NOT MET'}"


def _available() -> list[str]:
    here = Path(__file__).parent
    return [g for g in GROUPS if (here / f"{g}.py").exists()]


def main(argv: list[str] | None = None) -> int:
    available = _available()
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", choices=available, action="append", help="run only this group")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args(argv)
    figures: dict[str, float] = {}
    for group in args.only or available:
        module = importlib.import_module(f"benchmarks.{group}")
        print(f"running {group} ...", file=sys.stderr, flush=True)
        figures.update(module.run())
    width = max(map(len, figures), default=10)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:>16,.3f}{_verdict(name, value)}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
