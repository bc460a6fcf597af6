"""What a results folder's manifest records: the study's scenario, warm-ups, inputs and how it
ended, read back by the commands that work on a finished study."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .paths import NO_SUCH_FILE, file_problem, given_path, is_folder
from .renumbering import MOVING
from .scenario import ScenarioError, ScenarioLike


def _manifest_of(folder: Path) -> dict[str, Any]:
    """A results folder's manifest as far as it can be read (empty where it cannot: what the
    plots read of it, they do without)."""
    try:
        document = json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def recorded_warmup_ms(folder: Path) -> float:
    """The warm-up the study's points share, as its manifest records them (before
    ``warmup: auto``, the study's one), or 0 where they differ or it cannot tell: the plots
    that shade it are drawn all the same."""
    manifest = _manifest_of(folder)
    try:
        warmups = manifest.get("point_warmups_ms") or [manifest["scenario"]["study"]["warmup"]]
        return float(warmups[0]) if len(set(warmups)) == 1 else 0.0
    except (ValueError, KeyError, TypeError):
        return 0.0


def auto_warmups_ms(folder: Path) -> list[float]:
    """Each point's warm-up, by point, where the study's is ``auto`` (else none)."""
    manifest = _manifest_of(folder)
    try:
        auto = manifest["scenario"]["study"]["warmup"] == "auto"
        return [float(ms) for ms in manifest["point_warmups_ms"]] if auto else []
    except (KeyError, TypeError, ValueError):  # (a damaged manifest: nothing to say)
        return []


def recorded_scenario(folder: Path, purpose: str) -> dict[str, Any]:
    """The resolved scenario a results folder's manifest records, or a :class:`ScenarioError`
    naming the manifest and why it gives none: missing, unreadable (a damaged file), or
    recording no scenario. ``purpose`` says what it was wanted for (``to run again``)."""
    manifest = Path(folder) / "manifest.json"
    if problem := file_problem(manifest):  # (missing, or a folder)
        hint = ": not a results folder?" if problem == NO_SUCH_FILE else ""
        raise ScenarioError(str(manifest), f"{problem}{hint}")
    try:
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or err
        raise ScenarioError(str(manifest), f"cannot be read ({reason})") from None
    scenario = document.get("scenario") if isinstance(document, dict) else None
    if not isinstance(scenario, dict):
        raise ScenarioError(str(manifest), f"records no scenario {purpose}")
    return scenario


def study_of(scenario: ScenarioLike, purpose: str) -> tuple[ScenarioLike, Path | None]:
    """``scenario`` as given, or where it names a results folder, the scenario the folder's
    manifest records (:func:`recorded_scenario`, for ``purpose``) and the folder: so a
    command takes the study of a folder whatever its file has become since."""
    if isinstance(scenario, str | os.PathLike):
        folder = given_path(scenario, "scenario")
        if is_folder(folder):
            return recorded_scenario(folder, purpose), folder
    return scenario, None


def recorded_inputs(folder: Path) -> dict[str, str]:
    """The digest of each trace and log a study read, by path, as its manifest records them
    (:func:`~nnrpsim.workload_facts.input_digests`; none where it records none)."""
    inputs = _manifest_of(folder).get("inputs")
    return inputs if isinstance(inputs, dict) else {}


COMPLETE = "complete"
"""A study's status once every run it set out to run is written."""
INTERRUPTED = "interrupted (rerun with --resume)"
"""A study's status while it runs (its runs, or a move of them) and once it stopped early."""


def recorded_status(folder: Path) -> str | None:
    """How the study ended, as its manifest records it (``complete``, or how it was
    interrupted); None if it cannot tell."""
    status = _manifest_of(folder).get("status")
    return status if isinstance(status, str) else None


def unfinished_study_note(folder: Path) -> str | None:
    """What to say beside the plots of a study its manifest records as not complete (they
    show its finished runs only); None for a complete study, or one that cannot tell."""
    if (status := recorded_status(folder)) in (None, COMPLETE):
        return None
    return f"{folder}: study {status}; the plots show its finished runs only"


def moving_runs_recorded(folder: Path) -> bool:
    """Whether the folder's manifest journals a move of its runs that a stopped resume left
    (the next resume finishes it first: :func:`~nnrpsim.renumbering.finish_move`)."""
    return MOVING in _manifest_of(folder)
