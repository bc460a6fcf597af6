"""Reading scenarios: files as safe YAML, mappings, ``--set`` overrides, each checked with
every sweep point (:mod:`.sweep`), bad input as one line (:mod:`.errors`)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..quoted import quoted
from .dotted_keys import set_dotted
from .errors import ScenarioError, validation_error
from .schema import Scenario
from .sweep import sweep_points


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
                        None, None, f"key {quoted(key)} given twice", key_node.start_mark
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


MAX_SCENARIO_BYTES = 16 << 20
"""A scenario file is a few KiB; a file past this is some other (a trace named in its place,
which YAML read whole as one long scalar, or ``/dev/zero``, which it read until memory ran
out)."""


def read_yaml(path: str | Path) -> dict:
    """The YAML mapping in ``path``, read with a safe loader."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            content = file.read(MAX_SCENARIO_BYTES + 1)
    except OSError as err:
        raise ScenarioError(str(path), err.strerror or "cannot be read") from None
    except ValueError:  # (a NUL in the API's path)
        raise ScenarioError(repr(str(path)), "must not contain a NUL character") from None
    if len(content) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            str(path),
            f"more than {MAX_SCENARIO_BYTES >> 20} MiB: not a scenario (a trace or an arrivals "
            "log is named in one, by workload.trace.path or workload.sessions.arrivals.path)",
        )
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ScenarioError(str(path), f"not UTF-8 text (byte {err.start}: {err.reason})") from None
    data = _safe_load(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ScenarioError(str(path), "must be a mapping of sections (study, topology, ...)")
    return data


def parse_set(item: str, option: str = "--set") -> tuple[str, Any]:
    """``KEY=VALUE`` from the command line's ``option``; VALUE is read as a YAML scalar or
    list."""
    key, sep, text = item.partition("=")
    if not sep or not key.strip():
        raise ScenarioError(option, f"expected KEY=VALUE, got {quoted(item)}")
    return key.strip(), _safe_load(text, f"{option} {key.strip()}", file=False)


def parse_scenario(raw: dict, overrides: Sequence[str] | str | None = ()) -> Scenario:
    """Validate ``raw`` with ``overrides`` (``KEY=VALUE`` each, or one such string; None for
    none) applied."""
    raw = copy.deepcopy(raw)
    items = [overrides] if isinstance(overrides, str) else () if overrides is None else overrides
    listed = isinstance(items, Sequence) and not isinstance(items, bytes)  # (in order: not a set)
    if not listed or not all(isinstance(item, str) for item in items):
        raise TypeError(f"overrides are KEY=VALUE text, or a list of it, not {quoted(overrides)}")
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
    if not parts:  # (an empty name, or one with a NUL, stays as it is, for the schema to refuse)
        return (
            str((folder / value).resolve())
            if isinstance(value, str) and value and "\0" not in value
            else value
        )
    if isinstance(value, dict) and parts[0] in value:
        value[parts[0]] = _resolved(value[parts[0]], parts[1:], folder)
    return value


def scenario_hash(scenario: Scenario) -> str:
    """A stable digest of the resolved scenario: results are only resumed into the same study."""
    canonical = json.dumps(scenario.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]
