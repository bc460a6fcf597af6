"""One run of a study with its records kept: what became of every reference, each operation's
latency, the memory over time, every CACHE_ACK's accepted TTL.

A study reduces each run to a row of metrics. To see why a point's numbers are what they are
(which objects miss, when, and for what cause; how latency is spread; how the memory climbs),
:func:`run_records` runs one of its runs again, the same run (its seeds are the study's), and
hands its records over as pandas frames.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .display_units import counted, described
from .input_files import changed_inputs
from .metrics import METRICS, des_metrics, wire_saving
from .model import ModelResult, simulate
from .model.records import InstallCause, RefOutcome
from .model.workload import WorkloadPlan
from .paths import given_path, make_folders
from .protocol import CacheObjectKind
from .quoted import quoted
from .recorded import recorded_inputs, study_of
from .results import among, check_out_folder, study_mark, study_output
from .run_files import atomic_write
from .run_progress import progress_bar, setup_shown
from .scenario import ScenarioError, ScenarioLike, load_scenario, scenario_hash, sweep_points
from .tasks import Task, run_inputs
from .validation import ADVICE

OUTCOMES = pd.CategoricalDtype([outcome.name.lower() for outcome in RefOutcome])
"""What became of a reference: ``hit``, a server's cache error (each followed by an inline
resubmission), or the host sent the body (``inlined_by_policy``, ``installed``, ...)."""
CAUSES = pd.CategoricalDtype([cause.name.lower() for cause in InstallCause])
"""Why a host sent an object's body again: ``none`` for a reference that did not."""
KINDS = pd.CategoricalDtype([kind.name.lower() for kind in CacheObjectKind])
RECORD_TABLES = ("references", "operations", "memory", "memory_by_kind", "accepted_ttl_ms")
"""The frames :meth:`RunRecords.write` writes, each as ``<name>.parquet``, besides ``run.json``."""
RECORD_FILES = (*(f"{name}.parquet" for name in RECORD_TABLES), "run.json")
BAR = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"
"""A run's bar: the share of its simulated time done (tqdm's default counts it as 0.37/1)."""


@dataclass(frozen=True, eq=False)  # (compared as objects: a field-wise == of frames raises)
class RunRecords:
    """One DES run's records; ``after_warmup`` marks the rows its metrics count."""

    scenario_hash: str
    """The scenario's digest, as a study's ``manifest.json`` records it: with ``point`` and
    ``replication``, which run these records are."""
    point: int
    replication: int
    params: dict[str, Any]
    """The point's swept values, in base units (ms, bytes), as ``runs.parquet`` has them."""
    metrics: dict[str, float]
    """The run's metrics: the numbers of its row in the study's ``runs.parquet``."""
    references: pd.DataFrame
    """A row per object reference of a completed operation: ``time_ms`` (its operation's
    start), ``session``, ``host`` (the session's), ``server``, ``object``, ``kind``, ``size``
    (bytes), ``outcome`` (:data:`OUTCOMES`), ``cause`` (:data:`CAUSES`), ``after_warmup``."""
    operations: pd.DataFrame
    """A row per completed operation: ``start_ms``, ``latency_ms`` (submit to its last reply),
    ``fallback`` (a reference drew a cache error and went again inline), ``session``,
    ``host``, ``after_warmup``."""
    memory: pd.DataFrame
    """Per sample and server: the run's rows of ``timeseries.parquet`` (``time_ms``,
    ``server``, ``live_bytes``, ``held_bytes``, ``mean_held_bytes``: held on average since the
    sample before, ``objects``, ``link_load``, ``server_load``)."""
    memory_by_kind: pd.DataFrame
    """Per sample, server and object kind it holds: ``time_ms``, ``server``, ``kind``,
    ``held_bytes``, ``mean_held_bytes`` (as :attr:`memory`'s, which they add up to; a kind a
    server holds nothing of, then or since the sample before, has no row)."""
    accepted_ttl_ms: pd.Series
    """Each CACHE_ACK's accepted_ttl_ms, refusals included, in the order sent (the whole run)."""
    invalidations: pd.Series
    """CACHE_INVALIDATE notices by reason (the whole run)."""
    wire_bytes: pd.Series
    """Bytes sent by class (the whole run): ``inline`` object blocks, CACHE_PUT bodies
    (``put_body``), 24-byte references (``reference``), the cache's own frames
    (``cache_control``: PUT, ACK, INVALIDATE and ERROR headers, fallback resubmissions) and
    everything else (``control``); resends over a lossy link are not in it."""
    counters: dict[str, int]
    """The whole run's ``installs``, ``renewals``, ``refused_puts``, ``evictions``,
    ``operations_waited``, ``reinstalls_after_expiry``, ``hot_path_frames`` (FRAME_SUBMITs),
    ``retransmissions`` and ``wire_bytes_resent`` (their bytes: what the links sent, less
    these, is the sum of :attr:`wire_bytes`)."""
    audit: dict[str, int]
    """The invariant auditor's counts (the whole run): its violations must be 0 (hits on an
    expired lease, a wrong version or stale content, a reference after an invalidation, an
    operation never completed); ``fallbacks`` counts the inline resubmissions after a cache
    error, ``fallbacks_completed`` those that completed."""
    setup_warnings: list[str]
    """What ``nnrpsim validate`` warns of the run's point (``point 3: ...``): a key its
    settings make inert, a fault out of sight, a TTL the server replaces, a warm-up too short;
    run from a results folder, each trace or log that changed since its study read it."""

    @property
    def title(self) -> str:
        """Which run and how much it did: ``point 3 (ttl_fraction = 0.1), replication 0:
        34,640 operations and 127,791 references``."""
        swept = f" ({described(list(self.params), self.params.values())})" if self.params else ""
        return (
            f"point {self.point}{swept}, replication {self.replication}: "
            f"{counted(len(self.operations), 'operation')} and "
            f"{counted(len(self.references), 'reference')}"
        )

    def __repr__(self) -> str:
        """One line (what a notebook shows for the records), not every row of every frame."""
        return f"<RunRecords {self.title}; hit_rate {self.metrics['hit_rate']:.4f}>"

    def outcomes(self) -> pd.DataFrame:
        """The references after the warm-up by outcome and cause, the most first: how many
        (``references``) and their share (``share``, of all of them: the hits' is the hit
        rate)."""
        counted = self.references[self.references["after_warmup"]]
        table = (
            counted.groupby(["outcome", "cause"], observed=True)
            .size()
            .rename("references")
            .reset_index()
            .sort_values("references", ascending=False, kind="stable", ignore_index=True)
        )
        table["share"] = table["references"] / max(len(counted), 1)
        return table

    def write(self, folder: Path | str) -> list[Path]:
        """The frames as Parquet files in ``folder`` (made if missing; other files there are
        left alone), and ``run.json`` of the rest; returns the files written. A folder that
        holds a study's results, another run's records, or a file of a records' name that
        ``run.json`` does not vouch for is refused (:func:`check_records_folder`)."""
        folder = Path(folder)
        check_records_folder(folder, self.scenario_hash, self.point, self.replication)
        make_folders([folder])
        written = []
        for name in RECORD_TABLES:
            path = folder / f"{name}.parquet"
            table = pd.DataFrame(getattr(self, name))  # (accepted_ttl_ms: a Series)
            atomic_write(path, lambda temporary, t=table: t.to_parquet(temporary, index=False))
            written.append(path)
        about = {
            "scenario_hash": self.scenario_hash,
            "point": self.point,
            "replication": self.replication,
            "params": self.params,
            "metrics": {name: None if math.isnan(v) else v for name, v in self.metrics.items()},
            "invalidations": self.invalidations.to_dict(),
            "wire_bytes": self.wire_bytes.to_dict(),
            "counters": self.counters,
            "audit": self.audit,
        }
        path = folder / "run.json"
        text = json.dumps(about, indent=2, allow_nan=False)  # (a NaN metric as null)
        atomic_write(path, lambda temporary: temporary.write_text(text + "\n"))
        return [*written, path]


