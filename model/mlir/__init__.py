"""mlir-aie's DMA notation read into the project's BDs (docs/mlir.md).

:func:`read_mlir` reads an mlir-aie file (the AIE dialect's ``aie.device``, its tiles,
buffers, locks, ``aie.mem`` / ``aie.memtile_dma`` / ``aie.shim_dma`` programs and the
runtime sequence) into an :class:`MlirDesign` of
:class:`~aiedma.model.bd.descriptor.BufferDescriptor` objects with their locks, chains
and tile kinds. This package is the only one that imports ``lark``: ``import
aiedma.model`` does not load it.
"""

from .design import (
    Buffer,
    Chain,
    DesignBD,
    HostBuffer,
    Lock,
    MlirDesign,
    MlirError,
    MlirWarning,
    RuntimeStep,
    Tile,
)
from .reader import read_mlir
from .units import Access, access_fields, writebd_fields

__all__ = [
    "Access",
    "Buffer",
    "Chain",
    "DesignBD",
    "HostBuffer",
    "Lock",
    "MlirDesign",
    "MlirError",
    "MlirWarning",
    "RuntimeStep",
    "Tile",
    "access_fields",
    "read_mlir",
    "writebd_fields",
]
