"""Register addresses of a DMA's channel controls, beside the BD table's (``kinds.py``).

Each channel has a *control* register, a *start-queue* register 4 bytes after it
(writing a task's word, ``Task.encode()`` in ``model/bd/task.py``, pushes the task onto
the channel's queue), and a *status* register. The addresses are tile-local byte
addresses of the AIE-ML register map (AM025; the same values are in AMD's aie-rt
driver, ``xaiemlgbl_params.h``): channel ``n``'s control and start queue are 8 bytes
after channel ``n - 1``'s, its status 4 bytes after.

| kind | S2MM 0 ctrl | queue | MM2S 0 ctrl | queue | S2MM 0 status | MM2S 0 status | lock 0 |
|---|---|---|---|---|---|---|---|
| core tile | 0x1DE00 | 0x1DE04 | 0x1DE10 | 0x1DE14 | 0x1DF00 | 0x1DF10 | 0x1F000 |
| memory tile | 0xA0600 | 0xA0604 | 0xA0630 | 0xA0634 | 0xA0660 | 0xA0680 | 0xC0000 |
| shim | 0x1D200 | 0x1D204 | 0x1D210 | 0x1D214 | 0x1D220 | 0x1D228 | 0x14000 |

A lock's value register holds its state (0..63); lock ``n``'s is 0x10 ``n`` after lock 0's.
An S2MM channel's finish-on-TLAST count FIFO pop register (``FOT_COUNT_BASE``) is at
0x1DF20 (core tile) or 0xA06C8 (memory tile), channel ``n``'s 4 ``n`` bytes after; its
Current_Write_Count register (``WRITE_COUNT_BASE``, read-only, the field
``WRITE_COUNT_BITS`` wide) at 0x1DF18 (core tile, bits 13:0), 0xA06B0 (memory tile,
16:0) or 0x1D230 (shim, 17:0), channel ``n``'s 4 ``n`` bytes after (AM025; aie-rt's
``XAIEMLGBL_{MEMORY,MEM_TILE,NOC}_MODULE_DMA_S2MM_CURRENT_WRITE_COUNT_*``).

The control register's fields (``CONTROL_FIELDS``, aie-rt's
``XAIEMLGBL_{MEMORY,MEM_TILE,NOC}_MODULE_DMA_{S2MM,MM2S}_0_CTRL_*``):

| field | bits | core tile, memory tile | shim |
|---|---|---|---|
| ``reset`` | 1 | S2MM, MM2S | - |
| ``pause_mem`` | 1 | - | S2MM, MM2S |
| ``pause_stream`` | 2 | - | S2MM, MM2S |
| ``enable_out_of_order`` | 3 | S2MM | S2MM |
| ``decompression_enable`` | 4 | S2MM | - |
| ``compression_enable`` | 4 | MM2S | - |
| ``controller_id`` | 15:8 | S2MM, MM2S | S2MM, MM2S |
| ``fot_mode`` | 17:16 | S2MM | S2MM |

Every other bit is reserved. **decision**: a write stores the fields and drops the
reserved bits (they read back 0), as a register that has no flip-flop there does; the
core tile's bit 0, inside aie-rt's mask but named by no field, is taken as reserved.

**decision** (the build without the (de)compressors, ``compression=False`` on the model's
and the RTL's DMA): the two enables are not implemented (:data:`COMPRESSION_FIELDS`),
as an optional feature left out of an FPGA IP: they read 0 and a write to them is
dropped, like a reserved bit; a BD's ``enable_compression`` then moves its words
uncompressed, as it does with the enable clear (docs/decisions.md).
"""

from __future__ import annotations

from ..errors import AiedmaError, field_error
from .directions import check_direction
from .kinds import DMA_KINDS, check_kind

