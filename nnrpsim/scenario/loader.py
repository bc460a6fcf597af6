"""Reading scenario files: safe YAML, ``--set`` overrides, sweep expansion, and one-line errors
that name the field path and the reason."""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from .per_scenario import once_per_scenario
from .schema import FULL_PLACES, KEY_UNITS, MAX_RUNS, Scenario, Sweep


class ScenarioError(ValueError):
    """Bad scenario input: ``str(err)`` is ``"<where>: <reason>"``."""

    def __init__(self, where: str, reason: str) -> None:
        self.where, self.reason = where, reason
        super().__init__(f"{where}: {reason}")


_REASONS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "missing": "required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be text",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "too_short": "must list at least {min_length} value(s)",
    "string_pattern_mismatch": "must match {pattern}",
}


def _known_keys(loc: Sequence) -> list[str]:
    """The keys the section at ``loc`` (a path of keys from the top) takes; none where the path
    leaves the sections."""
    section: type[BaseModel] | None = Scenario
    parts = iter(loc)
    for part in parts:
        field = section.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return []
        annotation = field.annotation
        if get_origin(annotation) is dict:  # sections by a key of the user's (by kind, say)
            annotation = get_args(annotation)[1]
            if next(parts, None) is None:
                return []
        candidates = (annotation, *get_args(annotation))  # (a section, or a section or None)
        section = next(
            (t for t in candidates if isinstance(t, type) and issubclass(t, BaseModel)), None
        )
        if section is None:
            return []
    return list(section.model_fields)


MAX_KEYS_LISTED = 8
"""A section with more keys than this is not listed in an error line: ``nnrpsim keys`` is."""


def _unknown_key(loc: Sequence) -> str:
    """The reason an unknown key is refused, with the known key it most likely misspells, or
    else the keys its section takes."""
    parts = _where_parts(loc)
    if place := FULL_PLACES.get(str(parts[-1])):  # a short name, or a key of another section
        return f"unknown key (did you mean {place}?)"
    known = _known_keys(parts[:-1])
    close = difflib.get_close_matches(str(parts[-1]), known, n=1)
    if close:
        return f"unknown key (did you mean {close[0]}?)"
    if known and len(known) <= MAX_KEYS_LISTED:
        return f"unknown key (known: {', '.join(known)})"
    return "unknown key (nnrpsim keys lists them)" if known else "unknown key"


STORED_UNITS = {"duration": " ms", "size": " bytes", "rate": " bytes/s"}
"""What a key with human units stores, and so the unit of its bounds."""


def _bound(value: object, unit: str) -> str:
    """A bound in an error line: ``4294967295 ms``, not ``4294967295.0``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value}{unit}"


def _reason(error: dict) -> str:
    if error["type"] == "extra_forbidden":
        return _unknown_key(error["loc"])
    template = _REASONS.get(error["type"])
    if template is not None:
        unit = STORED_UNITS.get(KEY_UNITS.get(_where(error["loc"]), ""), "")
        return template.format(**{k: _bound(v, unit) for k, v in error.get("ctx", {}).items()})
    if error["type"] == "literal_error":
        return "must be one of " + error["ctx"]["expected"]
    return error["msg"].removeprefix("Value error, ")


def _where_parts(loc: Iterable) -> list:
    """A pydantic error location without its validator steps: the keys of the path."""
    return [p for p in loc if not (isinstance(p, str) and ("[" in p or p.startswith("function-")))]


def _where(loc: Iterable) -> str:
    return ".".join(str(p) for p in _where_parts(loc)) or "scenario"


def _first_error(err: ValidationError) -> dict:
    """The error to report: an unknown key before all else (a misspelt key is also a missing
    one, and the misspelling is what to fix)."""
    errors = err.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def validation_error(err: ValidationError, prefix: str = "") -> ScenarioError:
    first = _first_error(err)
    where = _where(first["loc"])
    return ScenarioError(f"{prefix}{where}" if prefix else where, _reason(first))


class _KeyGivenTwice(yaml.constructor.ConstructorError):
    """Well-formed YAML, but a mapping names one key twice."""


class _StrictLoader(yaml.SafeLoader):
    """The safe loader, refusing a key given twice in one mapping: PyYAML keeps the last
    silently, and a second ``workload:`` section would replace the first whole. (A merge
    ``<<`` may still be overridden: that is what it is for.)"""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):  # (an unhashable key the base class refuses)
                if key in seen:
                    raise _KeyGivenTwice(
                        None, None, f"key {key!r} given twice", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


def _safe_load(text: str, where: str, file: bool = True) -> Any:
    """The YAML in ``text``, read with the strict safe loader; an error names ``where``, and
    the line in a ``file``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        if file and mark is not None:
            where = f"{where}:{mark.line + 1}"
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        kind = "" if isinstance(err, _KeyGivenTwice) else "YAML syntax error: "
        raise ScenarioError(where, f"{kind}{problem}") from None


