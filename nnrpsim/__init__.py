"""nnrpsim: a discrete-event performance simulator of the NNRP/1 cache capability and leases."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("nnrpsim")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