__all__ = [
    "COMPRESSING_KINDS",
    "COMPRESSION_FIELDS",
    "CONTROL_BASE",
    "CONTROL_FIELDS",
    "FOT_COUNT_BASE",
    "FOT_COUNT_DEPTH",
    "FOT_COUNT_FIELDS",
    "FOT_MODES",
    "LOCK_VALUE_BASE",
    "LOCK_VALUE_STRIDE",
    "START_BD_MASK",
    "START_QUEUE_BASE",
    "START_QUEUE_STRIDE",
    "STATUS_BASE",
    "STATUS_FIELDS",
    "STATUS_STRIDE",
    "WRITE_COUNT_BASE",
    "WRITE_COUNT_BITS",
    "control_address",
    "control_mask",
    "fot_count_address",
    "fot_count_word",
    "lock_value_address",
    "start_queue_address",
    "status_address",
    "status_text",
    "write_count_address",
]

START_QUEUE_STRIDE = 8
"""Bytes between the control register groups of consecutive channels."""

START_QUEUE_BASE: dict[tuple[str, str], int] = {
    ("tile", "s2mm"): 0x1DE04, ("tile", "mm2s"): 0x1DE14,
    ("memtile", "s2mm"): 0xA0604, ("memtile", "mm2s"): 0xA0634,
    ("shim", "s2mm"): 0x1D204, ("shim", "mm2s"): 0x1D214,
}
"""Start-queue register of channel 0, per kind and direction."""


CONTROL_BASE: dict[tuple[str, str], int] = {
    key: address - 4 for key, address in START_QUEUE_BASE.items()}
"""Control register of channel 0, per kind and direction: 4 bytes before its start queue
(channel ``n``'s at ``START_QUEUE_STRIDE`` n after it, as the start queue's)."""

_TILE_CONTROL = {
    "s2mm": {"reset": (1, 1), "enable_out_of_order": (3, 1), "decompression_enable": (4, 1),
             "controller_id": (8, 8), "fot_mode": (16, 2)},
    "mm2s": {"reset": (1, 1), "compression_enable": (4, 1), "controller_id": (8, 8)},
}
_SHIM_CONTROL = {
    "s2mm": {"pause_mem": (1, 1), "pause_stream": (2, 1), "enable_out_of_order": (3, 1),
             "controller_id": (8, 8), "fot_mode": (16, 2)},
    "mm2s": {"pause_mem": (1, 1), "pause_stream": (2, 1), "controller_id": (8, 8)},
}

CONTROL_FIELDS: dict[tuple[str, str], dict[str, tuple[int, int]]] = {
    (kind, direction): (_SHIM_CONTROL if kind == "shim" else _TILE_CONTROL)[direction]
    for kind, direction in START_QUEUE_BASE
}
"""``(lsb, width)`` of the control-register fields, per kind and direction (aie-rt's names in
snake case). A shim channel has no reset bit (aie-rt's ``XAie_DmaChannelReset`` refuses a
shim) but pauses its memory and stream sides."""


COMPRESSION_FIELDS: dict[str, str] = {"mm2s": "compression_enable",
                                      "s2mm": "decompression_enable"}
"""The control-register field that turns a channel's compressor (MM2S) or decompressor
(S2MM) on; core tile and memory tile only. A DMA built without them has neither field."""

COMPRESSING_KINDS: tuple[str, ...] = tuple(
    kind for kind in DMA_KINDS if COMPRESSION_FIELDS["mm2s"] in CONTROL_FIELDS[kind, "mm2s"])
"""The kinds whose channels have (de)compressors (AM020: core tile and memory tile): those
whose control register has the enable."""


def control_mask(kind: str, direction: str, *, compression: bool = True) -> int:
    """The bits of a channel's control register that hold a field (the others are reserved).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    direction : {"mm2s", "s2mm"}
    compression : bool
        False for a DMA built without the (de)compressors: the enable
        (:data:`COMPRESSION_FIELDS`) is left out, so it reads 0 (the module's decision).

    Raises
    ------
    AiedmaError
        For an unknown kind or direction.
    """
    _check_channel(kind, direction, 0)
    fields = CONTROL_FIELDS[kind, direction]
    left_out = () if compression else (COMPRESSION_FIELDS[direction],)
    return sum(((1 << width) - 1) << lsb
               for name, (lsb, width) in fields.items() if name not in left_out)


