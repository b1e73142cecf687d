"""Register addresses of a DMA's channel controls, beside the BD table's (``kinds.py``).

Each channel has a *start-queue* register: writing a task's word (``Task.encode()``
in ``model/bd/task.py``) pushes the task onto the channel's queue. The addresses are
tile-local byte addresses from the AIE-ML register reference (AM025): a core tile's
S2MM 0/1 at 0x1DE04/0x1DE0C and MM2S 0/1 at 0x1DE14/0x1DE1C; a memory tile's S2MM
``n`` at 0xA0604 + 8 n and MM2S ``n`` at 0xA0634 + 8 n. A lock's value register holds
its state (0..63): a core tile's lock ``n`` at 0x1F000 + 0x10 n, a memory tile's at
0xC0000 + 0x10 n.

**decision**: the shim's start-queue and lock addresses are not written here: the project's
sources do not state them, and a guessed address would be worse than none. Asking for
one is an error that says so.
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
    "lock_value_address",
    "start_queue_address",
]

START_QUEUE_STRIDE = 8
"""Bytes between the control register groups of consecutive channels."""

START_QUEUE_BASE: dict[tuple[str, str], int] = {
    ("tile", "s2mm"): 0x1DE04, ("tile", "mm2s"): 0x1DE14,
    ("memtile", "s2mm"): 0xA0604, ("memtile", "mm2s"): 0xA0634,
}
"""Start-queue register of channel 0, per kind and direction."""


def start_queue_address(kind: str, direction: str, index: int) -> int:
    """The start-queue register address of a channel.

    Raises
    ------
    AiedmaError
        For an unknown kind, direction or channel index, or the shim (not known here).
    """
    check_kind(kind)
    check_direction(direction, "channel", AiedmaError)
    count = DMA_KINDS[kind].channels
    if not 0 <= index < count:
        raise field_error(AiedmaError, "index", index,
                          f"a {kind} DMA has {direction.upper()} channels 0..{count - 1}")
    if (kind, direction) not in START_QUEUE_BASE:
        raise field_error(AiedmaError, "kind", kind, "the shim's start-queue addresses are not "
                          "known to this project (model/arch/registers.py)")
    return START_QUEUE_BASE[kind, direction] + START_QUEUE_STRIDE * index


LOCK_VALUE_STRIDE = 0x10
"""Bytes between consecutive locks' value registers."""

LOCK_VALUE_BASE: dict[str, int] = {"tile": 0x1F000, "memtile": 0xC0000}
"""Value register of lock 0 of the tile's own locks, per kind."""


def lock_value_address(kind: str, lock: int) -> int:
    """The value register of the tile's own lock ``lock``.

    Raises
    ------
    AiedmaError
        For an unknown kind or lock, or the shim (not known here).
    """
    check_kind(kind)
    if kind not in LOCK_VALUE_BASE:
        raise field_error(AiedmaError, "kind", kind, "the shim's lock registers are not known "
                          "to this project (model/arch/registers.py)")
    count = DMA_KINDS[kind].locks
    if not 0 <= lock < count:
        raise field_error(AiedmaError, "lock", lock, f"a {kind} has locks 0..{count - 1}")
    return LOCK_VALUE_BASE[kind] + LOCK_VALUE_STRIDE * lock
