"""A DMA's BD table in LUT RAM: the register port, a whole-BD fetch, iteration write-back.

The words are the register image of ``BufferDescriptor.encode()``: BD ``n`` word ``w``
is at register address ``BD_REGISTER_BASE[kind] + 0x20 n + 4 w`` (docs/bd.md
"Registers"). The table keeps one memory per word index, so a BD is fetched whole in
one cycle: a fetch of BD ``n`` in cycle ``t`` shows its fields, decoded to actual
values (the field table's encodings: minus one, two's complement, burst length), in
cycle ``t + BD_FETCH_LATENCY`` (the contract's fetch stage), with its
``iteration_current`` advanced modulo ``iteration_wrap`` (docs/bd.md "Iteration") for
the next fetch of the BD: a fetch in that cycle or later sees the new value (the RAM
is written a cycle later from a register; a fetch that would miss it is forwarded).

The fetch reads the words asynchronously in the fetch cycle and registers them, so
the fetched BD comes from flip-flops in the cycle its fields decide what a channel
does next (a RAM's unregistered output there would be a long path into the channel);
the memories are therefore LUT RAM (``ram_style = "distributed"``), which reads
asynchronously, not block RAM, which cannot.

**decision**: a register write and a write-back to the same word in the same cycle: the
write-back wins (it is the hardware's own state; a program that rewrites a BD a running
channel fetches has a race either way).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from ..model.bd.fields import BD_COUNT, FIELD_INDEX, FIELDS, WORDS, Encoding, Field
from ..model.cycle.contract import BD_FETCH_LATENCY
from .layouts import check_kind, field_shape
from .register_port import REGISTER_ADDRESS_BITS, drive_register_port, register_port_signature

__all__ = ["BDTable", "SharedBDTable", "bd_full_layout", "decode_field", "fetch_signature"]

if BD_FETCH_LATENCY != 1:
    raise AssertionError("the BD table's memories have one cycle of read latency")


def bd_full_layout(kind: str) -> data.StructLayout:
    """Every field of the kind's BD as its actual value, in table order."""
    return data.StructLayout({f.name: field_shape(f) for f in FIELDS[kind]})


def decode_field(field: Field, words: list[Value]) -> Value:
    """A field's actual value from the BD's register words (its slices, then its encoding)."""
    raw = Cat(*(words[s.word][s.lsb:s.msb + 1] for s in field.slices))
    if field.encoding is Encoding.MINUS_ONE:
        return raw + 1
    if field.encoding is Encoding.SIGNED:
        return raw.as_signed()
    if field.encoding is Encoding.BURST_LENGTH:
        return Mux(raw == 0, 64, Mux(raw == 1, 128, 256))
    return raw


class BDTable(wiring.Component):
    """The BD table of one DMA kind.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata, reg_read, reg_rdata
        The register port (:func:`~.register_port.register_port_signature`): a write
        in the BD region stores its word at the end of the cycle; ``reg_rdata`` is the
        word read in the previous cycle (0 outside the BD region).
    fetch_en : In(1)
    fetch_id : In(range(BD_COUNT[kind]))
        Fetch a BD; its fields are on ``bd`` in the next cycle. ``fetch_id`` is read in
        every cycle, ``fetch_en`` or not; ``fetch_en`` makes it a fetch (the iteration
        advances), so a user may present the address before it knows it fetches.
    bd : Out(bd_full_layout(kind))
        The BD at the previous cycle's ``fetch_id`` (meaningful after a fetch).
    bd_id : Out
        The BD shown on ``bd`` (the previous cycle's ``fetch_id``).
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        count = BD_COUNT[kind]
        super().__init__({
            **register_port_signature().members,
            "fetch_en": In(1), "fetch_id": In(range(count)),
            "bd": Out(bd_full_layout(kind)), "bd_id": Out(range(count)),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind, count, words = self.kind, BD_COUNT[self.kind], WORDS[self.kind]
        base = DMA_KINDS[kind].bd_register_base
        offset = Signal(REGISTER_ADDRESS_BITS)
        m.d.comb += offset.eq(self.reg_addr - base)
        in_region = (self.reg_addr >= base) & (self.reg_addr < base + BD_REGISTER_STRIDE * count)
        reg_bd, reg_word = offset[5:], offset[2:5]
        iteration = FIELD_INDEX[kind]["iteration_current"]
        (slot,) = iteration.slices
        # The write-back of the BD fetched in the previous cycle.
        fetched = Signal()
        m.d.sync += [fetched.eq(self.fetch_en), self.bd_id.eq(self.fetch_id)]
        read_word = Signal(3)
        read_hit = Signal()
        m.d.sync += [read_word.eq(reg_word), read_hit.eq(self.reg_read & in_region)]
        fetch_data, register_data = [], []
        for w in range(words):
            m.submodules[f"word{w}"] = memory = Memory(shape=32, depth=count, init=[],
                                                     attrs={"ram_style": "distributed"})
            write = memory.write_port()
            fetch = memory.read_port(domain="comb")
            reg = memory.read_port()
            m.d.comb += [
                write.addr.eq(self.reg_bd_index(reg_bd)),
                write.data.eq(self.reg_wdata),
                write.en.eq(self.reg_write & in_region & (reg_word == w)),
                fetch.addr.eq(self.fetch_id),
                reg.addr.eq(self.reg_bd_index(reg_bd)),
                reg.en.eq(self.reg_read),
            ]
            # Read asynchronously, registered (module docstring). Transparent, as a
            # synchronous read port would be: a write of the word in the fetch cycle is
            # what the fetch shows.
            fetched_word = Signal(32, name=f"fetched_word{w}")
            m.d.sync += fetched_word.eq(Mux(write.en & (write.addr == self.fetch_id),
                                            write.data, fetch.data))
            fetch_data.append(fetched_word)
            register_data.append(reg.data)
            if w == slot.word:
                writeback_port = write
        m.d.comb += self.reg_rdata.eq(
            Mux(read_hit, Cat(*register_data).word_select(read_word, 32), 0))
        # iteration_current advances modulo iteration_wrap and goes back into its word one
        # cycle later, from a register: RAM out -> logic -> RAM in in one cycle would be
        # a slow path. While that write is pending, a fetch of the same BD shown now
        # takes the pending word instead of the RAM's older one.
        pending, pending_id = Signal(), Signal(range(count))
        pending_word = Signal(32)
        word = Signal(32)
        m.d.comb += word.eq(Mux(pending & (pending_id == self.bd_id), pending_word,
                                fetch_data[slot.word]))
        data = [word if w == slot.word else d for w, d in enumerate(fetch_data)]
        for f in FIELDS[kind]:
            m.d.comb += getattr(self.bd, f.name).eq(decode_field(f, data))
        current = self.bd.iteration_current
        advanced = Mux(current + 1 >= self.bd.iteration_wrap, 0, current + 1)
        m.d.sync += [pending.eq(fetched), pending_id.eq(self.bd_id),
                     pending_word.eq(Cat(word[:slot.lsb], advanced[:slot.width],
                                         word[slot.msb + 1:]))]
        with m.If(pending):
            m.d.comb += [writeback_port.addr.eq(pending_id), writeback_port.data.eq(pending_word),
                         writeback_port.en.eq(1)]
        return m

    def reg_bd_index(self, value: Value) -> Value:
        """The BD number of a register offset, cut to the table's index width."""
        return value[:Const(BD_COUNT[self.kind] - 1).shape().width]


