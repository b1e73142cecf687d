"""A tile's whole DMA in RTL: its channels, one shared BD table, its lock unit, one register port.

:class:`DMA` is what a host programs through the AIE-ML register map
(``model/arch/registers.py``, docs/bd.md "Registers"):

* **BD words** at the kind's BD addresses go to the :class:`~.bd_table.SharedBDTable`,
  whose one fetch port serves the channels in round robin (MM2S 0.., then S2MM 0..);
* a **start-queue** word pushes a task onto that channel's queue (each
  :class:`~.channel.Channel` decodes its own address);
* a **lock value** register sets one of the tile's own locks in the
  :class:`~.lock_unit.LockUnit` (and reads it back);
* a channel's **status** register reads its state (``STATUS_FIELDS``: running, task
  queue size and overflow, the current BD, the stall bits of the cycle, the BD errors
  (invalid, unavailable, and on the memory tile a lock or memory access it does not
  reach), the finish-on-TLAST errors);
* an S2MM channel's **count FIFO pop** register (core and memory tiles,
  ``fot_count_address``) reads the oldest finish-on-TLAST count entry and pops it, and
  its **Current_Write_Count** register (``write_count_address``) the words of its BD;
* a channel's **control** register (``CONTROL_FIELDS``) is stored here, reserved bits
  dropped, and reads back as written. Its ``reset`` bit, from the register, holds the
  channel in reset (every register of the channel to its initial value at the end of
  each cycle it reads 1: the task queue, the fetch stage, the BDs in flight, the lock
  requests and releases owed, the status); the lock unit, the BD table and the other
  channels are not touched, and a grant the lock unit shows in the cycle after a reset
  cycle answers a request the reset dropped, so the channel does not see it. The FoT
  mode goes to the S2MM channel, the controller ID to the channel's
  ``token_controller`` output (what its completion tokens carry); the other fields are
  stored only (docs/decisions.md; the model's channel warns when a task runs with one
  set).

Reads take one cycle, as the table's register read port does. The lock unit grants one
acquire and one release a cycle: of the channels whose acquire holds, and of those with
a release queued, the first in channel order (MM2S 0.. then S2MM 0.., as the model's DMA
steps its channels).

**decision**: a memory-tile BD may name the west and east neighbours' locks (IDs 0-63 and
128-191 beside its own 64-127). Those requests leave the block on the channel's
``neighbour_acquire``/``neighbour_release`` ports, with the BD's lock ID, for the
neighbour's lock unit to answer; only the tile's own locks are in this block.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Cat, Const, Module, Mux, ResetInserter, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.arch.kinds import DMA_KINDS, check_allowed
from ..model.arch.registers import (
    COMPRESSION_FIELDS,
    CONTROL_FIELDS,
    FOT_COUNT_BASE,
    LOCK_VALUE_BASE,
    STATUS_FIELDS,
    control_address,
    control_mask,
    fot_count_address,
    lock_value_address,
    status_address,
    write_count_address,
)
from ..model.bd.fields import FIELD_INDEX
from ..model.bd.packet import check_place
from .bd_table import SharedBDTable
from .channel import Channel
from .channel.direction import connect_outside, mm2s_signature, s2mm_signature
from .handshake import check_outstanding
from .layouts import check_kind
from .lock_unit import LockUnit, lock_port_signature
from .register_port import drive_register_port, register_port_signature

__all__ = ["DMA"]


class _Control(NamedTuple):
    """A channel's control register and its reset, as the DMA keeps them."""

    word: Signal      # the control word, reserved bits 0
    held: Signal      # its reset bit: the channel is in reset at the end of this cycle
    after: Signal     # ``held`` one cycle later: grants shown now answer dropped requests


def _with_controller(kind: str, direction: str,
                     signature: wiring.Signature) -> wiring.Signature:
    """A channel's outside as the DMA shows it: the channel's ports and
    ``token_controller``, the controller ID its completion tokens carry (its control
    register's field, AM025's ``Controller_ID``)."""
    width = CONTROL_FIELDS[kind, direction]["controller_id"][1]
    return wiring.Signature({**signature.members, "token_controller": Out(width)})