def read_yaml(path: str | Path) -> dict:
    """The YAML mapping in ``path``, read with a safe loader."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ScenarioError(str(path), err.strerror or "cannot be read") from None
    except UnicodeDecodeError as err:
        raise ScenarioError(str(path), f"not UTF-8 text (byte {err.start}: {err.reason})") from None
    except ValueError:  # (a NUL in the API's path; after its subclass UnicodeDecodeError)
        raise ScenarioError(repr(str(path)), "must not contain a NUL character") from None
    data = _safe_load(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ScenarioError(str(path), "must be a mapping of sections (study, topology, ...)")
    return data


def set_dotted(raw: dict, key: str, value: Any, where: str | None = None) -> None:
    """Set ``a.b.c`` in nested dicts, creating sections as needed (an optional section left
    out is null: ``workload.trace.path`` makes the trace section). Under ``sweep.grid`` and
    ``sweep.zip`` the rest is one key: ``sweep.grid.topology.hosts`` sweeps ``topology.hosts``."""
    parts = key.split(".")
    if parts[:2] in (["sweep", "grid"], ["sweep", "zip"]) and len(parts) > 2:
        parts = [*parts[:2], ".".join(parts[2:])]
    if not all(parts):
        raise ScenarioError(where or key, "not a dotted key")
    node = raw
    for part in parts[:-1]:
        if node.get(part) is None:
            node[part] = {}
        child = node[part]
        if not isinstance(child, dict):
            raise ScenarioError(where or key, f"{part!r} is not a section")
        node = child
    node[parts[-1]] = value


def parse_set(item: str, option: str = "--set") -> tuple[str, Any]:
    """``KEY=VALUE`` from the command line's ``option``; VALUE is read as a YAML scalar or
    list."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ScenarioError(option, f"expected KEY=VALUE, got {item!r}")
    return key.strip(), _safe_load(text, f"{option} {key.strip()}", file=False)


def parse_scenario(raw: dict, overrides: Sequence[str] | str | None = ()) -> Scenario:
    """Validate ``raw`` with ``overrides`` (``KEY=VALUE`` each, or one such string; None for
    none) applied."""
    raw = copy.deepcopy(raw)
    items = [overrides] if isinstance(overrides, str) else () if overrides is None else overrides
    listed = isinstance(items, Sequence) and not isinstance(items, bytes)  # (in order: not a set)
    if not listed or not all(isinstance(item, str) for item in items):
        raise TypeError(f"overrides are KEY=VALUE text, or a list of it, not {overrides!r}")
    keys = []
    for item in items:
        key, value = parse_set(item)
        set_dotted(raw, key, value, where=f"--set {key}")
        keys.append(key)
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as err:
        raise validation_error(err) from None
    _check_not_swept(keys, scenario)
    sweep_points(scenario)  # a bad swept key or value is an input error too, found up front
    return scenario


def _check_not_swept(keys: list[str], scenario: Scenario) -> None:
    """An override of a key the sweep sets (or of a key within a section it sets whole) would
    change no run, the swept values replacing it in each: an error saying how to change them,
    rather than a study that silently ignores it."""
    if scenario.sweep is None:
        return
    for key in keys:
        for kind in ("grid", "zip"):
            for swept in getattr(scenario.sweep, kind):
                if key == swept or key.startswith(f"{swept}."):
                    raise ScenarioError(
                        f"--set {key}",
                        f"swept by sweep.{kind}, whose values replace it in every run: change "
                        f"them (--set 'sweep.{kind}.{swept}=[...]') or drop the sweep (--set "
                        "sweep=null)",
                    )


ScenarioLike = Scenario | Mapping[str, Any] | str | PathLike[str]
"""A scenario, a mapping as a scenario file reads (a notebook's dict), or that file's path."""


def load_scenario(scenario: ScenarioLike, overrides: Sequence[str] | str | None = ()) -> Scenario:
    """Read, validate and check a scenario file (including every sweep point), or a mapping as
    such a file reads; a :class:`Scenario` comes back as it is, or with ``overrides`` applied.

    A relative ``workload.trace.path`` or ``workload.sessions.arrivals.path``, swept or not,
    is taken relative to the scenario file's folder (a mapping's, to the current one); one in
    ``overrides``, to the current one.
    """
    if isinstance(scenario, Scenario):
        return parse_scenario(scenario.model_dump(), overrides) if overrides else scenario
    if isinstance(scenario, Mapping):
        return parse_scenario(dict(scenario), overrides)
    if not isinstance(scenario, str | PathLike):
        raise TypeError(
            "a scenario is a Scenario, a mapping as a scenario file reads, or that file's "
            f"path, not {type(scenario).__name__}"
        )
    raw = read_yaml(scenario)
    _paths_relative_to(Path(scenario).parent, raw)
    return parse_scenario(raw, overrides)


