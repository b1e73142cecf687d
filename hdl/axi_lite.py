"""An AXI4-Lite slave in front of a DMA's register port (``register_port.py``), or of a
tile memory's host port (the same port, :mod:`.tile_memory`).

:class:`AXILiteSlave` takes AXI4-Lite reads and writes (32-bit data) and drives the
project's register port, whose one address serves a read or a write a cycle. Which
addresses are registers comes from the model's register map
(``model/arch/register_map.py``): :func:`register_decode` generates the comparisons
from its table when the block is elaborated, so there is no second table here.

Responses (:func:`~aiedma.model.arch.register_map.access_taken`):

* a read or a write of a register answers OKAY; a read of a start queue gives 0, a
  write to a status register changes nothing;
* an address that is no register, or a write whose ``wstrb`` is not ``0xF`` (no
  register takes part of a word), answers SLVERR and changes nothing; a refused read
  gives 0.

How it is built, and why:

* **One register stage from the bus to the DMA.** Each channel (AW, W, AR) lands in a
  holding register with its decode (mapped, readable, whole strobe) computed from the
  bus wires; the register port is driven from those registers only. ``awready``,
  ``wready`` and ``arready`` depend on registers only, never on a ``valid`` or on
  ``bready``/``rready``, so no combinational path crosses the block.
* **No idle cycles.** A holding register is ready again in the cycle it is emptied, so
  writes alone, or reads alone, are taken one a cycle. The register port has one
  address: when a write and a read are both waiting they take turns (a priority bit
  that flips), one a cycle between them.
* **Backpressure loses nothing.** A write goes to the register port only when the B
  queue (2 entries) has room, a read only when the R queue (3 entries) has room for it
  and the read still in flight; the room is counted from registers, so a low
  ``bready``/``rready`` stalls the ports in the next cycle without dropping a response.
* **AW and W in any order.** Each waits in its own holding register until the other
  comes.
* The two low address bits are dropped (an AXI4-Lite transfer is a whole bus word);
  ``awprot``/``arprot`` are accepted and not used.

Latency: a write's B is valid the cycle after its AW and W are both held (2 cycles
after the later handshake); a read's R is valid 3 cycles after its AR handshake.

Decisions (docs/decisions.md, "Register bus"): a read of a write-only register answers
OKAY with 0 and a write to a read-only one OKAY, changing nothing; SLVERR is kept for
an access no register can take.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from ..model.arch.register_map import ALL_BYTES, RegisterBlock, register_blocks, register_span
from .layouts import check_kind
from .register_port import REGISTER_ADDRESS_BITS, register_port_signature

__all__ = ["OKAY", "SLVERR", "AXILiteSlave", "RegisterDecode", "axi_lite_signature",
           "memory_decode", "register_decode"]

OKAY, SLVERR = 0b00, 0b10
"""AXI response codes the slave gives."""

B_DEPTH = 2
"""Write responses the slave holds: one being taken, one just made."""
R_DEPTH = 3
"""Read responses the slave holds: one being taken, one just made, one in flight."""


def axi_lite_signature(address_bits: int, prefix: str = "s_axil") -> wiring.Signature:
    """AXI4-Lite, seen from the slave, with Vivado's port names (``s_axil_awaddr``, ...;
    ``prefix`` replaces ``s_axil``)."""
    members = {
        "awaddr": In(address_bits), "awprot": In(3), "awvalid": In(1), "awready": Out(1),
        "wdata": In(32), "wstrb": In(4), "wvalid": In(1), "wready": Out(1),
        "bresp": Out(2), "bvalid": Out(1), "bready": In(1),
        "araddr": In(address_bits), "arprot": In(3), "arvalid": In(1), "arready": Out(1),
        "rdata": Out(32), "rresp": Out(2), "rvalid": Out(1), "rready": In(1),
    }
    return wiring.Signature({f"{prefix}_{name}": member for name, member in members.items()})


@dataclass(frozen=True)
class RegisterDecode:
    """What an address is, as one-bit values: a register, a readable one, a writable one."""

    mapped: Value
    readable: Value
    writable: Value


def register_decode(kind: str, address: Value) -> RegisterDecode:
    """The register map's decode of a byte ``address``, generated from its blocks.

    Each block is a range check and, within it, an entry offset below the words of an
    entry (strides are powers of two, so the offset is the low bits of the distance
    from the block's base) and a zero in the two low bits.
    """
    hits: dict[str, list[Value]] = {"mapped": [], "readable": [], "writable": []}
    for block in register_blocks(kind):
        hit = _block_hit(block, address)
        hits["mapped"].append(hit)
        if block.access.readable:
            hits["readable"].append(hit)
        if block.access.writable:
            hits["writable"].append(hit)
    return RegisterDecode(*(Cat(*values).any() if values else Const(0)
                            for values in hits.values()))


def memory_decode(words: int, address: Value) -> RegisterDecode:
    """A memory of ``words`` words at byte address 0: every whole word below it is read
    and written."""
    checks = [address[:2] == 0]
    if 4 * words < 1 << len(address):   # (a compare no address can fail is a lint warning)
        checks.append(address < 4 * words)
    inside = Cat(*checks).all()
    return RegisterDecode(inside, inside, inside)


def _block_hit(block: RegisterBlock, address: Value) -> Value:
    """``address`` is a register of ``block``.

    The block lies in one aligned window of ``2**w`` bytes: the bits above ``w`` are
    compared for equality with the window's, and only the ``w`` bits below go through
    the range and the entry-offset checks, so no comparison is wider than the block
    (a 20-bit range check is a carry chain from the bus into the decode register).
    """
    w = max((block.base ^ (block.end - 1)).bit_length(), 2)
    low, low_base = address[:w], block.base & ((1 << w) - 1)
    checks = [address[:2] == 0]
    if len(address) > w:
        checks.append(address[w:] == block.base >> w)
    if low_base:
        checks.append(low >= low_base)
    if low_base + block.end - block.base < 1 << w:
        checks.append(low < low_base + block.end - block.base)
    if block.count > 1 and 4 * block.words < block.stride:
        # between two entries: the words past an entry's last are no register
        offset_bits = (block.stride - 1).bit_length()
        checks.append((low - low_base)[:offset_bits] < 4 * block.words)
    return Cat(*checks).all()


class AXILiteSlave(wiring.Component):
    """AXI4-Lite slave driving a register port (see the module's docstring).

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA behind it, whose register map decides what is mapped.
    address_bits : int
        Width of ``s_axil_awaddr`` / ``s_axil_araddr``: at least what the kind's registers
        need (17 for the core tile and shim, 20 for the memory tile). Address bits above
        the register port's 20 must be 0 for a register.
    prefix : str
        The ports' prefix (``s_axil``: ``s_axil_awaddr``, ...).
    words : int, optional
        The slave fronts a memory of ``words`` words (:class:`~.tile_memory.TileMemory`'s
        host port) instead of the kind's registers: every word below ``4 * words`` is
        mapped, read and written, a write's bytes as its ``wstrb`` says (on
        ``reg_wstrb``; ``address_bits`` need only reach it).

    Attributes
    ----------
    s_axil_* : the AXI4-Lite slave port (:func:`axi_lite_signature`).
    reg_addr, reg_write, reg_wdata, reg_read, reg_rdata
        The register port, driven (:func:`~.register_port.register_port_signature`
        flipped).
    """

    def __init__(self, kind: str, address_bits: int = REGISTER_ADDRESS_BITS, *,
                 prefix: str = "s_axil", words: int | None = None) -> None:
        self.kind = check_kind(kind)
        self.prefix, self.words = prefix, words
        if words is None:
            need, what = register_span(kind), f"the {kind} DMA's registers"
        else:
            need, what = (4 * words - 1).bit_length(), f"a memory of {words} words"
            if need > REGISTER_ADDRESS_BITS:
                raise ValueError(f"words={words}: a memory behind the register port holds "
                                 f"at most {1 << (REGISTER_ADDRESS_BITS - 2)} words")
        if address_bits < need:
            raise ValueError(f"address_bits={address_bits}: {what} need {need} address bits")
        self.address_bits = address_bits
        super().__init__({**axi_lite_signature(address_bits, prefix).members,
                          **register_port_signature(strobes=words is not None).flip().members})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.b_queue = b_queue = fifo.SyncFIFO(width=1, depth=B_DEPTH)
        m.submodules.r_queue = r_queue = fifo.SyncFIFO(width=33, depth=R_DEPTH)
        aw, w, ar = self._holding(m)
        # What may go to the register port this cycle, from registers only.
        read_in_flight = Signal()
        do_write, do_read = Signal(), Signal()
        r_room = self._read_room(m, r_queue, do_read)
        write_ready = aw["full"] & w["full"] & b_queue.w_rdy
        read_ready = ar["full"] & r_room
        prefer_read = Signal()
        m.d.comb += [do_write.eq(write_ready & ~(read_ready & prefer_read)),
                     do_read.eq(read_ready & ~do_write)]
        with m.If(write_ready & read_ready):
            m.d.sync += prefer_read.eq(do_write)
        m.d.comb += [aw["take"].eq(do_write), w["take"].eq(do_write), ar["take"].eq(do_read)]
        # The register port, from the holding registers.
        # (a memory takes any strobe, passed on; a register only a whole word)
        taken = aw["mapped"] & (w["whole"] if self.words is None else 1)
        m.d.comb += [
            self.reg_addr.eq(Mux(do_write, aw["addr"], ar["addr"])),
            self.reg_write.eq(do_write & taken & aw["writable"]),
            self.reg_wdata.eq(w["data"]),
            *([self.reg_wstrb.eq(w["strobe"])] if self.words is not None else []),
            self.reg_read.eq(do_read & ar["readable"]),
            b_queue.w_en.eq(do_write), b_queue.w_data.eq(~taken),
            self._bus("bvalid").eq(b_queue.r_rdy),
            self._bus("bresp").eq(Mux(b_queue.r_data, SLVERR, OKAY)),
            b_queue.r_en.eq(self._bus("bready")),
        ]
        # A read's word is on reg_rdata the cycle after it goes: queue it then.
        in_flight_mapped, in_flight_readable = Signal(), Signal()
        m.d.sync += [read_in_flight.eq(do_read), in_flight_mapped.eq(ar["mapped"]),
                     in_flight_readable.eq(ar["readable"])]
        m.d.comb += [
            r_queue.w_en.eq(read_in_flight),
            r_queue.w_data.eq(Cat(Mux(in_flight_readable, self.reg_rdata, 0),
                                  ~in_flight_mapped)),
            self._bus("rvalid").eq(r_queue.r_rdy),
            self._bus("rdata").eq(r_queue.r_data[:32]),
            self._bus("rresp").eq(Mux(r_queue.r_data[32], SLVERR, OKAY)),
            r_queue.r_en.eq(self._bus("rready")),
        ]
        return m

    def _bus(self, name: str) -> Signal:
        """The AXI4-Lite port ``name`` (``awaddr``, ...) under the slave's prefix."""
        return getattr(self, f"{self.prefix}_{name}")

    def _read_room(self, m: Module, r_queue: fifo.SyncFIFO, issued: Signal) -> Signal:
        """A register: the R queue has room for one more read (those queued and those
        ``issued`` and not yet queued counted). Kept as a register so the issue decision
        reads one flip-flop, not the queue's level and an adder."""
        reserved = Signal(range(R_DEPTH + 1))
        room = Signal(init=1)
        taken = r_queue.r_rdy & self._bus("rready")
        after = Signal(range(R_DEPTH + 1))
        m.d.comb += after.eq(reserved + issued - taken)
        m.d.sync += [reserved.eq(after), room.eq(after < R_DEPTH)]
        return room

    def _holding(self, m: Module) -> tuple[dict, dict, dict]:
        """The AW, W and AR holding registers, each with its decode and a ``take``."""
        aw = self._address_holding(m, "aw")
        ar = self._address_holding(m, "ar")
        w = {"full": Signal(name="w_full"), "data": Signal(32, name="w_data"),
             "whole": Signal(name="w_whole"), "strobe": Signal(4, name="w_strobe"),
             "take": Signal(name="w_take")}
        ready = ~w["full"] | w["take"]
        m.d.comb += self._bus("wready").eq(ready)
        with m.If(self._bus("wvalid") & ready):
            m.d.sync += [w["full"].eq(1), w["data"].eq(self._bus("wdata")),
                         w["whole"].eq(self._bus("wstrb") == ALL_BYTES),
                         w["strobe"].eq(self._bus("wstrb"))]
        with m.Elif(w["take"]):
            m.d.sync += w["full"].eq(0)
        return aw, w, ar

    def _address_holding(self, m: Module, channel: str) -> dict:
        """An address channel's holding register: the word address and its decode."""
        valid = self._bus(f"{channel}valid")
        address = self._bus(f"{channel}addr")
        word = Signal(self.address_bits, name=f"{channel}_word")
        m.d.comb += word.eq(Cat(Const(0, 2), address[2:]))
        decode = (register_decode(self.kind, word) if self.words is None
                  else memory_decode(self.words, word))
        held = {"full": Signal(name=f"{channel}_full"),
                "addr": Signal(REGISTER_ADDRESS_BITS, name=f"{channel}_addr"),
                "mapped": Signal(name=f"{channel}_mapped"),
                "readable": Signal(name=f"{channel}_readable"),
                "writable": Signal(name=f"{channel}_writable"),
                "take": Signal(name=f"{channel}_take")}
        ready = ~held["full"] | held["take"]
        m.d.comb += self._bus(f"{channel}ready").eq(ready)
        with m.If(valid & ready):
            m.d.sync += [held["full"].eq(1), held["addr"].eq(word[:REGISTER_ADDRESS_BITS]),
                         held["mapped"].eq(decode.mapped),
                         held["readable"].eq(decode.readable),
                         held["writable"].eq(decode.writable)]
        with m.Elif(held["take"]):
            m.d.sync += held["full"].eq(0)
        return held