def run_records(
    scenario: ScenarioLike,
    point: int = 0,
    replication: int = 0,
    *,
    overrides: Sequence[str] | str | None = (),
    progress: bool = True,
    out: Path | str | None = None,
) -> RunRecords:
    """Run replication ``replication`` of sweep point ``point`` (their numbers in
    ``runs.parquet``) as its study does, and keep its records. ``scenario``: a scenario (as
    :func:`~nnrpsim.load_scenario` takes it), or a results folder, whose study's scenario its
    manifest records. ``progress``: with a progress bar (tqdm's: a widget in a notebook) of
    its simulated time. DES only: the vector engine replays counts, not references one by
    one. ``out``: the folder :meth:`RunRecords.write` will be given, checked before the run,
    so that a folder it would refuse costs no run. Bad input raises :class:`ScenarioError`."""
    scenario, folder = study_of(scenario, "to run again")
    changed = [  # (run from a results folder: its inputs that changed since)
        f"warning: {path} changed since the study in {folder} read it (content {then} "
        f"then, {now} now): this run reads it as it is now, so its numbers need not be the "
        "study's"
        for path, then, now in (changed_inputs(recorded_inputs(folder)) if folder else ())
    ]
    with setup_shown(progress):  # (a sweep of 100,000 points takes 4 s to expand)
        scenario = load_scenario(scenario, overrides)
        points = sweep_points(scenario)
    chosen = _chosen("point", point, len(points), "sweep point")
    run = points[chosen].scenario
    if run.engine != "des":
        raise ScenarioError(
            "engine",
            f"point {chosen} runs on the {run.engine} engine, which keeps no records of "
            "single references: set engine to des",
        )
    kept = _chosen("replication", replication, run.study.replications, "replication")
    digest = scenario_hash(scenario)
    if out is not None:
        check_records_folder(out, digest, chosen, kept)
    config, plan, run_seed = run_inputs(Task(chosen, kept, points[chosen].params, run))
    name = f"point {chosen} replication {kept}"
    with progress_bar(total=1.0, desc=name, disable=not progress, bar_format=BAR) as bar:
        result = simulate(config, run_seed, plan, lambda share: bar.update(share - bar.n))
    measured = des_metrics(result, config.warmup_ms, not run.workload.follows_a_log)
    measured["wire_saving"] = float(
        wire_saving(
            measured["wire_bytes"], measured["wire_bytes_saved"], measured["wire_bytes_resent"]
        )
    )
    metrics = {name: measured[name] for name in METRICS}  # (in the runs table's order)
    return RunRecords(
        scenario_hash=digest,
        point=chosen,
        replication=kept,
        params=points[chosen].params,
        metrics=metrics,
        **_frames(result, plan, config.warmup_ms),
        setup_warnings=[
            *changed,
            *(line for advise in ADVICE for line in advise([points[chosen]], len(points))),
        ],
    )