PATH_KEYS = ("workload.trace.path", "workload.sessions.arrivals.path")
"""The keys that name files: in a scenario file, relative to the file's folder."""


def _paths_relative_to(folder: Path, raw: dict) -> None:
    """Resolve the relative paths of ``raw``, as read from a file in ``folder``: in its sections
    and among its swept values (a swept path, or a swept section that holds one)."""
    for key in PATH_KEYS:
        _resolved(raw, key.split("."), folder)
    sweep = raw.get("sweep")
    for kind in ("grid", "zip"):
        swept = sweep.get(kind) if isinstance(sweep, dict) else None
        for swept_key, values in swept.items() if isinstance(swept, dict) else ():
            for key in PATH_KEYS:
                if isinstance(values, list) and f"{key}.".startswith(f"{swept_key}."):
                    rest = key.split(".")[swept_key.count(".") + 1 :]
                    values[:] = [_resolved(value, rest, folder) for value in values]


def _resolved(value: Any, parts: list[str], folder: Path) -> Any:
    """``value`` with the path at ``parts`` below it (``value`` itself, with none) resolved
    against ``folder``, when it is text: an absolute path stays as it is."""
    if not parts:  # (a name with a NUL stays as it is, for the schema to refuse)
        return (
            str((folder / value).resolve())
            if isinstance(value, str) and "\0" not in value
            else value
        )
    if isinstance(value, dict) and parts[0] in value:
        value[parts[0]] = _resolved(value[parts[0]], parts[1:], folder)
    return value


@dataclass(frozen=True)
class Point:
    """One sweep point: the swept parameters (resolved: durations in ms, sizes in bytes) and the
    scenario they resolve to."""

    index: int
    params: dict[str, Any]
    scenario: Scenario

    @property
    def values(self) -> str:
        """Its swept values as one comparable text: no two points of a sweep share it, and the
        point of another sweep over the same keys and base with the same text makes the same
        runs (a resume that lists another value finds the runs there by it)."""
        return json.dumps(self.params, sort_keys=True, default=repr)


def with_auto_warmup(scenario: Scenario) -> Scenario:
    """``scenario`` with ``study.warmup: auto`` resolved to the least warm-up after which its
    sessions at once, averaged over the measured time, are within 1 % of their steady number
    (the closed form ``validate`` judges a warm-up by), rounded up to whole seconds where the
    run has room. A ValueError where there is none: a log's load has no steady level, and a
    run may be too short for any."""
    study, workload = scenario.study, scenario.workload
    if study.warmup != "auto":
        return scenario
    if workload.follows_a_log:
        raise ValueError(
            "auto needs a synthetic workload's steady load, and a trace's or an arrival log's "
            "is what the log makes it: give a duration (0s measures from the start)"
        )
    # (imported here: the model package brings SimPy, which loading a scenario does not need)
    from nnrpsim.model.workload_means import least_warmup_ms

    sessions = workload.sessions
    least = least_warmup_ms(study.duration, sessions.duration, sessions.duration_cv)
    if least is None or math.ceil(least) >= study.duration:
        raise ValueError(
            f"auto: no warm-up within this {study.duration / 1e3:g} s run keeps the sessions at "
            "once within 1 % of their steady number: lengthen study.duration"
        )
    seconds = math.ceil(least / 1e3) * 1e3
    warmup = seconds if seconds < study.duration else float(math.ceil(least))
    return scenario.model_copy(update={"study": study.model_copy(update={"warmup": warmup})})


def _with_warmup_of_its_own(scenario: Scenario) -> Scenario:
    """:func:`with_auto_warmup`, or a :class:`ScenarioError` naming ``study.warmup`` where
    ``auto`` has no value for the scenario as written."""
    try:
        return with_auto_warmup(scenario)
    except ValueError as err:
        raise ScenarioError("study.warmup", str(err)) from None


def sweep_points(scenario: Scenario) -> list[Point]:
    """Expand ``sweep``: the cartesian product of ``grid`` times the rows of ``zip``; once for
    each scenario (a study checks its sweep as it loads the scenario, then expands it again to
    run it), a new list each time."""
    return list(_expanded(scenario))


