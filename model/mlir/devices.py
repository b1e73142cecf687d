"""The AIE-ML devices mlir-aie names, and which rows of each hold which tiles.

Row 0 is the shim on every device; memory tiles sit in the rows above it (mlir-aie's
target models: ``npu1*`` and ``npu2*`` one row, ``xcve2302`` one row, ``xcve2802`` two
rows); core tiles fill the rest.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEVICES", "Device", "device_named"]


@dataclass(frozen=True)
class Device:
    """One device family: its memory-tile rows."""

    name: str
    memtile_rows: tuple[int, ...]

    def kind(self, row: int) -> str:
        """The DMA kind of a tile in ``row``."""
        if row == 0:
            return "shim"
        return "memtile" if row in self.memtile_rows else "tile"


DEVICES: dict[str, Device] = {d.name: d for d in (
    Device("npu1", (1,)), Device("npu2", (1,)),
    Device("xcve2302", (1,)), Device("xcve2802", (1, 2)),
)}
"""AIE-ML device families by the name's stem (``npu1_4col`` is ``npu1``)."""


def device_named(name: str) -> Device | None:
    """The family of ``name`` (``npu1_1col``, ``npu2``, ``xcve2802``), None if not AIE-ML."""
    stem = name.split("_", 1)[0]
    return DEVICES.get(stem)
