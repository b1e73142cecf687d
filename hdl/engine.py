"""Channel engines: the BD address generator, the lock gate and an MM2S or S2MM datapath.

:class:`MM2SEngine` and :class:`S2MMEngine` are the RTL of the model's
:class:`~aiedma.model.cycle.engine.ChannelEngine` (one class there, two directions
here). They are the tops a testbench (or an FPGA design) drives with BDs: the memory port
leaves the block, and so does a copy of the address beats (``beat_*``, outputs only,
for the testbenches' per-cycle comparison; synthesis drops them when unused). The
lock gate (:mod:`.lock_gate`) holds each BD's first beat until ``lock_grant``; tie it
high for a channel without locks.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.cycle.contract import ADDRESS_BITS
from .addrgen import BDAddressGenerator
from .handshake import MM2SHandshakeDatapath, S2MMHandshakeDatapath, check_outstanding
from .layouts import bd_layout, beat_layout, check_kind, data_beat_layout
from .lock_gate import LockGate
from .memory_port import read_port_signature, write_port_signature
from .mm2s import MM2SDatapath
from .s2mm import S2MMDatapath
from .skid import SkidBuffer

__all__ = ["MM2SEngine", "S2MMEngine"]


def _gate_ports(kind: str) -> dict:
    return {
        "lock_request": Out(1),
        "lock_grant": In(1, init=1),
        "beat_valid": Out(1),
        "beat_ready": Out(1),
        "beat_address": Out(ADDRESS_BITS[kind]),
        "beat_zero": Out(1),
        "beat_last": Out(1),
    }


def _gate(m: Module, top: wiring.Component, beats: stream.Interface,
          datapath: wiring.Component) -> LockGate:
    """``beats`` -> lock gate -> datapath, and the beat monitor outputs (the gate's
    input); returns the gate."""
    m.submodules.gate = gate = LockGate(top.kind)
    wiring.connect(m, beats, gate.i)
    wiring.connect(m, gate.o, datapath.beats)
    m.d.comb += [
        top.lock_request.eq(gate.lock_request),
        gate.lock_grant.eq(top.lock_grant),
        top.beat_valid.eq(gate.i.valid),
        top.beat_ready.eq(gate.i.ready),
        top.beat_address.eq(gate.i.payload.address),
        top.beat_zero.eq(gate.i.payload.zero),
        top.beat_last.eq(gate.i.payload.last),
    ]
    return gate


def _handshake_ports(outstanding: int | None) -> dict:
    """With a handshake memory port, the datapath's window and completion signals
    (:mod:`.handshake`) leave the engine too."""
    if outstanding is None:
        return {}
    return {"blocked": In(1), "dropped": Out(1), "fault": Out(1), "done": Out(1)}


def _check(outstanding: int | None) -> int | None:
    return None if outstanding is None else check_outstanding(outstanding)


def _memory(m: Module, top: wiring.Component, datapath: wiring.Component,
            signature: wiring.Signature) -> None:
    """The datapath's memory port (and handshake signals) out through ``top``."""
    members = dict(signature.members)
    if top.outstanding is not None:
        members |= _handshake_ports(top.outstanding)
    for name, member in members.items():
        ours, theirs = getattr(top, name), getattr(datapath, name)
        m.d.comb += (ours.eq(theirs) if member.flow is Out else theirs.eq(ours))