@once_per_scenario
def _expanded(scenario: Scenario) -> list[Point]:
    base = scenario.model_dump(exclude={"sweep"})
    if scenario.sweep is None:
        return [Point(0, {}, _with_warmup_of_its_own(scenario.model_copy(update={"sweep": None})))]
    grid, zipped = scenario.sweep.grid, scenario.sweep.zip
    n_zip = len(next(iter(zipped.values()))) if zipped else 1
    places = list(
        itertools.product(itertools.product(*map(range, map(len, grid.values()))), range(n_zip))
    )
    points: list[Point] = []
    first_of: dict[str, int] = {}  # a point's resolved values (as JSON): the first point with them
    for grid_place, zip_place in places:
        params = {key: grid[key][i] for key, i in zip(grid, grid_place, strict=True)}
        params.update((key, values[zip_place]) for key, values in zipped.items())
        raw = base  # (every point writes the same keys before it is validated: no copy, which
        # took 0.3 ms a point; a validated scenario holds none of ``raw``'s dicts)
        for key, value in params.items():
            kind = "grid" if key in grid else "zip"
            set_dotted(raw, key, value, where=f"sweep.{kind}.{key}")
        try:
            resolved = Scenario.model_validate(raw)
        except ValidationError as err:
            first = _first_error(err)
            where = _where(first["loc"])
            # the swept key's own error, or an unknown section that the swept key is in
            unknown = first["type"] == "extra_forbidden"
            swept = next(
                (
                    k
                    for k in params
                    if where == k
                    or where.startswith(f"{k}.")
                    or (unknown and k.startswith(f"{where}."))
                ),
                None,
            )
            if swept is None:  # a rule across keys that the point's values break together
                values = ", ".join(f"{key}: {value!r}" for key, value in params.items())
                rule = _reason(first) if where == "scenario" else f"{where}: {_reason(first)}"
                raise ScenarioError(f"sweep point {len(points)} ({values})", rule) from None
            kind = "grid" if swept in grid else "zip"
            raise ScenarioError(
                f"sweep.{kind}.{swept}", f"{_reason(first)} (value {params[swept]!r})"
            ) from None
        try:
            resolved = with_auto_warmup(resolved)
        except ValueError as err:
            _with_warmup_of_its_own(scenario)  # (named without a point where the sweep is not why)
            values = ", ".join(f"{key}: {value!r}" for key, value in params.items())
            raise ScenarioError(
                f"sweep point {len(points)} ({values})", f"study.warmup: {err}"
            ) from None
        resolved_values = resolved.model_dump()
        params = {key: dotted(resolved_values, key) for key in params}  # in base units
        point = Point(len(points), params, resolved)
        first = first_of.setdefault(point.values, point.index)
        if first != point.index:
            raise _same_runs(scenario.sweep, places, first, point.index)
        points.append(point)
    if (runs := sum(point.scenario.study.replications for point in points)) > MAX_RUNS:
        raise ScenarioError(
            "study.replications",
            f"{len(points):,} sweep points make {runs:,} runs with their replications, more "
            f"than a study holds ({MAX_RUNS:,}): fewer replications or points",
        )
    return points


def _same_runs(
    sweep: Sweep, places: list[tuple[tuple[int, ...], int]], first: int, again: int
) -> ScenarioError:
    """Sweep points ``first`` and ``again``, whose values resolve alike (a value listed twice,
    ``1s`` beside ``1000ms``, ``auto`` beside the warm-up it chooses): with the same random
    numbers they would be the same runs, run twice and drawn twice, so the sweep is refused.
    ``places``: each point's index in each grid list, and in the zip lists."""
    (grid_a, zip_a), (grid_b, zip_b) = places[first], places[again]
    same = f"points {first} and {again} would be the same runs"
    for (key, values), i, j in zip(sweep.grid.items(), grid_a, grid_b, strict=True):
        if i != j:
            a, b = values[i], values[j]
            listed = f"lists {a!r} twice" if a == b else f"lists {a!r} and {b!r}, which come alike"
            return ScenarioError(f"sweep.grid.{key}", f"{listed}: {same} (list each value once)")
    held = ", ".join(f"{key}: {values[zip_b]!r}" for key, values in sweep.zip.items())
    return ScenarioError(
        "sweep.zip",
        f"positions {zip_a} and {zip_b} hold the same values ({held}): {same} (give each "
        "combination once)",
    )


def dotted(values: dict, key: str) -> Any:
    """The value at dotted ``key`` of a scenario's nested values; None within a section left
    out (``workload.trace.block_tokens`` without a trace)."""
    for part in key.split("."):
        if values is None:
            return None
        values = values[part]
    return values


def scenario_hash(scenario: Scenario) -> str:
    """A stable digest of the resolved scenario: results are only resumed into the same study."""
    canonical = json.dumps(scenario.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
