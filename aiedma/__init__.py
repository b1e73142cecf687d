"""aiedma: an open golden model, RTL and co-simulation testbench for the AIE-ML DMA.

``aiedma.model`` is the golden model (NumPy only), ``aiedma.hdl`` the Amaranth
RTL and ``aiedma.tb`` the testbenches. The names most users need are
re-exported here.
"""

from importlib.metadata import PackageNotFoundError, version

from .model import (
    AiedmaError,
    BufferDescriptor,
    PortProgram,
    TilingError,
    TilingParameters,
    TraversingParameters,
)

try:
    __version__ = version("aiedma")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "AiedmaError",
    "BufferDescriptor",
    "PortProgram",
    "TilingError",
    "TilingParameters",
    "TraversingParameters",
    "__version__",
]