class MM2SEngine(wiring.Component):
    """BDs in, memory words (0 for padding) out: address generator -> MM2S datapath.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    outstanding : int, optional
        None (default): the fixed memory port, the cycle contract's. A number: the
        handshake port with up to that many accesses in flight (:mod:`.handshake`).

    Attributes
    ----------
    bd : In(stream.Signature(bd_layout(kind)))
        BDs (actual field values).
    o : Out(stream.Signature(data_beat_layout()))
        ``data`` and ``last`` (each BD's final word).
    mem_addr, mem_en : Out
        BRAM-style read port; ``mem_data`` (In) is the word one cycle later. With
        ``outstanding``, the handshake port (:func:`~.memory_port.read_port_signature`).
    blocked, dropped, fault, done :
        With ``outstanding`` only: :class:`~.handshake.MM2SHandshakeDatapath`'s.
    lock_request, lock_grant : Out, In
        The lock gate (:class:`~.lock_gate.LockGate`); ``lock_grant`` resets high.
    beat_valid, beat_ready, beat_address, beat_zero, beat_last : Out
        The lock gate's input (here the address generator's ``o``), as monitor outputs.
    """

    def __init__(self, kind: str, outstanding: int | None = None) -> None:
        self.kind = check_kind(kind)
        self.outstanding = _check(outstanding)
        super().__init__({
            "bd": In(stream.Signature(bd_layout(kind))),
            "o": Out(stream.Signature(data_beat_layout())),
            **read_port_signature(kind, outstanding is not None).members,
            **_gate_ports(kind), **_handshake_ports(outstanding),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.addrgen = addrgen = BDAddressGenerator(self.kind)
        if self.outstanding is None:
            datapath = MM2SDatapath(self.kind)
        else:
            datapath = MM2SHandshakeDatapath(self.kind, self.outstanding)
        m.submodules.datapath = datapath
        wiring.connect(m, wiring.flipped(self.bd), addrgen.i)
        _gate(m, self, addrgen.o, datapath)
        wiring.connect(m, datapath.o, wiring.flipped(self.o))
        _memory(m, self, datapath, read_port_signature(self.kind, self.outstanding is not None))
        return m


class S2MMEngine(wiring.Component):
    """BDs and stream words in, memory writes out: address generator -> S2MM datapath.

    Parameters
    ----------
    kind, outstanding :
        As :class:`MM2SEngine`'s.

    Attributes
    ----------
    bd : In(stream.Signature(bd_layout(kind)))
    i : In(stream.Signature(data_beat_layout()))
        Stream words; ``last`` ends the BD at that word, whatever its length (the
        channel drives it with TLAST in finish-on-TLAST mode, else low).
    mem_addr, mem_data, mem_we : Out
        Write port (a word is stored at the end of a cycle with ``mem_we`` high). With
        ``outstanding``, the handshake port (:func:`~.memory_port.write_port_signature`).
    lock_request, lock_grant, blocked, dropped, fault, done :
        As :class:`MM2SEngine`.
    beat_valid, beat_ready, beat_address, beat_zero, beat_last : Out
        The lock gate's input, the skid's output, as monitor outputs.

    Notes
    -----
    The gate's ``ready`` is a stream word's arrival, late in the cycle, so a skid
    (:class:`~.skid.SkidBuffer`) stands between the generator and the gate: the
    generator's ``o.ready`` is the skid's emptiness, a register. A word with TLAST
    (finish on TLAST) ends its BD at the gate; the beats the generator still has of
    that BD are dropped in the next cycle, through the generator's ``cut`` driven by
    a register (docs/cycle.md, "S2MM skid" and "Finish on TLAST").
    """

    def __init__(self, kind: str, outstanding: int | None = None) -> None:
        self.kind = check_kind(kind)
        self.outstanding = _check(outstanding)
        super().__init__({
            "bd": In(stream.Signature(bd_layout(kind))),
            "i": In(stream.Signature(data_beat_layout())),
            **write_port_signature(kind, outstanding is not None).members,
            **_gate_ports(kind), **_handshake_ports(outstanding),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.addrgen = addrgen = BDAddressGenerator(self.kind)
        if self.outstanding is None:
            datapath = S2MMDatapath(self.kind)
        else:
            datapath = S2MMHandshakeDatapath(self.kind, self.outstanding)
        m.submodules.datapath = datapath
        wiring.connect(m, wiring.flipped(self.bd), addrgen.i)
        m.submodules.skid = skid = SkidBuffer(beat_layout(self.kind))
        dropping = Signal()   # the generator's BD was ended by TLAST in the cycle before
        m.d.comb += [
            skid.i.valid.eq(addrgen.o.valid & ~dropping),
            skid.i.payload.eq(addrgen.o.payload),
            # With ``dropping`` the skid is empty, so the generator gives its beat, which
            # goes nowhere, and frees its running slot (a cut).
            addrgen.o.ready.eq(skid.i.ready),
            addrgen.cut.eq(dropping),
        ]
        gate = _gate(m, self, skid.o, datapath)
        wiring.connect(m, wiring.flipped(self.i), datapath.i)
        # Finish on TLAST: the word ends its BD. The gate reads ``cut`` only when a beat
        # joins its word (its ``ready`` is ``i.valid``), so it is the word's ``last``
        # alone, not ANDed with ``i.valid`` (one LUT level less).
        cut = self.i.payload.last
        m.d.comb += gate.cut.eq(cut)
        joined = gate.i.valid & gate.i.ready
        m.d.sync += dropping.eq(joined & cut & ~gate.i.payload.last)
        _memory(m, self, datapath, write_port_signature(self.kind, self.outstanding is not None))
        return m