START_BD_MASK: dict[str, int] = {"tile": 0xF, "memtile": 0x3F, "shim": 0xF}
"""The start-queue register's Start_BD_ID field per kind (aie-rt ``xaiemlgbl_params.h``:
``..._START_QUEUE_START_BD_ID_MASK`` 0xF on the core tile, 0x3F on the memory tile,
``..._TASK_QUEUE_START_BD_ID_MASK`` 0xF on the shim); a write's bits above it are
reserved and dropped, so a core tile or shim start-queue word always names one of its
16 BDs."""

STATUS_STRIDE = 4
"""Bytes between consecutive channels' status registers."""

STATUS_BASE: dict[tuple[str, str], int] = {
    ("tile", "s2mm"): 0x1DF00, ("tile", "mm2s"): 0x1DF10,
    ("memtile", "s2mm"): 0xA0660, ("memtile", "mm2s"): 0xA0680,
    ("shim", "s2mm"): 0x1D220, ("shim", "mm2s"): 0x1D228,
}
"""Status register of channel 0, per kind and direction."""


STATUS_FIELDS: dict[str, tuple[int, int]] = {
    "status": (0, 2), "stalled_lock_acq": (2, 1), "stalled_lock_rel": (3, 1),
    "stalled_stream": (4, 1), "stalled_tct": (5, 1),
    "error_lock_access_to_unavailable": (8, 1), "error_dm_access_to_unavailable": (9, 1),
    "error_bd_unavailable": (10, 1),
    "error_bd_invalid": (11, 1), "error_fot_length_exceeded": (12, 1),
    "error_fot_bds_per_task": (13, 1), "task_queue_overflow": (18, 1),
    "channel_running": (19, 1), "task_queue_size": (20, 3), "cur_bd": (24, 6),
}
"""``(lsb, width)`` of the status-register fields a channel reports (AM025's
DMA_{S2MM,MM2S}_Status names in snake case; the others read 0). ``status`` is 0 idle, 2
running. The stall bits say why the channel waits in the cycle the register is read:
``stalled_lock_acq`` (bit 2), ``stalled_lock_rel`` (bit 3), ``stalled_stream`` (bit 4:
AM025's Stalled_Stream_Backpressure on MM2S, Stalled_Stream_Starvation on S2MM) and
``stalled_tct`` (bit 5: Stalled_TCT on MM2S, Stalled_TCT_or_Count_FIFO_Full on S2MM);
what each means in this project's channel is a decision (docs/decisions.md, "Channel
status"). The two finish-on-TLAST errors are S2MM bits (bit 12, ``Buffer_Length`` words
received without a TLAST; bit 13, a task of more BDs than the count FIFO holds in mode
"counts with task tokens"); an MM2S channel reads them 0. ``error_bd_unavailable`` (bit 10,
aie-rt's ``ERROR_BD_UNAVAILABLE``) is set by an out-of-order S2MM whose packet header names
a BD that is not the channel's, and on the memory tile by a task whose start BD is not the
channel's or a chain to one (docs/decisions.md). Bits 8 (``error_lock_access_to_unavailable``) and 9
(``error_dm_access_to_unavailable``) are memory-tile bits of both directions (aie-rt
``xaiemlgbl_params.h``, ``XAIEMLGBL_MEM_TILE_MODULE_DMA_{S2MM,MM2S}_STATUS_0_ERROR_*``;
``xaie_util_status.h``: "Specific only to MEM Tile"); a core tile or shim channel reads
them 0. Every BD error stops the channel until a channel reset (docs/cycle.md "Faults")."""

def status_text(word: int) -> str:
    """A status word as a person reads it: the word, then ``running`` or ``idle``, every
    flag set (``STATUS_FIELDS`` names), the queue size and the current BD.

    Examples
    --------
    >>> status_text(0x01080006)
    '0x01080006: running, stalled_lock_acq, queue 0, cur_bd 1'
    """
    parts = ["running" if _field(word, "channel_running") else "idle"]
    parts += [name for name, (_, width) in STATUS_FIELDS.items()
              if width == 1 and name != "channel_running" and _field(word, name)]
    parts += [f"queue {_field(word, 'task_queue_size')}", f"cur_bd {_field(word, 'cur_bd')}"]
    return f"{word:#010x}: {', '.join(parts)}"


