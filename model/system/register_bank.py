"""A DMA's registers as a host reads and writes them while its channels are paused.

:class:`RegisterBank` is the golden model of a register bus in front of a DMA
(the AXI4-Lite slave, ``hdl/axi_lite.py``): each access is taken or refused by
:func:`~aiedma.model.arch.register_map.access_taken`, and a taken one changes and shows
what the RTL DMA (``hdl/dma.py``) changes and shows, with no channel taking a BD
(its ``pause`` held high), so no register moves except by a host's write:

* a BD word reads back as written (all 32 bits);
* a lock value keeps the written word's low six bits (the lock's state, 0..63);
* a start-queue write pushes a task: the channel's status shows the queue's size (at
  most :data:`~.channel.TASK_QUEUE_DEPTH`), ``channel_running`` and ``status`` 2 (running)
  while it holds one, and a push onto a full queue sets ``task_queue_overflow`` and
  is lost;
* a status word shows that and nothing else (``cur_bd`` 0: nothing was fetched; no
  stall bit: a paused channel waits for nothing);
* a read of a start queue gives 0, and of an S2MM channel's Current_Write_Count 0 (no
  word was written); a write to a status register clears
  ``task_queue_overflow`` where it writes a 1 to that bit (AM025: write 1 to clear) and
  changes nothing else;
* a control word reads back with its reserved bits 0; while its ``reset`` bit reads 1
  the channel is held in reset: its queue is empty, its status clear, a push is lost
  (the channel model's decision, docs/decisions.md).

What a running channel shows is the channel model's (``model/system/channel.py``); the
whole-DMA regressions compare that, this module only the bus in front of it.
"""

from __future__ import annotations

from ..arch.kinds import DMA_KINDS, check_kind
from ..arch.register_map import ALL_BYTES, access_taken, register_at
from ..arch.registers import CONTROL_FIELDS, STATUS_FIELDS, control_mask
from .channel import TASK_QUEUE_DEPTH
from .locks import LOCK_VALUE_MAX

__all__ = ["RegisterBank"]


class RegisterBank:
    """The registers of one paused DMA of ``kind``, all 0 after reset.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    compression : bool
        False: the DMA built without the (de)compressors, whose enables read 0
        (:func:`~aiedma.model.arch.registers.control_mask`).
    """

    def __init__(self, kind: str, *, compression: bool = True) -> None:
        self.kind = check_kind(kind)
        self.compression = compression
        self.bd_words: dict[int, int] = {}
        self.locks = [0] * DMA_KINDS[kind].locks
        self.queued: dict[tuple[str, int], int] = {}
        self.overflow: set[tuple[str, int]] = set()
        self.controls: dict[tuple[str, int], int] = {}

    def write(self, address: int, value: int, strobe: int = ALL_BYTES) -> bool:
        """Apply a write; True if it is taken (OKAY), False if refused (nothing changes)."""
        if not access_taken(self.kind, address, write=True, strobe=strobe):
            return False
        register = register_at(self.kind, address & ~3)
        value &= 0xFFFF_FFFF
        if register.role == "bd":
            self.bd_words[register.address] = value
        elif register.role == "lock_value":
            self.locks[register.index] = value & LOCK_VALUE_MAX
        elif register.role == "control":
            channel = (register.direction, register.index)
            self.controls[channel] = value & control_mask(self.kind, register.direction,
                                                          compression=self.compression)
            self._hold(channel)
        elif register.role == "status":
            lsb, _ = STATUS_FIELDS["task_queue_overflow"]
            if value >> lsb & 1:
                self.overflow.discard((register.direction, register.index))
        elif register.role == "start_queue":
            channel = (register.direction, register.index)
            if self._hold(channel):
                pass
            elif self.queued.get(channel, 0) == TASK_QUEUE_DEPTH:
                self.overflow.add(channel)
            else:
                self.queued[channel] = self.queued.get(channel, 0) + 1
        return True

    def read(self, address: int) -> tuple[bool, int]:
        """A read: (taken, the word), the word 0 where refused or nothing is readable."""
        if not access_taken(self.kind, address, write=False):
            return False, 0
        register = register_at(self.kind, address & ~3)
        if register.role == "bd":
            return True, self.bd_words.get(register.address, 0)
        if register.role == "lock_value":
            return True, self.locks[register.index]
        if register.role == "control":
            return True, self.controls.get((register.direction, register.index), 0)
        if register.role == "status":
            return True, self.status(register.direction, register.index)
        return True, 0

    def _hold(self, channel: tuple[str, int]) -> bool:
        """A channel whose reset bit reads 1 is held empty; True if it is."""
        lsb, _ = CONTROL_FIELDS[self.kind, channel[0]].get("reset", (None, 0))
        if lsb is None or not self.controls.get(channel, 0) >> lsb & 1:
            return False
        self.queued.pop(channel, None)
        self.overflow.discard(channel)
        return True

    def status(self, direction: str, index: int) -> int:
        """The status word of a paused channel (``STATUS_FIELDS``)."""
        size = self.queued.get((direction, index), 0)
        fields = {"status": 2 if size else 0, "stalled_lock_acq": 0, "stalled_lock_rel": 0,
                  "stalled_stream": 0, "stalled_tct": 0, "error_bd_unavailable": 0,
                  "error_bd_invalid": 0, "error_lock_access_to_unavailable": 0,
                  "error_dm_access_to_unavailable": 0,
                  "error_fot_length_exceeded": 0, "error_fot_bds_per_task": 0,
                  "task_queue_overflow": int((direction, index) in self.overflow),
                  "channel_running": int(size > 0), "task_queue_size": size, "cur_bd": 0}
        word = 0
        for name, (lsb, _) in STATUS_FIELDS.items():
            word |= fields[name] << lsb
        return word