class DMA(wiring.Component):
    """One tile's DMA: ``channels`` MM2S and S2MM channels, BD table, locks, registers.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    column, row : int
        The tile's position, for MM2S packet headers.
    compression : bool
        False: built without the compressors and decompressors (core tile and memory
        tile; the shim has none). Each channel's (de)compression enable is then not
        implemented: it reads 0 and a write to it is dropped
        (:func:`~aiedma.model.arch.registers.control_mask`, the model's
        ``DMA(compression=False)``), so a BD's ``enable_compression`` moves its words
        uncompressed.
    allowed : (int, int), optional
        ``(start, words)``: window protection (the model's ``DMA(allowed=...)``): the
        only word addresses a channel's memory port may reach; an access outside it is
        not made and sets the channel's ``error_dm_access_to_unavailable``. ``words`` a
        power of two and ``start`` a multiple of it, so the test is an equality of the
        address's top bits. Default: none.
    outstanding : int, optional
        None (default): each channel's memory port is the fixed port of the cycle
        contract. A number: the handshake port (:mod:`.memory_port`), for a memory that
        may wait (:class:`~.axi_master.AXI4Master`), up to that many accesses in flight
        a channel (:mod:`.handshake`); the contract's cycles then hold only as far as the
        memory answers as the fixed port would.

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata, reg_read, reg_rdata
        The register port (:func:`~.register_port.register_port_signature`): a write
        takes effect at the end of its cycle; a read's word is on ``reg_rdata`` the next
        cycle (0 where nothing readable is).
    mm2s : Out(mm2s_signature(kind) + token_controller).array(channels)
    s2mm : Out(s2mm_signature(kind) + token_controller).array(channels)
        Each channel's outside (:mod:`.channel.direction`) and ``token_controller``: the
        controller ID in its control register, which a token (``token`` high) carries.
    neighbour_acquire, neighbour_release : memory tile only, one per channel (MM2S first)
        Lock requests naming a neighbour's lock (see the module's decision).
    absent_memory, absent_locks : In(2), memory tile only
        The west (bit 0) and east (bit 1) neighbours' memories, locks, are absent (the
        edge of the array): an access to them, a BD naming them, is a fault (the status's
        ``error_dm_access_to_unavailable``, ``error_lock_access_to_unavailable``).
    pause : In(1)
        While high no channel takes a new BD (a program is loaded with it high).
    busy, error : Out(1)
        A channel is busy; a channel or the lock unit flagged an error (sticky).
    """

    def __init__(self, kind: str, column: int = 0, row: int = 0, *,
                 compression: bool = True, allowed: tuple[int, int] | None = None,
                 outstanding: int | None = None) -> None:
        self.kind = check_kind(kind)
        check_place(column, row, ValueError)
        self.column, self.row, self.compression = column, row, compression
        self.allowed = check_allowed(kind, allowed)
        self.outstanding = None if outstanding is None else check_outstanding(outstanding)
        handshake = outstanding is not None
        dma = DMA_KINDS[kind]
        self.count = dma.channels
        self.own_locks = dma.lock_window("own")
        self.lock_ids = FIELD_INDEX[kind]["lock_acq_id"].maximum + 1
        ports = {
            **register_port_signature().members,
            "mm2s": Out(_with_controller(kind, "mm2s", mm2s_signature(kind, handshake))
                        ).array(self.count),
            "s2mm": Out(_with_controller(kind, "s2mm", s2mm_signature(kind, handshake))
                        ).array(self.count),
            "pause": In(1), "busy": Out(1), "error": Out(1),
        }
        if len(dma.windows) > 1:
            ports["absent_memory"], ports["absent_locks"] = In(2), In(2)
            ports |= {
                "neighbour_acquire": Out(lock_port_signature(self.lock_ids)).array(2 * self.count),
                "neighbour_release": Out(lock_port_signature(self.lock_ids)).array(2 * self.count),
            }
        super().__init__(ports)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind, n = self.kind, self.count
        channels = [Channel(kind, d, k, self.column, self.row, shared_table=True,
                            compression=self.compression, allowed=self.allowed,
                            outstanding=self.outstanding)
                    for d in ("mm2s", "s2mm") for k in range(n)]
        m.submodules.table = table = SharedBDTable(kind, 2 * n)
        m.submodules.locks = locks = LockUnit(DMA_KINDS[kind].locks, 2 * n)
        drive_register_port(m, self, table)
        errors, busy = [locks.error], []
        controls = [self._control(m, channel) for channel in channels]
        for p, channel in enumerate(channels):
            name = f"{channel.direction}{channel.index}"
            m.submodules[name] = ResetInserter({"sync": controls[p].held})(channel)
            wiring.connect(m, channel.fetch, table.fetch[p])
            drive_register_port(m, self, channel)
            m.d.comb += channel.pause.eq(self.pause)
            if hasattr(self, "absent_memory"):
                m.d.comb += [channel.absent_memory.eq(self.absent_memory),
                             channel.absent_locks.eq(self.absent_locks)]
            fot = CONTROL_FIELDS[kind, channel.direction].get("fot_mode")
            if fot is not None:
                m.d.comb += channel.fot_mode.eq(controls[p].word[fot[0]:fot[0] + fot[1]])
            ooo = CONTROL_FIELDS[kind, channel.direction].get("enable_out_of_order")
            if ooo is not None:
                m.d.comb += channel.out_of_order.eq(controls[p].word[ooo[0]])
            if channel.compressible:
                lsb, _ = CONTROL_FIELDS[kind, channel.direction][
                    COMPRESSION_FIELDS[channel.direction]]
                m.d.comb += channel.compression.eq(controls[p].word[lsb])
            errors.append(channel.error)
            busy.append(channel.busy)
            self._lock_ports(m, p, channel, locks, controls[p])
            outside = getattr(self, channel.direction)[channel.index]
            connect_outside(m, channel, outside,
                            channel.parts.outside(kind, self.outstanding is not None))
            lsb, width = CONTROL_FIELDS[kind, channel.direction]["controller_id"]
            m.d.comb += outside.token_controller.eq(controls[p].word[lsb:lsb + width])
        m.d.comb += [self.error.eq(Cat(*errors).any()), self.busy.eq(Cat(*busy).any())]
        self._registers(m, channels, locks, table, controls)
        return m

    def _control(self, m: Module, channel: Channel) -> _Control:
        """A channel's control register (written through the register port, reserved bits
        dropped), its reset bit as a register, and that bit one cycle later."""
        kind, name = self.kind, f"{channel.direction}{channel.index}"
        control = _Control(Signal(32, name=f"control_{name}"), Signal(name=f"reset_{name}"),
                           Signal(name=f"after_reset_{name}"))
        address = control_address(kind, channel.direction, channel.index)
        with m.If(self.reg_write & (self.reg_addr == address)):
            m.d.sync += control.word.eq(self.reg_wdata & control_mask(
                kind, channel.direction, compression=self.compression))
        reset = CONTROL_FIELDS[kind, channel.direction].get("reset")
        if reset is not None:
            m.d.comb += control.held.eq(control.word[reset[0]])
        m.d.sync += control.after.eq(control.held)
        return control

    def _lock_ports(self, m: Module, p: int, channel: Channel, locks: LockUnit,
                    control: _Control) -> None:
        """The channel's lock requests: its own tile's to the lock unit, others out. A grant
        in the cycle after a reset answers a request the reset dropped: held back."""
        held, after_reset = control.held, control.after
        acquire, release = channel.acquire, channel.release
        own = self.own_locks
        acq_own, rel_own = self._own(acquire.lock_id), self._own(release.lock_id)
        unit_acq, unit_rel = locks.acquire[p], locks.release[p]
        m.d.comb += [
            # The channel's reset empties its release queue: its request drops after this
            # cycle, told to the unit now, so its choice of release holds its application.
            locks.drop[p].eq(held),
            unit_acq.request.eq(acquire.request & acq_own),
            unit_acq.lock_id.eq(acquire.lock_id - own.start),
            unit_acq.value.eq(acquire.value),
            unit_rel.request.eq(release.request & rel_own),
            unit_rel.lock_id.eq(release.lock_id - own.start),
            unit_rel.value.eq(release.value),
        ]
        if not hasattr(self, "neighbour_acquire"):
            m.d.comb += [acquire.grant.eq(unit_acq.grant & ~after_reset),
                         release.grant.eq(unit_rel.grant & ~after_reset)]
            return
        out_acq, out_rel = self.neighbour_acquire[p], self.neighbour_release[p]
        m.d.comb += [
            out_acq.request.eq(acquire.request & ~acq_own), out_acq.lock_id.eq(acquire.lock_id),
            out_acq.value.eq(acquire.value),
            # A grant shows the cycle after the request it answers, by then the channel
            # may ask for another lock: take it from whichever unit gave it.
            acquire.grant.eq((unit_acq.grant | out_acq.grant) & ~after_reset),
            out_rel.request.eq(release.request & ~rel_own), out_rel.lock_id.eq(release.lock_id),
            out_rel.value.eq(release.value),
            release.grant.eq((unit_rel.grant | out_rel.grant) & ~after_reset),
        ]

    def _own(self, lock_id: Signal) -> Value:
        """``lock_id`` names one of the tile's own locks (bounds that always hold are left
        out: a constant comparison is a lint warning)."""
        own, checks = self.own_locks, []
        if own.start > 0:
            checks.append(lock_id >= own.start)
        if own.stop < self.lock_ids:
            checks.append(lock_id < own.stop)
        return Cat(*checks).all() if checks else Const(1)

    def _registers(self, m: Module, channels: list[Channel], locks: LockUnit,
                   table: SharedBDTable, controls: list[_Control]) -> None:
        """Lock value writes and reads, status and control reads; one cycle of read
        latency."""
        kind, count = self.kind, DMA_KINDS[self.kind].locks
        # The lock registers are 16 bytes apart from a base aligned to their span, so an
        # address names a lock by its bits alone: no subtraction or range compare between
        # the register port and every lock's write enable.
        top = 4 + (count - 1).bit_length()
        lock_base = LOCK_VALUE_BASE[kind]
        if (lock_base % (1 << top) or count != 1 << (top - 4)
                or lock_value_address(kind, count - 1) != lock_base + ((count - 1) << 4)):
            raise AssertionError(f"{kind}: the lock registers must be {count} words 16 "
                                 f"bytes apart from a base aligned to 2**{top}")
        lock_hit = (self.reg_addr[top:] == lock_base >> top) & (self.reg_addr[:4] == 0)
        lock_id = self.reg_addr[4:top]
        m.d.comb += [locks.set_en.eq(self.reg_write & lock_hit), locks.set_id.eq(lock_id),
                     locks.set_value.eq(self.reg_wdata), locks.read_id.eq(lock_id)]
        read = Signal(32)      # this cycle's read of a lock or a status register
        with m.If(self.reg_read & lock_hit):
            m.d.comb += read.eq(locks.read_value)
        for channel, control in zip(channels, controls, strict=True):
            with m.If(self.reg_read & (self.reg_addr == control_address(
                    kind, channel.direction, channel.index))):
                m.d.comb += read.eq(control.word)
            word = Signal(32, name=f"status_{channel.direction}{channel.index}")
            fields = {"status": Mux(channel.busy, 2, 0), "error_bd_invalid": channel.error,
                      "stalled_lock_acq": channel.stall_lock_acq,
                      "stalled_lock_rel": channel.stall_lock_rel,
                      "stalled_stream": channel.stall_stream, "stalled_tct": channel.stall_tct,
                      "error_bd_unavailable": channel.bd_unavailable,
                      "error_lock_access_to_unavailable": channel.lock_unavailable,
                      "error_dm_access_to_unavailable": channel.dm_unavailable,
                      "error_fot_length_exceeded": channel.fot_length_exceeded,
                      "error_fot_bds_per_task": channel.fot_bds_per_task,
                      "task_queue_overflow": channel.queue_overflow,
                      "channel_running": channel.busy, "task_queue_size": channel.queue_size,
                      "cur_bd": channel.current_bd}
            for name, (lsb, width) in STATUS_FIELDS.items():
                m.d.comb += word[lsb:lsb + width].eq(fields[name])
            with m.If(self.reg_read & (self.reg_addr == status_address(
                    kind, channel.direction, channel.index))):
                m.d.comb += read.eq(word)
            if channel.direction == "s2mm" and kind in FOT_COUNT_BASE:
                # A read of the count FIFO's pop register pops the entry it shows.
                with m.If(self.reg_read & (self.reg_addr == fot_count_address(
                        kind, channel.index))):
                    m.d.comb += [read.eq(channel.fot_count), channel.fot_pop.eq(1)]
            if channel.direction == "s2mm":
                with m.If(self.reg_read & (self.reg_addr == write_count_address(
                        kind, channel.index))):
                    m.d.comb += read.eq(channel.write_count)
        held = Signal(32)
        m.d.sync += held.eq(read)
        m.d.comb += self.reg_rdata.eq(table.reg_rdata | held)
