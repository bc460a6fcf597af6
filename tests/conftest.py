"""Shared test fixtures: where ../shared lives, and a few helpers."""

from __future__ import annotations

import inspect
import json
import os
import pydoc
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import settings

from nnrpsim.plot_formats import FORMATS_VARIABLE, NO_FORMAT

# CI draws the same examples every run (a red build is then the change's, not the dice's);
# elsewhere each run explores new ones. `.ci/run` sets HYPOTHESIS_PROFILE=ci.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NNRPSIM_SHARED", ROOT.parent / "shared"))
MOONCAKE = SHARED / "data/traces/mooncake_synthetic_trace.jsonl"


@pytest.fixture(scope="session", autouse=True)
def no_plots() -> Iterator[None]:
    """Studies draw no figures (``NNRPSIM_PLOT_FORMATS=none``, which a study's workers and the
    command lines a test starts inherit): drawing was two fifths of a small study's time, and
    most tests read its tables alone. A test marked ``plots``, or given :func:`drawn`, draws
    them as PNG; one marked ``all_plot_formats``, in the default formats."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FORMATS_VARIABLE, NO_FORMAT)
        yield


@pytest.fixture(autouse=True)
def _marked_plot_formats(request: pytest.FixtureRequest) -> Iterator[None]:
    """The formats a test's marker names: ``plots``, PNG; ``all_plot_formats``, the default."""
    if request.node.get_closest_marker("all_plot_formats") is not None:
        formats = None
    elif request.node.get_closest_marker("plots") is not None:
        formats = "png"
    else:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        if formats is None:
            patch.delenv(FORMATS_VARIABLE)
        else:
            patch.setenv(FORMATS_VARIABLE, formats)
        yield


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared folder not found at {SHARED} (set NNRPSIM_SHARED)")
    return SHARED


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def golden_hex(shared: Path, case_id: str, parameter: str = "metadata_hex") -> str:
    """A preview4 baseline conformance case's golden bytes, as hexadecimal."""
    doc = load_json(shared / "spec/vectors/protocol_nnrp-1-preview4_cases_nnrp1-baseline-core.json")
    (case,) = [c for c in doc["cases"] if c["id"] == case_id]
    return case["parameters"][parameter]


SMALL_STUDY = {
    "study": {"name": "small", "seed": 4, "replications": 2, "duration": "40s", "warmup": "5s"},
    "workload": {"sessions": {"rate_per_s": 1, "duration": "20s"}, "operations": {"rate_per_s": 1}},
    "sweep": {
        "grid": {
            "host_policy.ttl_fraction": [0.1, 0.5],
            "workload.invalidations.rate_per_s": [0, 0.02],
        }
    },
}


def traced_peak(step: Callable[[], object]) -> int:
    """The most memory ``step`` held at once, in bytes, as tracemalloc traces it."""
    tracemalloc.start()
    try:
        step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="session")