def _frames(result: ModelResult, plan: WorkloadPlan, warmup_ms: float) -> dict[str, Any]:
    """A run's records as :class:`RunRecords` has them: codes named, each row of a session's
    its host, the rows the metrics count marked."""
    refs, ops = result.references, result.operations
    host_of = np.zeros(max((session.session_id for session in plan.sessions), default=0) + 1, int)
    host_of[[session.session_id for session in plan.sessions]] = [
        session.host for session in plan.sessions
    ]
    return {
        "references": pd.DataFrame(
            {
                "time_ms": refs["time_ms"],
                "session": refs["session"],
                "host": host_of[refs["session"]],
                "server": refs["server"],
                "object": refs["object"],
                "kind": _named(refs["kind"], CacheObjectKind, KINDS),
                "size": refs["size"],
                "outcome": _named(refs["outcome"], RefOutcome, OUTCOMES),
                "cause": _named(refs["cause"], InstallCause, CAUSES),
                "after_warmup": refs["time_ms"] >= warmup_ms,
            }
        ),
        "operations": pd.DataFrame(
            {**ops, "host": host_of[ops["session"]], "after_warmup": ops["start_ms"] >= warmup_ms}
        ),
        "memory": pd.DataFrame(result.memory),
        "memory_by_kind": pd.DataFrame(
            {
                **result.held_by_kind,
                "kind": _named(result.held_by_kind["kind"], CacheObjectKind, KINDS),
            }
        ),
        "accepted_ttl_ms": pd.Series(result.accepted_ttl_ms, name="accepted_ttl_ms"),
        "invalidations": pd.Series(result.invalidations, name="invalidations", dtype=np.int64),
        "wire_bytes": pd.Series(result.wire, name="wire_bytes", dtype=np.int64),
        "counters": dict(result.counters),
        "audit": dict(result.audit),
    }


def check_records_folder(
    folder: Path | str, scenario_hash: str, point: int, replication: int
) -> None:
    """Raise a :class:`ScenarioError` (``--out``) where writing a run's records in ``folder``
    would lose or muddle what it holds: a file, a study's results (or a folder among them),
    another run's records, or a file of a records' name with no ``run.json`` to say whose.
    The same run's records are written again (its seeds give the same numbers); files of
    other names are left alone."""
    folder = given_path(folder, "--out")
    check_out_folder(folder)
    study = study_mark(folder)
    owned = study_output(folder)
    present = [name for name in RECORD_FILES if (folder / name).exists()]
    own_folder = "write the records to a folder of their own"
    if study is not None:
        raise ScenarioError("--out", f"{folder} holds a study's results ({study}): {own_folder}")
    if owned is not None:
        raise ScenarioError("--out", f"{folder} {among(owned)}: {own_folder}")
    if not present:
        return
    try:
        about = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        held = (about["scenario_hash"], about["point"], about["replication"])
    except (OSError, ValueError, TypeError, KeyError):
        raise ScenarioError(
            "--out",
            f"{folder} holds {present[0]}, and no run.json that names its run: {own_folder}",
        ) from None
    if held != (scenario_hash, point, replication):
        scenario = "" if held[0] == scenario_hash else " of another scenario"
        raise ScenarioError(
            "--out",
            f"{folder} holds the records of point {held[1]}, replication {held[2]}{scenario}: "
            f"{own_folder}, or remove those",
        )


def _chosen(name: str, value: object, count: int, what: str) -> int:
    """``value`` as an index below ``count``, or a :class:`ScenarioError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ScenarioError(name, f"must be a whole number, got {quoted(value)}")
    if not 0 <= value < count:
        which = f"0 to {count - 1}" if count > 1 else "only 0"
        raise ScenarioError(name, f"{value} is not one of the study's {what}s ({which})")
    return int(value)


def _named(codes: np.ndarray, names: type, dtype: pd.CategoricalDtype) -> pd.Categorical:
    """Enum codes as their names in lower case, the enum's names (in its order) the categories."""
    # (a code no member has would be missing, NaN, rather than named for another)
    position = np.full(max(int(member) for member in names) + 1, -1, dtype=np.int64)
    position[[int(member) for member in names]] = np.arange(len(dtype.categories))
    # (an empty column of records comes as floats)
    return pd.Categorical.from_codes(position[codes.astype(np.int64)], dtype=dtype)
