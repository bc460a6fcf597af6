"""The exploration notebook executes headless (nbclient) with small parameters."""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

import nnrpsim
from tests.conftest import ROOT

nbclient = pytest.importorskip("nbclient")


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_explore_notebook_runs(tmp_path, small_yaml, engine):
    results = tmp_path / "results"
    nnrpsim.run(small_yaml, out=results, jobs=1, progress=False)
    notebook = nbformat.read(ROOT / "notebooks/explore.ipynb", as_version=4)
    (parameters,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    parameters.source = (
        f"RESULTS = {str(results)!r}\nTTL_FRACTION = 0.3\nINVALIDATION_RATE = 0.01\n"
        "GPU_BUDGET_MIB = 64\nSERVER_WORKERS = 2\nDURATION = '30s'\nWARMUP = '5s'\n"
        "INTERACTIVE = True\n"
        f"ENGINE = {engine!r}"
    )
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        # a cell's printed text in one output: the kernel sends it as it flushes, and on a
        # busy machine a flush can fall within a line ("baseline:" apart from its items)
        coalesce_streams=True,
    )
    client.execute()
    outputs = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    ]
    assert not [o for o in outputs if o.output_type == "error"]
    text = " ".join(
        str(o.get("data", {}).get("text/plain", "")) + o.get("text", "") for o in outputs
    )
    assert "hit_rate" in text and "peak_server_load" in text and "no results" not in text
    assert "warning: all points: the GPU memory held" in text  # the study's, from its folder
    (latency,) = [line for line in text.splitlines() if line.startswith("p99_latency_ms")]
    assert latency.endswith("NaN") == (engine == "vector")  # the engine chosen ran
    (settled,) = [line for line in text.splitlines() if line.startswith("memory_settled_s")]
    assert not settled.endswith("NaN")  # (either engine's run has samples to judge)
    assert "baseline: ttl_fraction=0.5" in text  # compare's own baseline, and the differences
    assert "baseline_point" in text
    assert "sessions at once" in text  # the workload's closed-form means
    assert "one run draws" in text and "of memory for it" in text  # and one run's size
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    # the finished study's curve; on the DES one run's latencies and memory; the TTL
    # guidance's hit rate, savings and trade-off
    assert len(images) == (6 if engine == "des" else 4)
    # one run's references by outcome and cause (its hits and first installs among them)
    records = "one run's records: set ENGINE to des"
    assert (records in text) == (engine == "vector")
    if engine == "des":
        # the run's memory held on average after the warm-up: its mean_gpu_bytes (both
        # printed to four figures), above its live bytes
        (held,) = [line for line in text.splitlines() if "held on average" in line]
        average, mean, live = (
            float(word) for word in held.split("held on average")[1].split() if word[0].isdigit()
        )
        assert average == mean >= live > 0
        (outcomes,) = [o for o in outputs if "outcome" in o.get("data", {}).get("text/plain", "")]
        table = outcomes["data"]["text/plain"]
        assert "references" in table and "hit" in table and "installed" in table
    assert "host_policy.ttl_fraction" in text and "topology.gpu_memory" in text  # best TTLs


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        ("module://matplotlib_inline.backend_inline", "module://matplotlib_inline.backend_inline"),
        ("", "agg"),
    ],
)
def test_importing_the_plots_keeps_a_notebooks_backend(chosen, expected):
    """A notebook's kernel sets MPLBACKEND to draw inline: importing ``nnrpsim.plots`` after
    ``%matplotlib inline`` must not turn its figures into files only (Agg), which it does
    where nothing was chosen (the command line, worker processes, CI)."""
    check = "import matplotlib, nnrpsim.plots; print(matplotlib.get_backend())"
    env = {**os.environ, "MPLBACKEND": chosen}
    done = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True)
    assert done.stdout.strip().lower() == expected, done.stderr
