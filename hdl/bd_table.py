"""A DMA's BD table in block RAM: the register port, a whole-BD fetch, iteration write-back.

The words are the register image of ``BufferDescriptor.encode()``: BD ``n`` word ``w``
is at register address ``BD_REGISTER_BASE[kind] + 0x20 n + 4 w`` (docs/bd.md
"Registers"). The table keeps one memory per word index, so a BD is fetched whole: a
fetch of BD ``n`` in cycle ``t`` shows its fields, decoded to actual values (the field
table's encodings: minus one, two's complement, burst length), in cycle
``t + BD_FETCH_LATENCY`` (the contract's fetch stage): the block RAM reads in cycle
``t``. With a latency of 2 its output is registered at the end of ``t + 1``, through the
register port's forward (below), and logic reads only that register. With a latency of
3 or more the RAM's output goes straight into a register (the block RAM's own output
register where the part and the synthesis tool take it), the forward follows in
``t + 2``, and the words are registered again until they show. ``iteration_current`` is
advanced for the next fetch of the BD, back to 0 once it reaches ``iteration_wrap`` or if
it stood past it (docs/bd.md "Iteration"): a fetch in the next cycle or later sees the
new value.

The field the hardware writes back (``iteration_current``) is also kept in a small
table beside the RAM (:class:`IterationTable`), written by the same register writes and
by the write-back, read only at registered addresses; the fetch walk decides the next
load from the fetched words themselves (``use_next_bd``, ``next_bd``), so a channel
fetches at most every ``FETCH_INTERVAL`` cycles and no table is read at an address
decided in the same cycle.

Every read of the BD words is synchronous, so they are block RAM (ECP5 DP16KD, iCE40
SB_RAM40_4K), one copy of the BD words: the register port reads and writes through one
port of each, the fetch reads through the other.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..model.arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS
from ..model.bd.fields import BD_COUNT, FIELD_INDEX, FIELDS, WORDS, Encoding, Field
from ..model.cycle.contract import BD_FETCH_LATENCY
from .layouts import check_kind, field_shape
from .register_port import drive_register_port, register_port_signature

__all__ = [
    "BDTable",
    "IterationTable",
    "SharedBDTable",
    "bd_full_layout",
    "decode_field",
    "fetch_signature",
    "names_one_of",
]


def _delayed(m: Module, value: Value, cycles: int, name: str) -> Value:
    """``value`` through ``cycles`` registers (``value`` itself for 0)."""
    for stage in range(cycles):
        register = Signal(value.shape(), name=f"{name}_d{stage + 1}")
        m.d.sync += register.eq(value)
        value = register
    return value


class IterationTable:
    """``iteration_current`` of every BD beside the RAM: written by the register port and
    by the fetch's write-back, read in the cycle after a fetch and by the register port.

    Two writers may write different BDs in one cycle, so the table is two memories with
    one write port each, the field the XOR of the two (a live-value table by XOR): the
    register port stores its value XOR the write-back memory's word at its BD, the
    write-back its value XOR the register memory's word at its BD. Every read is
    asynchronous, so the memories are LUT RAM where the part has it (ECP5: each read port
    a copy, its read one LUT deep from a registered address, where a table of flip-flops
    puts a 48-way multiplexer fanned out from that address before the register).

    Parameters
    ----------
    m : Module
    kind : {"tile", "memtile", "shim"}
    """

    def __init__(self, m: Module, kind: str) -> None:
        self.slice = FIELD_INDEX[kind]["iteration_current"].slices[0]
        self.width = self.slice.width
        count = BD_COUNT[kind]
        self._by_register = Memory(shape=self.width, depth=count, init=[])
        self._by_walk = Memory(shape=self.width, depth=count, init=[])
        m.submodules.iteration_by_register = self._by_register
        m.submodules.iteration_by_walk = self._by_walk

    def _read(self, m: Module, memory: Memory, bd: Value) -> Value:
        port = memory.read_port(domain="comb")
        m.d.comb += port.addr.eq(bd)
        return port.data

    def read(self, m: Module, bd: Value) -> Value:
        """The field of BD ``bd`` (two LUT RAM reads and an XOR)."""
        return self._read(m, self._by_register, bd) ^ self._read(m, self._by_walk, bd)

    def register_port(self, m: Module, bd: Value, value: Value, en: Value) -> Value:
        """The register port: stores ``value`` at BD ``bd`` at the end of the cycle when
        ``en``; returns the field at ``bd`` (its read, one copy of the write-back memory
        serving both)."""
        port = self._by_register.write_port()
        by_walk = self._read(m, self._by_walk, bd)
        m.d.comb += [port.addr.eq(bd), port.en.eq(en), port.data.eq(value ^ by_walk)]
        return self._read(m, self._by_register, bd) ^ by_walk

    def write_back(self, m: Module, bd: Value, value: Value, en: Value) -> None:
        """The fetch's write-back stores ``value`` at the end of the cycle when ``en`` (the
        register port must not write the same BD then)."""
        port = self._by_walk.write_port()
        m.d.comb += [port.addr.eq(bd), port.en.eq(en),
                     port.data.eq(value ^ self._read(m, self._by_register, bd))]


class _Iteration(NamedTuple):
    """The ``iteration_current`` bits a fetch and a register read show."""

    fetched: Value
    register: Value


def names_one_of(bd_id: Value, bds: range) -> Value:
    """``bd_id`` is one of ``bds`` (no compare with a bound the ID's width already keeps:
    Verilator flags a constant compare)."""
    inside = Const(1)
    if bds.start:
        inside &= bd_id >= bds.start
    if bds.stop < 1 << len(bd_id):
        inside &= bd_id < bds.stop
    return inside


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
    latency : int, optional
        Cycles from a fetch to its BD on ``bd``: the contract's ``BD_FETCH_LATENCY``
        (another value for the tests of the next contract), at least 2.

    Raises
    ------
    ValueError
        For a latency below 2 (a RAM read and its output register).

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata, reg_read, reg_rdata
        The register port (:func:`~.register_port.register_port_signature`): a write
        in the BD region stores its word at the end of the cycle; ``reg_rdata`` is the
        word read in the previous cycle (0 outside the BD region).
    fetch_en : In(1)
    fetch_id : In(range(BD_COUNT[kind]))
        Fetch a BD. ``fetch_id`` is read in every cycle, ``fetch_en`` or not;
        ``fetch_en`` makes it a fetch (the iteration advances), so a user may present the
        address before it knows it fetches.
    bd : Out(bd_full_layout(kind))
        The BD at ``fetch_id`` of ``latency`` cycles before (meaningful after a fetch
        then), decoded from registered words.
    bd_id : Out
        The BD shown on ``bd``.
    chain_leaves : Out(1)
        That BD chains (``use_next_bd``) to a BD outside its half of the table (memory
        tile: 0-23 / 24-47) or past the table; always 0 where every ``next_bd`` value is
        a BD of the one half.
    """

    def __init__(self, kind: str, latency: int = BD_FETCH_LATENCY) -> None:
        self.kind = check_kind(kind)
        if latency < 2:
            raise ValueError(f"latency={latency}: a BD table's fetch is a RAM read and at "
                             "least one output register, 2 cycles or more")
        self.latency = latency
        # registers between the block RAM's output and the register port's forward
        self._raw_stages = min(1, latency - 2)
        count = BD_COUNT[kind]
        super().__init__({
            **register_port_signature().members,
            "fetch_en": In(1), "fetch_id": In(range(count)),
            "bd": Out(bd_full_layout(kind)), "bd_id": Out(range(count)),
            "chain_leaves": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind, count, words = self.kind, BD_COUNT[self.kind], WORDS[self.kind]
        offset, in_region = self._region(m)
        reg_bd, reg_word = self.reg_bd_index(offset[5:]), offset[2:5]
        written = Signal(words)     # the register port writes word w of BD reg_bd
        m.d.comb += written.eq(Mux(self.reg_write & in_region, 1 << reg_word, 0))
        # The fetch pipeline: the fetch cycle, the RAM's output cycle, the words registered.
        fetched, shown_id = Signal(), Signal(range(count))
        m.d.sync += [fetched.eq(self.fetch_en), shown_id.eq(self.fetch_id)]
        read_word, read_hit = Signal(3), Signal()
        m.d.sync += [read_word.eq(reg_word), read_hit.eq(self.reg_read & in_region)]
        memories = [self._word_memory(m, w, reg_bd, written[w]) for w in range(words)]
        register_data = [register_word for _, register_word in memories]
        fetch_data, at_write_back = self._fetch_words(
            m, [fetch_word for fetch_word, _ in memories], written, reg_bd, shown_id)
        (wrap,) = FIELD_INDEX[kind]["iteration_wrap"].slices
        iteration = self._iteration(m, written, at_write_back[wrap.word][wrap.lsb:wrap.msb + 1],
                                    reg_bd, fetched, shown_id)
        (slot,) = FIELD_INDEX[kind]["iteration_current"].slices
        register_data[slot.word] = Cat(register_data[slot.word][:slot.lsb], iteration.register,
                                       register_data[slot.word][slot.msb + 1:])
        m.d.comb += self.reg_rdata.eq(
            Mux(read_hit, Cat(*register_data).word_select(read_word, 32), 0))
        data = list(fetch_data)
        # (the field is read in t + 2; the words show in t + latency)
        current = _delayed(m, iteration.fetched, self.latency - 2, "iteration_shown")
        data[slot.word] = Cat(data[slot.word][:slot.lsb], current, data[slot.word][slot.msb + 1:])
        for f in FIELDS[kind]:
            m.d.comb += getattr(self.bd, f.name).eq(decode_field(f, data))
        return m

    def _fetch_words(self, m: Module, ram_words: list[Value], written: Value, reg_bd: Value,
                     shown_id: Signal) -> tuple[list[Value], list[Value]]:
        """The fetched BD's words from the RAMs' outputs (``ram_words``, in ``t + 1``) to
        the registers that show them in ``t + latency``; drives ``bd_id`` and
        ``chain_leaves`` beside them. Returns those registers and the words as they stand
        in ``t + 2``, where the iteration's write-back reads the wrap.

        A register write of a word in its fetch cycle is what the fetch shows: the RAM
        reads the old word (its ports do not see each other), so the written word is kept
        and chosen in front of the register after the RAM's own (``_raw_stages``). Whether
        it is the fetched BD's is a compare of registers in the cycle after the fetch (the
        fetch's address comes late, through the walk and the fetch port's arbiter).
        """
        written_bd, written_words = Signal.like(reg_bd), Signal(len(ram_words))
        forward, forward_data = Signal(len(ram_words)), Signal(32)
        m.d.sync += [written_bd.eq(reg_bd), written_words.eq(written),
                     forward_data.eq(self.reg_wdata)]
        m.d.comb += forward.eq(Mux(shown_id == written_bd, written_words, 0))
        forward = _delayed(m, forward, self._raw_stages, "forward")
        forward_data = _delayed(m, forward_data, self._raw_stages, "forward_data")
        forward_id = _delayed(m, shown_id, self._raw_stages, "forward_id")
        incoming = []               # the words the register after the forward takes
        for w, ram_word in enumerate(ram_words):
            raw = _delayed(m, ram_word, self._raw_stages, f"ram_word{w}")
            incoming.append(Mux(forward[w], forward_data, raw))
        shown = self.latency - 1 - self._raw_stages     # registers from the forward on
        fetch_data = [_delayed(m, word, shown, f"fetched_word{w}")
                      for w, word in enumerate(incoming)]
        leaves = _delayed(m, self._leaves_half(incoming, forward_id), shown, "chain_leaves")
        m.d.comb += [self.bd_id.eq(_delayed(m, forward_id, shown, "bd_id")),
                     self.chain_leaves.eq(leaves)]
        return fetch_data, fetch_data if self._raw_stages == 0 else incoming

    def _leaves_half(self, words: list[Value], bd_id: Value) -> Value:
        """BD ``bd_id`` (``words``) chains to a BD outside its half of the table (or past
        the last BD, which a memory tile's 6-bit ``next_bd`` can name), worked out beside
        the output registers so that the fetch stage reads it from a register."""
        dma = DMA_KINDS[self.kind]
        (use,) = FIELD_INDEX[self.kind]["use_next_bd"].slices
        (field,) = FIELD_INDEX[self.kind]["next_bd"].slices
        next_bd = words[field.word][field.lsb:field.msb + 1]
        size = dma.bd_count // dma.bd_halves
        if dma.bd_halves == 1 and dma.bd_count == 1 << field.width:
            return Const(0)        # every value of the field is a BD of the one half
        stays = Const(0)
        for first in range(0, dma.bd_count, size):
            half = range(first, first + size)
            stays |= names_one_of(bd_id, half) & names_one_of(next_bd, half)
        return words[use.word][use.lsb] & ~stays

    def _region(self, m: Module) -> tuple[Signal, Value]:
        """The register port's offset into the BD region, and whether it is in it.

        The region starts on a boundary of its own size rounded up to a power of two
        (checked here), so the offset is the address's low bits and the test an
        equality of its high bits and a compare of the BD number: no 20-bit subtraction
        or carry chain stands between the register port and the tables' write enables.
        """
        base = DMA_KINDS[self.kind].bd_register_base
        count = BD_COUNT[self.kind]
        low = (BD_REGISTER_STRIDE * count - 1).bit_length()
        if base % (1 << low):
            raise AssertionError(f"BD region at {base:#x} is not aligned to {1 << low:#x}")
        offset = Signal(low)
        m.d.comb += offset.eq(self.reg_addr[:low])
        stride_bits = (BD_REGISTER_STRIDE - 1).bit_length()
        in_region = self.reg_addr[low:] == base >> low
        if count < 1 << (low - stride_bits):     # (a full power of two needs no compare)
            in_region &= self.reg_addr[stride_bits:low] < count
        return offset, in_region

    def _word_memory(self, m: Module, w: int, reg_bd: Value, write_en: Value) -> tuple:
        """Word ``w`` of every BD: one block RAM, written and read by the register port
        at one address (one read-write port) and read by the fetch (a read port).

        Both reads are plain synchronous reads (no transparency), so yosys keeps the
        fetch's output register in the fabric rather than folding it into the RAM.
        """
        # Block RAM on every part (ECP5 and iCE40 both have it); yosys would otherwise
        # take LUT RAM where a part has it and the table is small.
        memory = Memory(shape=32, depth=BD_COUNT[self.kind], init=[],
                        attrs={"ram_style": "block"})
        m.submodules[f"word{w}"] = memory
        write = memory.write_port()
        fetch = memory.read_port()
        reg = memory.read_port()
        m.d.comb += [
            write.addr.eq(reg_bd), write.data.eq(self.reg_wdata), write.en.eq(write_en),
            fetch.addr.eq(self.fetch_id),
            reg.addr.eq(reg_bd), reg.en.eq(self.reg_read),
        ]
        return fetch.data, reg.data

    def _iteration(self, m: Module, written: Value, wrap: Value, reg_bd: Value,
                   fetched: Value, shown_id: Value) -> _Iteration:
        """``iteration_current`` (:class:`IterationTable`), in two steps from registers:
        read in the cycle after the fetch, advanced (0 at or past ``iteration_wrap``:
        ``wrap``, raw, from the words) and written back in the cycle after that, when the
        fetched BD's words show. A fetch of the same BD in the cycle between reads the
        advanced value through a bypass.

        **decision**: a register write of the BD's word in the cycle its write-back lands:
        the write-back wins (the hardware's own state; a program that rewrites a BD a
        running channel fetches has a race either way).
        """
        table = IterationTable(m, self.kind)
        slot = table.slice
        current = Signal(table.width)
        pending, pending_id = Signal(), Signal.like(shown_id)
        advanced = Signal(table.width)
        m.d.comb += advanced.eq(Mux(current >= wrap, 0, current + 1))
        bypass = pending & (pending_id == shown_id)
        m.d.sync += [
            current.eq(Mux(bypass, advanced, table.read(m, shown_id))),
            pending.eq(fetched), pending_id.eq(shown_id),
        ]
        table.write_back(m, pending_id, advanced, pending)
        register = Signal(table.width)
        m.d.sync += register.eq(table.register_port(
            m, reg_bd, self.reg_wdata[slot.lsb:slot.msb + 1],
            written[slot.word] & ~(pending & (pending_id == reg_bd))))
        return _Iteration(fetched=current, register=register)

    def reg_bd_index(self, value: Value) -> Value:
        """The BD number of a register offset, cut to the table's index width."""
        return value[:Const(BD_COUNT[self.kind] - 1).shape().width]


def fetch_signature(kind: str) -> wiring.Signature:
    """A channel's fetch port on a shared table: ``en``, ``id`` out; ``grant``, the BD in.

    The channel's side (``Out``); the table has ``In(fetch_signature(kind))`` per channel.
    ``en`` asks for a fetch of BD ``id``; ``grant`` says it is served in this cycle (else
    the channel asks again); ``bd`` shows the BD fetched ``BD_FETCH_LATENCY`` cycles
    before, whoever fetched it, and ``chain_leaves`` whether its chain leaves its half
    (:class:`BDTable`).
    """
    return wiring.Signature({
        "en": Out(1), "id": Out(range(BD_COUNT[kind])), "grant": In(1),
        "bd": In(bd_full_layout(kind)), "chain_leaves": In(1),
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
            m.d.comb += [port.grant.eq(grant[p]), port.bd.eq(table.bd),
                         port.chain_leaves.eq(table.chain_leaves)]
            fetch_id = fetch_id | Mux(grant[p], port.id, 0)
            with m.If(grant[p]):
                m.d.sync += last.eq(p)
        m.d.comb += [table.fetch_en.eq(requests.any()), table.fetch_id.eq(fetch_id)]
        return m
