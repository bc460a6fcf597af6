"""nnrpsim: a discrete-event performance simulator of the NNRP/1 cache capability and leases.

The study API (``load_scenario``, ``validate``, ``run``, ``sweep``) is imported on first use,
so that the pure layers (``nnrpsim.protocol``, ``nnrpsim.engine``) never pull in SimPy or
pandas.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from .compiled import STATUS as BUILD_STATUS  # first: where the compiled modules load from

try:
    __version__ = version("nnrpsim")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

_API = {
    "load_scenario": "nnrpsim.scenario",
    "Scenario": "nnrpsim.scenario",
    "ScenarioError": "nnrpsim.scenario",
    "run": "nnrpsim.study",
    "sweep": "nnrpsim.study",
    "StudyResult": "nnrpsim.study",
    "StudyWarning": "nnrpsim.checks",
    "plot_study": "nnrpsim.plots",
    "compare": "nnrpsim.differences",
    "run_records": "nnrpsim.one_run",
    "RunRecords": "nnrpsim.one_run",
    "validate": "nnrpsim.validation",
    "Validation": "nnrpsim.validation",
}


def __getattr__(name: str):
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module 'nnrpsim' has no attribute {name!r}")


__all__ = ["BUILD_STATUS", "__version__", *_API]