def fetch_signature(kind: str) -> wiring.Signature:
    """A channel's fetch port on a shared table: ``en``, ``id`` out; ``grant``, the BD in.

    The channel's side (``Out``); the table has ``In(fetch_signature(kind))`` per channel.
    ``en`` asks for a fetch of BD ``id``; ``grant`` says it is served in this cycle (else
    the channel asks again); ``bd`` shows the BD fetched in the previous cycle, whoever
    fetched it.
    """
    return wiring.Signature({
        "en": Out(1), "id": Out(range(BD_COUNT[kind])), "grant": In(1),
        "bd": In(bd_full_layout(kind)),
    })


class SharedBDTable(wiring.Component):
    """One DMA's BD table with one fetch port, shared by its channels in round robin.

    A :class:`BDTable` behind an arbiter: in a cycle, of the ports whose ``en`` is high,
    the first after the port served last (port order, wrapping) is granted and its BD
    fetched, so the table is one copy of the BD words whatever the number
    of channels. The model's DMA serves its channels' fetches the same way
    (``model/system/dma.py``, ``DMA.fetch_granted``; docs/cycle.md "Channel").

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    ports : int
        Fetch ports, in the order of the round robin.

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata, reg_read, reg_rdata
        The register port, as :class:`BDTable`'s.
    fetch : In(fetch_signature(kind)).array(ports)
    """

    def __init__(self, kind: str, ports: int) -> None:
        self.kind, self.ports = check_kind(kind), ports
        super().__init__({
            **register_port_signature().members,
            "fetch": In(fetch_signature(kind)).array(ports),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.table = table = BDTable(self.kind)
        drive_register_port(m, self, table)
        m.d.comb += self.reg_rdata.eq(table.reg_rdata)
        n = self.ports
        requests = Signal(n)
        m.d.comb += requests.eq(Cat(*(port.en for port in self.fetch)))
        # Round robin: the lowest requesting port above the one served last, else the
        # lowest requesting port (``x & -x`` keeps the lowest set bit).
        last = Signal(range(n), init=n - 1)
        above = Signal(n)
        # (port 0 is never above: a constant comparison is a lint warning)
        m.d.comb += above.eq(requests & Cat(Const(0), *(last < p for p in range(1, n))))
        pick = Signal(n)
        m.d.comb += pick.eq(Mux(above.any(), above, requests))
        grant = Signal(n)
        m.d.comb += grant.eq(pick & -pick)
        fetch_id = Const(0, range(BD_COUNT[self.kind]))
        for p, port in enumerate(self.fetch):
            m.d.comb += [port.grant.eq(grant[p]), port.bd.eq(table.bd)]
            fetch_id = fetch_id | Mux(grant[p], port.id, 0)
            with m.If(grant[p]):
                m.d.sync += last.eq(p)
        m.d.comb += [table.fetch_en.eq(requests.any()), table.fetch_id.eq(fetch_id)]
        return m
