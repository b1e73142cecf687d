"""The loads of an out-of-order S2MM task: one BD per packet, named by the packet's header.

With its control register's ``enable_out_of_order`` set when a task starts, an S2MM
channel (:class:`.channel.Channel`) runs that task as :class:`OutOfOrderWalk` says, in
place of the chain walk (:class:`~aiedma.model.bd.task.TaskWalk`):

* the task's ``repeat_count`` is the number of packets it receives, its ``start_bd`` is
  not used (aie-rt writes 0 there for an out-of-order task);
* every packet starts with a header (:func:`~aiedma.model.bd.packet.parse_packet_header`),
  taken off the stream once the BD before it has all its words; its
  ``out_of_order_bd_id`` names the BD that receives the packet's data words;
* that BD is loaded ``OUT_OF_ORDER_FETCH_LATENCY`` cycles after the header at the
  earliest, as any load (its ``iteration_current`` written back), and runs once, as any
  BD (its lock acquired and released, ``buffer_length`` words or, finish on TLAST, to
  the TLAST); its chain (``use_next_bd``) is not followed and its ``enable_packet`` is
  not looked at (the header is taken before the BD is known);
* the task ends with the BD of its last packet.

Decisions (AMD does not say; docs/decisions.md gives the reasons):

* **decision**: a header naming a BD the channel cannot run (past the kind's BDs, or on
  the memory tile in the other half) sets the status's ``error_bd_unavailable`` and
  stops the channel: no further header or word is taken and no queued task starts; BDs
  already past the header complete. A named BD with ``valid_bd = 0`` (or, S2MM, with
  padding) is loaded as any BD and stops the channel as an in-order one does
  (``error_bd_invalid``, :class:`.channel.Channel`). The flags, and the stop, last until
  the channel is reset.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from ..arch.kinds import DMA_KINDS
from ..bd.descriptor import BufferDescriptor
from ..bd.task import Task, never_written
from ..cycle.contract import OUT_OF_ORDER_FETCH_LATENCY

__all__ = ["OutOfOrderWalk"]

class OutOfOrderWalk:
    """The loads of one out-of-order task (see the module text).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    table : mutable mapping of int to BufferDescriptor
        The DMA's BD table; each load writes ``iteration_current`` back into it.
    task : Task
    channel : int
        The channel's number (the memory tile's BD half).

    Attributes
    ----------
    headers_left : int
        Packets whose header is still to come.
    pending : int or None
        The BD the last header named, not loaded yet.
    error : str or None
        ``"error_bd_unavailable"`` once a header named a BD that is not the channel's
        (the status field it sets), else None.
    """

    def __init__(self, kind: str, table: MutableMapping[int, BufferDescriptor], task: Task,
                 channel: int) -> None:
        self.kind, self.table, self.task = kind, table, task
        self.bds = DMA_KINDS[kind].channel_bds(channel)
        self.headers_left = task.repeat_count
        self.pending: int | None = None
        self.error: str | None = None
        self._ready_at = 0

    @property
    def done(self) -> bool:
        """Every packet's BD has been loaded."""
        return self.headers_left == 0 and self.pending is None

    @property
    def wants_header(self) -> bool:
        """The next packet's header may be taken (its BD is not known yet)."""
        return self.pending is None and self.headers_left > 0 and self.error is None

    def ready(self, cycle: int) -> bool:
        """A BD named by a header may be loaded in ``cycle``."""
        return self.pending is not None and cycle >= self._ready_at

    def take_header(self, bd_id: int, cycle: int) -> None:
        """The header taken in ``cycle`` names BD ``bd_id``: it is loaded from
        ``cycle + OUT_OF_ORDER_FETCH_LATENCY``, or, not the channel's, sets ``error``."""
        self.headers_left -= 1
        if bd_id not in self.bds:
            self.error = "error_bd_unavailable"
            return
        self.pending, self._ready_at = bd_id, cycle + OUT_OF_ORDER_FETCH_LATENCY

    def next(self) -> tuple[int, BufferDescriptor]:
        """Load the BD the last header named: ``(bd_id, bd)``, its iteration written back.
        A BD never written loads as all zeros; one that is not valid (``valid_bd = 0``,
        or padded) is loaded all the same, for the channel to flag when it reaches the
        head of its fetch stage, as an in-order load (:class:`.channel.Channel`)."""
        bd_id, self.pending = self.pending, None
        if bd_id is None:
            raise AssertionError("OutOfOrderWalk.next before a header named a BD")
        bd = self.table.get(bd_id)
        if bd is None:
            return bd_id, never_written(self.kind)
        self.table[bd_id] = bd.next_iteration()
        return bd_id, bd
