"""The compiled model is its sources compiled: the same records, bit for bit; and an extension
whose source has changed since the build, or that the build did not make, is never what runs."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from dataclasses import fields, replace

import numpy as np
import pytest

from nnrpsim import __version__
from nnrpsim.cli import main
from nnrpsim.compiled import (
    BUILD_RECORD,
    INTERPRETED_VARIABLE,
    PACKAGE_DIR,
    extensions,
    left_behind,
    module_name,
    out_of_date,
    source_digest,
)
from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog
from nnrpsim.engine.replay.on_table import replay_on_table
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.engine.table import ScalarPut
from nnrpsim.model import (
    BUILD_STATUS,
    FaultConfig,
    LinkConfig,
    ModelConfig,
    ModelResult,
    PolicyConfig,
    ServerConfig,
    WorkloadConfig,
    simulate,
    stream_plan,
    synthetic_plan,
)
from nnrpsim.model.workload import with_python_numbers
from nnrpsim.vector_run import vector_run

from .conftest import ROOT
from .model.plans import one_session

BUSY = WorkloadConfig(
    session_rate_per_s=1.0,
    session_duration_ms=20_000.0,
    operation_rate_per_s=2.0,
    shared_objects_per_namespace=20,
    content_change_rate_per_s=0.02,
    private_dependency_share=0.5,
)
CONFIGS = {
    "default": ModelConfig(duration_ms=60_000.0),
    # every fault, several hosts and servers, a worker limit, memory pressure, dependencies
    "faults": ModelConfig(
        duration_ms=60_000.0,
        warmup_ms=5_000.0,
        hosts=2,
        servers=2,
        uplink=LinkConfig(loss=0.1, retransmit_timeout_ms=5.0),
        downlink=LinkConfig(loss=0.1, retransmit_timeout_ms=5.0),
        server=ServerConfig(
            limits=CacheLimits(capacity_bytes=2 << 20, eviction="fifo"),
            sweep_interval_ms=500.0,
            workers=1,
        ),
        policy=PolicyConfig(refused_backoff_ms=2_000.0),
        workload=BUSY,
        faults=FaultConfig(restart_at_ms=30_000.0, memory_pressure_at_ms=40_000.0),
    ),
    # leases far shorter than sessions: expiries, renewals and reinstalls
    "short_leases": ModelConfig(
        duration_ms=60_000.0,
        policy=PolicyConfig(name="threshold", ttl_fraction=0.05, min_expected_reuse=0.5),
        workload=BUSY,
    ),
}


def digest(result: ModelResult) -> str:
    """Every output of a run (values and types), but its wall time."""
    h = hashlib.sha256()
    for field in fields(result):
        value = getattr(result, field.name)
        if field.name == "wall_s":
            continue
        h.update(field.name.encode())
        if isinstance(value, dict) and all(isinstance(v, np.ndarray) for v in value.values()):
            for name, column in value.items():
                h.update(f"{name}:{column.dtype}".encode() + column.tobytes())
        elif isinstance(value, np.ndarray):
            h.update(str(value.dtype).encode() + value.tobytes())
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


REPLAYS = {  # the replay on the lease table, under each kind of victim and the host rules
    "lru": (CacheLimits(capacity_bytes=60 << 10), {}),
    "ttl": (CacheLimits(capacity_bytes=60 << 10, eviction="ttl"), {"renew_margin": 0.3}),
    "size": (CacheLimits(capacity_bytes=60 << 10, eviction="size"), {"refused_backoff_ms": 900}),
    "entries_extend": (
        CacheLimits(max_cache_entries=12, renewal="extend", max_object_bytes=7 << 10),
        {"inline_after_invalidate": True},
    ),
}


def _replay_stream() -> ReferenceStream:
    rng = np.random.default_rng(17)
    n, n_objects = 6_000, 400
    objects = (rng.zipf(1.3, n) - 1) % n_objects
    sizes = rng.integers(1, 9, n_objects) * 1024
    changes = np.sort(rng.integers(0, 600_000, 60)), rng.integers(0, n_objects, 60)
    return ReferenceStream(np.sort(rng.integers(0, 600_000, n)), objects, sizes[objects], *changes)


def replay_digest(counts: dict) -> str:
    h = hashlib.sha256()
    for name, value in sorted(counts.items()):
        h.update(name.encode())
        is_array = isinstance(value, np.ndarray)
        h.update(str(value.dtype).encode() + value.tobytes() if is_array else repr(value).encode())
    return h.hexdigest()


def digests() -> dict[str, str]:
    stream = _replay_stream()
    return {name: digest(simulate(config, 11)) for name, config in CONFIGS.items()} | {
        f"replay_{name}": replay_digest(replay_on_table(stream, 20_000, "reset", limits, **rules))
        for name, (limits, rules) in REPLAYS.items()
    }


def _interpreted(code: str) -> str:
    """What ``code`` prints in a new process that loads the model from its sources."""
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, INTERPRETED_VARIABLE: "1"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout


compiled_only = pytest.mark.skipif(
    BUILD_STATUS != "compiled", reason=f"the model runs {BUILD_STATUS}"
)


@compiled_only
def test_the_compiled_model_and_table_give_the_records_of_their_sources():
    interpreted = json.loads(
        _interpreted(
            "import json; from tests.test_compiled import digests; print(json.dumps(digests()))"
        )
    )
    assert digests() == interpreted


@compiled_only
def test_the_variable_loads_every_compiled_module_from_its_source():
    built = set(extensions(PACKAGE_DIR)) - set(left_behind(PACKAGE_DIR))
    names = tuple(module_name(source) for source in sorted(built))
    # the event loop's core and the lease table, at least
    assert {"nnrpsim.model.host", "nnrpsim.model.server", "nnrpsim.engine.table"} <= set(names)
    compiled = [importlib.import_module(name).__file__ for name in names]
    assert not any(path.endswith(".py") for path in compiled)
    printed = _interpreted(
        "import importlib, nnrpsim.model as m; print(m.BUILD_STATUS); "
        f"print(*[importlib.import_module(n).__file__ for n in {names}])"
    ).split("\n")
    assert printed[0] == f"interpreted ({INTERPRETED_VARIABLE} is set)"
    assert all(path.endswith(".py") for path in printed[1].split())


@compiled_only
def test_the_shared_library_carries_no_debug_information():
    """setup.py compiles with -g0, not mypyc's -g1: the same machine code, and gcc takes three
    quarters of the time; with debug information the section names hold ``.debug_info``."""
    library = next(PACKAGE_DIR.glob("native__mypyc.*"))
    data = library.read_bytes()
    if not data.startswith(b"\x7fELF"):
        pytest.skip(f"{library.name} is not an ELF library")
    assert b".debug_info" not in data


def _package(tmp_path, sources: dict[str, str], extensions: list[str], record: dict | None):
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name in extensions:
        (tmp_path / name).write_bytes(b"\x7fELF")
    if record is not None:
        (tmp_path / BUILD_RECORD).write_text(json.dumps(record))
    return tmp_path


def test_an_extension_is_current_only_while_its_source_is_what_was_compiled(tmp_path):
    so = ".cpython-311-x86_64-linux-gnu.so"
    compiled = ["engine/table.py", "host.py", "link.py"]  # (a subpackage's too)
    directory = _package(
        tmp_path,
        {"host.py": "x = 1\n", "link.py": "y = 2\n", "plain.py": "z = 3\n"}
        | {"engine/table.py": "t = 1\n", "engine/stream.py": "s = 1\n"},
        [f"host{so}", f"link{so}", f"native__mypyc{so}", f"engine/table{so}"],
        None,
    )
    assert extensions(directory) == compiled
    assert out_of_date(directory) == compiled  # no record: no current build
    record = {name: source_digest(directory / name) for name in compiled}
    (directory / BUILD_RECORD).write_text(json.dumps(record))
    assert out_of_date(directory) == []
    (directory / "link.py").write_text("y = 3\n")
    (directory / "engine/table.py").write_text("t = 2\n")
    assert out_of_date(directory) == ["engine/table.py", "link.py"]
    (directory / "plain.py").write_text("z = 4\n")  # not compiled: no concern of the build
    (directory / "engine/stream.py").write_text("s = 2\n")
    assert out_of_date(directory) == ["engine/table.py", "link.py"]
    assert left_behind(directory) == []


def test_an_extension_the_recorded_build_did_not_make_is_left_behind_not_out_of_date(tmp_path):
    so = ".cpython-311-x86_64-linux-gnu.so"
    sources = {"host.py": "x = 1\n", "engine/table.py": "t = 1\n", "engine/stream.py": "s = 1\n"}
    directory = _package(
        tmp_path,
        sources,
        [f"host{so}", f"engine/table{so}", f"engine/stream{so}"],  # stream's: an earlier build's
        None,  # (written below)
    )
    record = {name: source_digest(directory / name) for name in ("host.py", "engine/table.py")}
    (directory / BUILD_RECORD).write_text(json.dumps(record))
    assert out_of_date(directory) == []  # the build is current
    assert left_behind(directory) == ["engine/stream.py"]
    (directory / "engine/stream.py").write_text("s = 2\n")  # its source is no concern either
    assert out_of_date(directory) == [] and left_behind(directory) == ["engine/stream.py"]
    (directory / BUILD_RECORD).unlink()  # no record: no build is current, none left behind
    assert out_of_date(directory) == extensions(directory) and left_behind(directory) == []


@compiled_only
def test_an_extension_an_earlier_build_left_loads_from_its_source_and_the_build_runs(tmp_path):
    # a copy of the package, with an extension of a module this build does not compile (one an
    # earlier build made, which compiled more): the build's shared library lacks its code
    copy = tmp_path / "nnrpsim"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    compiled = set(extensions(PACKAGE_DIR))
    plain = next(
        path.relative_to(PACKAGE_DIR).as_posix()
        for path in sorted((PACKAGE_DIR / "engine/replay").glob("*.py"))
        if path.relative_to(PACKAGE_DIR).as_posix() not in compiled and path.stem != "__init__"
    )
    suffix = next(  # of this build's extension of frame.py
        suffix
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if (PACKAGE_DIR / f"engine/replay/frame{suffix}").is_file()
    )
    shutil.copy(PACKAGE_DIR / f"engine/replay/frame{suffix}", copy / f"{plain[:-3]}{suffix}")
    assert plain in left_behind(copy)
    name = module_name(plain)
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import nnrpsim, {name} as left, nnrpsim.model.host as host; "
            "print(nnrpsim.BUILD_STATUS, left.__file__.endswith('.py'), host.__file__[-3:])",
        ],
        cwd=tmp_path,  # (the copy, before the installed package)
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout == "compiled True .so\n"
    assert "RuntimeWarning" not in run.stderr


@compiled_only
def test_a_patch_compiled_code_would_not_see_is_refused_and_one_it_would_is_not(monkeypatch):
    refused = "is compiled: mark the test"
    with pytest.raises(pytest.fail.Exception, match=refused):
        monkeypatch.setattr(LeaseTable, "resolve", lambda *args: 0)  # a compiled class's method
    with pytest.raises(pytest.fail.Exception, match=refused):  # a compiled module's class
        monkeypatch.setattr("nnrpsim.engine.table.ScalarColumns", object)
    # a compiled module reads its constants at each use: a patch of one takes effect
    ids = np.arange(4, dtype=np.uint64)
    table = LeaseTable(ObjectCatalog.from_arrays(np.zeros(4), ids, ids, np.full(4, 7)))
    terms = (0, 1_000, 8, None, False, 0, (0, 0))  # a plain grant's, at 0
    assert table._install_scalar(ScalarPut(0, *terms)) is not None
    monkeypatch.setattr("nnrpsim.engine.table.SMALL_BATCH", 0)  # every PUT the general path
    assert table._install_scalar(ScalarPut(1, *terms)) is None


@compiled_only
def test_the_compiled_table_takes_python_ints_and_its_lease_query_numpy_ones_too():
    ids = np.arange(4, dtype=np.uint64)
    table = LeaseTable(ObjectCatalog.from_arrays(np.zeros(4), ids, ids, np.full(4, 7)))
    table.install_one(2, 0, 1_000, 8)
    with pytest.raises(TypeError, match="int object expected"):
        table.resolve(np.int64(2), 5)
    assert table.resolve(2, 5) == 0  # a hit
    assert table.lease(np.int64(2)) == table.lease(2) and table.lease(2).ttl_ms == 1_000


def test_a_source_names_its_module_in_the_package():
    assert module_name("model/host.py") == "nnrpsim.model.host"
    assert module_name("engine/replay/on_table.py") == "nnrpsim.engine.replay.on_table"


def test_the_version_says_how_the_model_runs(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"nnrpsim {__version__}, model {BUILD_STATUS}\n"
    printed = _interpreted("from nnrpsim.cli import main; main(['--version'])")
    assert printed == f"nnrpsim {__version__}, model interpreted (not compiled)\n" or printed == (
        f"nnrpsim {__version__}, model interpreted ({INTERPRETED_VARIABLE} is set)\n"
    )


def test_a_plan_built_with_numpy_numbers_runs_as_with_python_numbers():
    # compiled, a host refuses an np.int64 where its type hints say int: the simulation takes
    # a plan given to it with plain Python numbers
    def plan(number, real):
        built = one_session(
            [(real(10.0 * i), [number(i % 3), number(3)]) for i in range(20)],
            [4096] * 4,
            [5.0] * 4,
            real(400.0),
        )
        session = built.sessions[0]
        session.session_id, session.host = number(7), number(0)
        session.expected_reuse = {number(o): real(n) for o, n in session.expected_reuse.items()}
        built.depends_on = {number(3): number(2)}
        return built

    config = ModelConfig(duration_ms=np.float64(600.0))
    with_numpy = simulate(config, 3, plan(np.int64, np.float64))
    assert digest(with_numpy) == digest(simulate(config, 3, plan(int, float)))
    assert with_numpy.counters["hot_path_frames"] >= 20 and with_numpy.violations == 0
    vector = [
        repr(vector_run(config, plan(n, r))) for n, r in ((np.int64, np.float64), (int, float))
    ]
    assert vector[0] == vector[1]  # (by repr: its latencies are nan)


def test_a_numpy_integer_seed_runs_as_its_python_int():
    # a notebook loops over np.arange; compiled, a hint of plain int would refuse np.int64
    config = ModelConfig(duration_ms=20_000.0)
    assert digest(simulate(config, np.int64(3))) == digest(simulate(config, 3))


def test_a_config_with_numpy_numbers_runs_as_with_python_numbers():
    # a notebook's sweep hands numpy scalars to the configs; they keep Python's
    def config(number, real):
        return ModelConfig(
            duration_ms=real(30_000.0),
            uplink=LinkConfig(latency_ms=real(1.0)),
            server=ServerConfig(workers=number(2), sweep_interval_ms=real(500.0)),
            policy=PolicyConfig(ttl_hint_ms=number(4_000), min_object_bytes=number(2_048)),
            workload=replace(BUSY, max_in_flight_operations=number(2)),
        )

    with_numpy = config(np.int64, np.float64)
    assert type(with_numpy.server.workers) is int and type(with_numpy.duration_ms) is float
    assert digest(simulate(with_numpy, 5)) == digest(simulate(config(int, float), 5))


@pytest.mark.parametrize(
    "draw",
    [
        lambda: synthetic_plan(BUSY, 2, 30_000.0, np.random.SeedSequence(5)),
        lambda: stream_plan(
            ReferenceStream(np.arange(0, 500, 10), np.arange(50) % 7, np.full(50, 4096))
        ),
    ],
)
def test_the_plans_drawn_here_hold_the_python_numbers_they_say(draw):
    # the simulation takes them as they are: a numpy number in them would stop a compiled host
    plan = draw()
    assert plan.python_numbers
    numbers = [plan.depends_on.keys(), plan.depends_on.values()]
    for session in plan.sessions:
        numbers += [(session.session_id, session.host), session.expected_reuse.keys()]
        numbers += [[at for at, _ in session.operations]]
        numbers += [objects for _, objects in session.operations]
    assert all(type(n) in (int, float) for group in numbers for n in group)
    assert with_python_numbers(plan) is plan
