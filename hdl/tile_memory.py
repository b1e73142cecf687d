"""A tile's data memory inside its AXI top: banks of block RAM shared by the DMA and a host.

:class:`TileMemory` holds ``words`` 32-bit words of one window of a tile's memory (the
window the DMA is built to reach, ``allowed``, docs/axi.md) in ``banks`` block RAMs,
word-interleaved: word ``a`` of the window is in bank ``a % banks`` at row
``a // banks``, so a channel streaming consecutive words moves from bank to bank and
two channels meet in a bank only now and then. The AIE-ML's own memories are banked
too (AM020: 8 banks in a core tile's 64 KB, 16 in a memory tile's 512 KB), which is
where the default bank counts come from.

Clients, each bank serving one of them a cycle:

* **the host**, on a register port (:func:`~.register_port.register_port_signature`,
  the port an :class:`~.axi_lite.AXILiteSlave` drives; byte addresses within the
  window; a write stores the bytes ``reg_wstrb`` names). It comes first in every bank
  and never waits, so the slave's contract holds: a read's word on ``reg_rdata`` in the
  next cycle, a write stored at the end of its cycle;
* **each DMA channel**, on its handshake memory port (:mod:`.memory_port`). A request
  goes into the channel's queue of two, whose room is its ``mem_ready`` (a register:
  no path from one channel's request to another's ready); each bank serves, of the
  channels whose oldest queued request is for it, the first after the one it served
  last (:func:`~.arbiter.round_robin`), when the host does not want it. A read's word
  comes with ``mem_valid`` the cycle after its bank serves it, a write's ``mem_acked``
  likewise. A channel's requests are served in its order, each in one cycle, so its
  answers come in order. ``mem_error`` is never set: the DMA's window check
  (``allowed``) keeps every access inside.

Throughput: a channel moves a word a cycle while its queue's oldest request finds its
bank free; a channel that meets another (or the host) in a bank waits a cycle there.
Requests from the queues' registers, and every bank's address from the round robin's
choice among them, keep the channels' own paths out of the banks.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import fifo, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In
from amaranth.utils import exact_log2

from ..model.cycle.contract import DATA_BITS
from ..model.errors import AiedmaError, field_error
from .arbiter import round_robin
from .layouts import check_kind
from .memory_port import read_port_signature, write_port_signature
from .register_port import REGISTER_ADDRESS_BITS, register_port_signature

__all__ = ["QUEUE_DEPTH", "TileMemory", "check_memory"]

QUEUE_DEPTH = 2
"""Requests a channel's queue holds: one its bank serves this cycle, one taken in it, so
a channel whose bank is free moves a word a cycle with a ready from a register."""


def _power_of_two(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 1
            and not value & (value - 1))


def check_memory(words: object, banks: object) -> tuple[int, int]:
    """``(words, banks)`` if a :class:`TileMemory` can be built of them, else an error
    naming the field, the value and the rule."""
    largest = 1 << (REGISTER_ADDRESS_BITS - 2)
    if not _power_of_two(words) or words > largest:
        raise field_error(AiedmaError, "memory_words", words,
                          f"must be a power of two up to {largest} (the host port's "
                          f"{REGISTER_ADDRESS_BITS}-bit byte addresses)")
    if not _power_of_two(banks) or not 2 <= banks <= words:
        raise field_error(AiedmaError, "memory_banks", banks,
                          f"must be a power of two from 2 to memory_words ({words})")
    return words, banks


class _Client:
    """A channel's queue of requests: its oldest request's bank, row and word."""

    def __init__(self, m: Module, name: str, port: object, words: int, banks: int,
                 write: bool) -> None:
        address_bits = exact_log2(words)
        self.name, self.write = name, write
        self.queue = queue = fifo.SyncFIFO(width=address_bits + (DATA_BITS if write else 0),
                                           depth=QUEUE_DEPTH)
        m.submodules[f"{name}_queue"] = queue
        enable = port.mem_we if write else port.mem_en
        entry = Cat(port.mem_addr[:address_bits], port.mem_data) if write \
            else port.mem_addr[:address_bits]
        m.d.comb += [queue.w_en.eq(enable), queue.w_data.eq(entry),
                     port.mem_ready.eq(queue.w_rdy), port.mem_error.eq(0)]
        bank_bits = exact_log2(banks)
        self.bank = queue.r_data[:bank_bits]
        self.row = queue.r_data[bank_bits:address_bits]
        self.data = queue.r_data[address_bits:] if write else Const(0, DATA_BITS)
        self.served = Signal(name=f"{name}_served")
        m.d.comb += queue.r_en.eq(self.served)


class TileMemory(wiring.Component):
    """A window of a tile's memory in banks of block RAM (see the module's docstring).

    Parameters
    ----------
    kind : {"tile", "memtile"}
        The DMA whose channels' ports it answers.
    words : int
        Words it holds (a power of two); the channels' word addresses are taken modulo
        ``words`` (the window's start is a multiple of it).
    banks : int
        Block RAMs, a power of two from 2 to ``words``.
    readers, writers : int
        MM2S and S2MM channels.

    Attributes
    ----------
    reg_addr, reg_write, reg_wdata, reg_wstrb, reg_read, reg_rdata
        The host's port (:func:`~.register_port.register_port_signature`): byte
        addresses within the window.
    read : In(read_port_signature(kind, handshake=True)).array(readers)
    write : In(write_port_signature(kind, handshake=True)).array(writers)
    """

    def __init__(self, kind: str, words: int, banks: int, readers: int, writers: int) -> None:
        self.kind = check_kind(kind)
        self.words, self.banks = check_memory(words, banks)
        super().__init__({
            **register_port_signature(strobes=True).members,
            "read": In(read_port_signature(kind, handshake=True)).array(readers),
            "write": In(write_port_signature(kind, handshake=True)).array(writers),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        clients = [_Client(m, f"read{n}", port, self.words, self.banks, False)
                   for n, port in enumerate(self.read)]
        clients += [_Client(m, f"write{n}", port, self.words, self.banks, True)
                    for n, port in enumerate(self.write)]
        bank_bits, address_bits = exact_log2(self.banks), exact_log2(self.words)
        host_word = self.reg_addr[2:2 + address_bits]
        host_bank = host_word[:bank_bits]
        grants = [self._bank(m, b, clients, host_bank == b, host_word[bank_bits:])
                  for b in range(self.banks)]
        words = Array(word for word, _ in grants)
        for k, client in enumerate(clients):    # (its oldest request is for one bank)
            m.d.comb += client.served.eq(Cat(*(served[k] for _, served in grants)).any())
        for client, port in zip(clients, [*self.read, *self.write], strict=True):
            answered = Signal(name=f"{client.name}_answered")
            m.d.sync += answered.eq(client.served)
            if client.write:
                m.d.comb += port.mem_acked.eq(answered)
                continue
            bank = Signal.like(client.bank)
            m.d.sync += bank.eq(client.bank)
            m.d.comb += [port.mem_valid.eq(answered), port.mem_data.eq(words[bank])]
        host_read, host_read_bank = Signal(), Signal.like(host_bank)
        m.d.sync += [host_read.eq(self.reg_read), host_read_bank.eq(host_bank)]
        m.d.comb += self.reg_rdata.eq(Mux(host_read, words[host_read_bank], 0))
        return m

    def _bank(self, m: Module, b: int, clients: list[_Client], host_here: Value,
              host_row: Value) -> tuple[Value, list[Value]]:
        """Bank ``b``: one block RAM, one access a cycle, the host's first, else a
        client's in round robin. Returns the RAM's read word (of the cycle before) and,
        per client, whether the bank serves it now."""
        memory = Memory(shape=DATA_BITS, depth=self.words // self.banks, init=[])
        m.submodules[f"bank{b}"] = memory
        write, read = memory.write_port(granularity=8), memory.read_port()
        host = Signal(name=f"bank{b}_host")
        m.d.comb += host.eq(host_here & (self.reg_read | self.reg_write))
        asks = [client.queue.r_rdy & (client.bank == b) for client in clients]
        serve = Signal(name=f"bank{b}_serve")
        grant, any_ask = round_robin(m, asks, serve, f"bank{b}")
        m.d.comb += serve.eq(any_ask & ~host)
        rows = Array(client.row for client in clients)
        data = Array(client.data for client in clients)
        writes = Cat(*(Const(int(client.write), 1) for client in clients))
        whole = (1 << DATA_BITS // 8) - 1
        m.d.comb += [
            read.addr.eq(Mux(host, host_row, rows[grant])),
            write.addr.eq(read.addr),
            write.data.eq(Mux(host, self.reg_wdata, data[grant])),
            # bytes: the host's strobes; a channel's whole word
            write.en.eq(Mux(host, Mux(self.reg_write, self.reg_wstrb, 0),
                            Mux(serve & writes.bit_select(grant, 1), whole, 0))),
        ]
        return read.data, [serve & (grant == k) for k in range(len(clients))]