def small_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`SMALL_STUDY`'s results folder, its figures not drawn (:func:`no_plots`): for the
    tests that read a finished study and change nothing in it (copy it to change it)."""
    import nnrpsim

    out = tmp_path_factory.mktemp("small_study") / "study"
    nnrpsim.run(SMALL_STUDY, out=out, jobs=1, progress=False)
    return out


@pytest.fixture
def small_yaml(tmp_path: Path) -> Path:
    """A four-point, two-replication study that runs in a few seconds."""
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(SMALL_STUDY))
    return path


class DrawnFigures(list):
    """Figures kept instead of written: clearing the list closes them (matplotlib warns past
    twenty open, and a test that draws a whole study again and again passes that)."""

    def clear(self) -> None:
        import matplotlib.pyplot

        for figure in self:
            matplotlib.pyplot.close(figure)
        super().clear()


@pytest.fixture
def drawn(monkeypatch) -> Iterator[DrawnFigures]:
    """The figures :mod:`nnrpsim.plots` draws, in order, each labelled with the name it would
    be saved under (``figure.get_label()``), instead of written; closed after the test."""
    from nnrpsim import plots

    figures = DrawnFigures()
    monkeypatch.setenv(FORMATS_VARIABLE, "png")  # (the figures are drawn, though not written)

    def keep(figure, folder, name: str) -> list:
        figure.set_label(name)
        figures.append(figure)
        return []

    monkeypatch.setattr(plots, "_save", keep)
    yield figures
    figures.clear()


def write_yaml(folder: Path, document: dict | str, name: str = "s.yaml") -> Path:
    path = folder / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked ``interpreted`` patches what compiled code calls (a class or function of
    the model's event loop or of the lease table). Compiled, those call one another directly
    and a patch would change nothing, so where this process runs them compiled the test runs
    in a pytest of its own with them loaded from their sources (``NNRPSIM_INTERPRETED``), and
    passes or fails with it."""
    if pyfuncitem.get_closest_marker("interpreted") is None:
        return None
    from nnrpsim import BUILD_STATUS
    from nnrpsim.compiled import INTERPRETED_VARIABLE

    if BUILD_STATUS != "compiled":
        return None
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", pyfuncitem.nodeid],
        env={**os.environ, INTERPRETED_VARIABLE: "1"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        pytest.fail(
            f"with {INTERPRETED_VARIABLE}=1 (exit status {run.returncode}):\n"
            f"{run.stdout[-4000:]}{run.stderr[-2000:]}",
            pytrace=False,
        )
    return True


@pytest.fixture
def monkeypatch(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    """pytest's ``monkeypatch``, refusing to patch a compiled class, or a compiled module's
    class or function, in a test not marked ``interpreted``: compiled code calls them
    directly, so the patch would change nothing and the test would pass for nothing. A
    compiled module's other globals (a constant, a function it imports) it reads at each use,
    as an interpreted module reads what it imported: those may be patched."""
    from nnrpsim import BUILD_STATUS
    from nnrpsim.compiled import PACKAGE_DIR, extensions, module_name

    if BUILD_STATUS != "compiled" or request.node.get_closest_marker("interpreted"):
        return monkeypatch
    compiled = {module_name(source) for source in extensions(PACKAGE_DIR)}
    setattr_ = monkeypatch.setattr

    def compiled_here(value) -> bool:
        return getattr(value, "__module__", None) in compiled and (
            inspect.isclass(value) or inspect.isroutine(value)
        )

    def checked_setattr(target, *args, **kwargs):
        if isinstance(target, str):  # "package.module.name" or "package.module.Class.name"
            owner_name, name = target.rsplit(".", 1)
            owner = pydoc.locate(owner_name)
        else:
            owner, name = target, args[0]
        in_compiled_module = inspect.ismodule(owner) and owner.__name__ in compiled
        if compiled_here(owner) or (
            in_compiled_module and compiled_here(getattr(owner, name, None))
        ):
            pytest.fail(
                f"{getattr(owner, '__name__', owner)}.{name} is compiled: mark the test "
                "@pytest.mark.interpreted to patch it",
                pytrace=False,
            )
        return setattr_(target, *args, **kwargs)

    monkeypatch.setattr = checked_setattr  # type: ignore[method-assign]
    return monkeypatch


@pytest.fixture
def flaky_last_point(monkeypatch):
    """The small study's last point (TTL fraction 0.5 with content changes) raises in every
    run; the fixture's value restores the real model."""
    from nnrpsim import tasks

    real = tasks.simulate

    def flaky(config, seed, plan=None, progress=None):
        if config.policy.ttl_fraction == 0.5 and config.workload.content_change_rate_per_s > 0:
            raise RuntimeError("injected failure")
        return real(config, seed, plan, progress)

    monkeypatch.setattr(tasks, "simulate", flaky)
    return lambda: monkeypatch.setattr(tasks, "simulate", real)
