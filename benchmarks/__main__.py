"""Run benchmark groups, print a table, optionally write one flat JSON object of figures."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

GROUPS = ("protocol", "engine", "model", "sweep")


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
        print(f"{name:<{width}}  {value:>16,.3f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
