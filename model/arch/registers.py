"""Register addresses of a DMA's channel controls, beside the BD table's (``kinds.py``).

Each channel has a *start-queue* register: writing a task's word (``Task.encode()``
in ``model/bd/task.py``) pushes the task onto the channel's queue, and a *status*
register. The addresses are tile-local byte addresses of the AIE-ML register map (AM025;
the same values are in AMD's aie-rt driver, ``xaiemlgbl_params.h``): channel ``n``'s
start queue is 8 bytes after channel ``n - 1``'s (each channel has a control word and
its queue), its status 4 bytes after.

| kind | S2MM 0 queue | MM2S 0 queue | S2MM 0 status | MM2S 0 status | lock 0 value |
|---|---|---|---|---|---|
| core tile | 0x1DE04 | 0x1DE14 | 0x1DF00 | 0x1DF10 | 0x1F000 |
| memory tile | 0xA0604 | 0xA0634 | 0xA0660 | 0xA0680 | 0xC0000 |
| shim | 0x1D204 | 0x1D214 | 0x1D220 | 0x1D228 | 0x14000 |

A lock's value register holds its state (0..63); lock ``n``'s is 0x10 ``n`` after lock 0's.
"""

from __future__ import annotations

from ..errors import AiedmaError, field_error
from .directions import check_direction
from .kinds import DMA_KINDS, check_kind

__all__ = [
    "LOCK_VALUE_BASE",
    "LOCK_VALUE_STRIDE",
    "START_QUEUE_BASE",
    "START_QUEUE_STRIDE",
    "STATUS_BASE",
    "STATUS_FIELDS",
    "STATUS_STRIDE",
    "lock_value_address",
    "start_queue_address",
    "status_address",
]

START_QUEUE_STRIDE = 8
"""Bytes between the control register groups of consecutive channels."""

START_QUEUE_BASE: dict[tuple[str, str], int] = {
    ("tile", "s2mm"): 0x1DE04, ("tile", "mm2s"): 0x1DE14,
    ("memtile", "s2mm"): 0xA0604, ("memtile", "mm2s"): 0xA0634,
    ("shim", "s2mm"): 0x1D204, ("shim", "mm2s"): 0x1D214,
}
"""Start-queue register of channel 0, per kind and direction."""


STATUS_STRIDE = 4
"""Bytes between consecutive channels' status registers."""

STATUS_BASE: dict[tuple[str, str], int] = {
    ("tile", "s2mm"): 0x1DF00, ("tile", "mm2s"): 0x1DF10,
    ("memtile", "s2mm"): 0xA0660, ("memtile", "mm2s"): 0xA0680,
    ("shim", "s2mm"): 0x1D220, ("shim", "mm2s"): 0x1D228,
}
"""Status register of channel 0, per kind and direction."""


STATUS_FIELDS: dict[str, tuple[int, int]] = {
    "status": (0, 2), "error_bd_invalid": (11, 1), "task_queue_overflow": (18, 1),
    "channel_running": (19, 1), "task_queue_size": (20, 3), "cur_bd": (24, 6),
}
"""``(lsb, width)`` of the status-register fields a channel reports (AM025's names; the
others, stall causes and access errors, read 0). ``status`` is 0 idle, 2 running."""


def _check_channel(kind: str, direction: str, index: int) -> None:
    check_kind(kind)
    check_direction(direction, "channel", AiedmaError)
    count = DMA_KINDS[kind].channels
    if not 0 <= index < count:
        raise field_error(AiedmaError, "index", index,
                          f"a {kind} DMA has {direction.upper()} channels 0..{count - 1}")


def start_queue_address(kind: str, direction: str, index: int) -> int:
    """The start-queue register address of a channel.

    Raises
    ------
    AiedmaError
        For an unknown kind, direction or channel index.
    """
    _check_channel(kind, direction, index)
    return START_QUEUE_BASE[kind, direction] + START_QUEUE_STRIDE * index


def status_address(kind: str, direction: str, index: int) -> int:
    """The status register address of a channel.

    Raises
    ------
    AiedmaError
        For an unknown kind, direction or channel index.
    """
    _check_channel(kind, direction, index)
    return STATUS_BASE[kind, direction] + STATUS_STRIDE * index


LOCK_VALUE_STRIDE = 0x10
"""Bytes between consecutive locks' value registers."""

LOCK_VALUE_BASE: dict[str, int] = {"tile": 0x1F000, "memtile": 0xC0000, "shim": 0x14000}
"""Value register of lock 0 of the tile's own locks, per kind."""


def lock_value_address(kind: str, lock: int) -> int:
    """The value register of the tile's own lock ``lock``.

    Raises
    ------
    AiedmaError
        For an unknown kind or lock.
    """
    check_kind(kind)
    count = DMA_KINDS[kind].locks
    if not 0 <= lock < count:
        raise field_error(AiedmaError, "lock", lock, f"a {kind} has locks 0..{count - 1}")
    return LOCK_VALUE_BASE[kind] + LOCK_VALUE_STRIDE * lock
