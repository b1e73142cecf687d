"""A DMA's BD table in block RAM: the register port, a whole-BD fetch, iteration write-back.

The words are the register image of ``BufferDescriptor.encode()``: BD ``n`` word ``w``
is at register address ``BD_REGISTER_BASE[kind] + 0x20 n + 4 w`` (docs/bd.md
"Registers"). The table keeps one memory per word index, so a BD is fetched whole in
one cycle: a fetch of BD ``n`` in cycle ``t`` shows its fields, decoded to actual
values (the field table's encodings: minus one, two's complement, burst length), in
cycle ``t + BD_FETCH_LATENCY`` (the contract's fetch stage), with its
``iteration_current`` advanced modulo ``iteration_wrap`` (docs/bd.md "Iteration") for
the next fetch of the BD: a fetch in that cycle or later sees the new value.

Every read of the memories is synchronous, so they are block RAM (ECP5 DP16KD, iCE40
SB_RAM40_4K), one copy of the BD words: the register port reads and writes through one
port of each, the fetch reads through the other. ``iteration_current``, the one field
the hardware writes, lives in flip-flops beside them.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
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


class _Iteration(NamedTuple):
    """The ``iteration_current`` bits a fetch and a register read show."""

    fetched: Value
    register: Value


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
        reg_bd, reg_word = self.reg_bd_index(offset[5:]), offset[2:5]
        (slot,) = FIELD_INDEX[kind]["iteration_current"].slices
        fetched = Signal()
        m.d.sync += [fetched.eq(self.fetch_en), self.bd_id.eq(self.fetch_id)]
        read_word, read_hit = Signal(3), Signal()
        m.d.sync += [read_word.eq(reg_word), read_hit.eq(self.reg_read & in_region)]
        fetch_data, register_data = [], []
        for w in range(words):
            write_en = self.reg_write & in_region & (reg_word == w)
            fetch_word, register_word = self._word_memory(m, w, reg_bd, write_en)
            fetch_data.append(fetch_word)
            register_data.append(register_word)
        iteration = self._iteration(m, slot, reg_bd, reg_word, in_region, fetched)
        register_data[slot.word] = Cat(register_data[slot.word][:slot.lsb], iteration.register,
                                       register_data[slot.word][slot.msb + 1:])
        m.d.comb += self.reg_rdata.eq(
            Mux(read_hit, Cat(*register_data).word_select(read_word, 32), 0))
        data = list(fetch_data)
        data[slot.word] = Cat(data[slot.word][:slot.lsb], iteration.fetched,
                              data[slot.word][slot.msb + 1:])
        for f in FIELDS[kind]:
            m.d.comb += getattr(self.bd, f.name).eq(decode_field(f, data))
        return m

    def _word_memory(self, m: Module, w: int, reg_bd: Value, write_en: Value) -> tuple:
        """Word ``w`` of every BD: one block RAM, written and read by the register port
        at one address (one read-write port) and read by the fetch (a read port).

        Both reads are synchronous, so the RAM maps to block RAM (ECP5 DP16KD, iCE40
        SB_RAM40_4K); the fetch is transparent to a register write of its word in the
        same cycle, as a register-to-register copy was.
        """
        memory = Memory(shape=32, depth=BD_COUNT[self.kind], init=[])
        m.submodules[f"word{w}"] = memory
        write = memory.write_port()
        fetch = memory.read_port(transparent_for=(write,))
        reg = memory.read_port()
        m.d.comb += [
            write.addr.eq(reg_bd), write.data.eq(self.reg_wdata), write.en.eq(write_en),
            fetch.addr.eq(self.fetch_id),
            reg.addr.eq(reg_bd), reg.en.eq(self.reg_read),
        ]
        return fetch.data, reg.data

    def _iteration(self, m: Module, slot, reg_bd: Value, reg_word: Value, in_region: Value,
                   fetched: Value) -> _Iteration:
        """``iteration_current`` of every BD in flip-flops beside the RAM.

        A fetch advances it modulo ``iteration_wrap``; keeping it out of the RAM leaves
        the RAM one writer (the register port), so its register read and write share one
        port and the fetch has the other, and no RAM output feeds a RAM write in the same
        cycle. **decision**: a register write of the BD's word in the cycle its
        write-back lands: the write-back wins (the hardware's own state; a program that
        rewrites a BD a running channel fetches has a race either way).
        """
        count = BD_COUNT[self.kind]
        values = Array(Signal(slot.width, name=f"iteration{n}") for n in range(count))
        current = Signal(slot.width)      # the fetched BD's value, from the fetch cycle
        register = Signal(slot.width)     # the value a register read shows
        advanced = Signal(slot.width)
        m.d.comb += advanced.eq(Mux(self.bd.iteration_current + 1 >= self.bd.iteration_wrap,
                                    0, self.bd.iteration_current + 1))
        written = self.reg_write & in_region & (reg_word == slot.word)
        new_value = self.reg_wdata[slot.lsb:slot.msb + 1]
        writeback = fetched
        # What a fetch in this cycle reads: this cycle's write-back, else this cycle's
        # register write, of its BD, else the stored value (all land at the cycle's end).
        m.d.sync += current.eq(
            Mux(writeback & (self.bd_id == self.fetch_id), advanced,
                Mux(written & (reg_bd == self.fetch_id), new_value, values[self.fetch_id])))
        m.d.sync += register.eq(values[reg_bd])
        with m.If(written):
            m.d.sync += values[reg_bd].eq(new_value)
        with m.If(writeback):
            m.d.sync += values[self.bd_id].eq(advanced)
        return _Iteration(fetched=current, register=register)

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