def _field(word: int, name: str) -> int:
    lsb, width = STATUS_FIELDS[name]
    return word >> lsb & ((1 << width) - 1)


FOT_COUNT_FIELDS: dict[str, tuple[int, int]] = {
    "write_count": (0, 18), "bd_id": (24, 6), "last_in_task": (30, 1), "valid": (31, 1),
}
"""``(lsb, width)`` of an S2MM channel's finish-on-TLAST count FIFO pop register (AM025's
DMA_S2MM_FoT_Count_FIFO_Pop: the words a BD wrote, its ID, whether it ended its task,
and ``valid``, 0 when the FIFO is empty or the channel is not in mode 3)."""

FOT_MODES = ("disabled", "no_counts", "counts_with_task_tokens", "counts_from_mm_register")
"""The control register's ``fot_mode`` values, in order (AM025's FoT_Mode encodings)."""

FOT_COUNT_DEPTH = 4
"""Entries an S2MM channel's finish-on-TLAST count FIFO holds (AM025 names the FIFO and
its "full" conditions but not its depth: a decision, docs/decisions.md)."""

FOT_COUNT_BASE: dict[str, int] = {"tile": 0x1DF20, "memtile": 0xA06C8}
"""The count FIFO pop register of S2MM channel 0 (channel ``n``'s ``4 n`` bytes after),
per kind; AM025 lists none for the shim."""


def fot_count_word(bd_id: int, words: int, last_in_task: bool) -> int:
    """A count FIFO entry as its pop register reads it (``valid`` set).

    Raises
    ------
    AiedmaError
        For a BD ID or a word count wider than its field.
    """
    word = 1 << FOT_COUNT_FIELDS["valid"][0]
    for name, value in (("bd_id", bd_id), ("write_count", words),
                        ("last_in_task", int(last_in_task))):
        lsb, width = FOT_COUNT_FIELDS[name]
        if not 0 <= value < 1 << width:
            raise field_error(AiedmaError, name, value,
                              f"the count FIFO's field holds 0..{(1 << width) - 1}")
        word |= value << lsb
    return word


def fot_count_address(kind: str, index: int) -> int:
    """The count FIFO pop register address of S2MM channel ``index``.

    Raises
    ------
    AiedmaError
        For an unknown kind or channel, or the shim (no such register).
    """
    _check_channel(kind, "s2mm", index)
    if kind not in FOT_COUNT_BASE:
        raise field_error(AiedmaError, "kind", kind,
                          "AM025 has a count FIFO pop register on the core and memory tiles only")
    return FOT_COUNT_BASE[kind] + STATUS_STRIDE * index


WRITE_COUNT_BASE: dict[str, int] = {"tile": 0x1DF18, "memtile": 0xA06B0, "shim": 0x1D230}
"""The Current_Write_Count register of S2MM channel 0 (channel ``n``'s ``4 n`` bytes after),
per kind."""

WRITE_COUNT_BITS: dict[str, int] = {"tile": 14, "memtile": 17, "shim": 18}
"""The width of the Current_Write_Count field (bits ``WRITE_COUNT_BITS - 1 .. 0``; the
other bits read 0), per kind: AM025's 13:0 on the core tile, and aie-rt's widths on the
memory tile and the shim."""


def write_count_address(kind: str, index: int) -> int:
    """The Current_Write_Count register address of S2MM channel ``index``.

    Raises
    ------
    AiedmaError
        For an unknown kind or channel.
    """
    _check_channel(kind, "s2mm", index)
    return WRITE_COUNT_BASE[kind] + STATUS_STRIDE * index


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


def control_address(kind: str, direction: str, index: int) -> int:
    """The control register address of a channel (4 bytes before its start queue).

    Raises
    ------
    AiedmaError
        For an unknown kind, direction or channel index.
    """
    _check_channel(kind, direction, index)
    return CONTROL_BASE[kind, direction] + START_QUEUE_STRIDE * index


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
