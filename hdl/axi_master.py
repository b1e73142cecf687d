"""An AXI4 master for the shim DMA's channels: word requests in, INCR bursts out.

The shim DMA reaches external memory through one AXI4 master, but its channels think in
words: each asks for one word address a cycle and expects the answers in the order it
asked. :class:`AXI4Master` sits between the two. Each channel is a *client* with a small
request/response port (:func:`read_client_signature`, :func:`write_client_signature`);
the block gathers a client's consecutive words into INCR bursts and issues them on one
AXI4 master port (``m_axi_*``, Vivado's names, 32-bit data, one word a beat).

How it is built, and why:

* **A burst per run of words.** A client's requests at consecutive word addresses join
  its open burst; the burst is closed when a request does not continue it, when it
  holds ``max_burst`` words, when the next word would cross a 4 KB boundary (no AXI
  burst may, AMBA AXI4 A3.4.1), or in the first cycle no request is taken, so a
  stalled client's words are not held back. Closing costs no cycle: the request that
  does not continue opens the next burst in the cycle the old one is queued.
* **Bursts overlap.** Closed bursts wait in a queue of :data:`CLOSED_DEPTH` per client
  while the next burst fills; ``ready`` drops only when that queue is full (or, for a
  write, when the client's data FIFO is), and it is computed from registers only, so
  no combinational path runs from a client's ``en`` back to it.
* **One register slot per address channel.** AR and AW each load a closed burst from
  the clients in round robin into a register that drives the channel, so the payload
  is stable while ``valid`` waits for ``ready`` (the AXI rule), and the slot reloads in
  the cycle it is taken: one burst a cycle.
* **IDs are client indices.** AXI keeps the order of transactions of one ID, so each
  client's answers come back in its request order with no reorder buffer; answers of
  different clients may come in any order, interleaved beat by beat.
* **W follows AW, without waiting for AWREADY.** A write's word goes into its client's
  data FIFO when it is taken; a queue of the AWs put on the channel (client, length)
  chooses which FIFO feeds W, in AW order (AXI4 has no WID). A burst's first W beat can
  go in the cycle its ``AWVALID`` rises, never before; it does not wait for the AW
  handshake, as a slave may wait for ``WVALID`` before it raises ``AWREADY`` (AMBA AXI4,
  A3.3.1), which would then never come. Each client keeps the lengths of its bursts on
  AW (:data:`B_DEPTH` at most) to say how many words a B answers.
* **Responses cannot be refused.** A client reserves room for each word it asks for,
  so ``RREADY`` and ``BREADY`` are held high; R beats and B responses reach the clients
  through one register stage, routed by ID. An error response (SLVERR, DECERR) still
  answers its words, with ``error`` set.

Throughput: with the AXI slave always ready, one client moves one word a cycle in each
direction, provided a read client allows enough words in flight: a word waits for its
burst to fill, to go out and to come back, so the client needs a credit of ``max_burst``
plus the memory's read latency (AR handshake to first R beat) plus 4 cycles (88 for
64-word bursts and a latency of 20). All read clients share R, one beat a cycle in total
(AXI's limit), and all write clients share W.

No order is kept between reads and writes: a read of a word being written may return
the old word unless its client waits for the write's ``acked``.
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd.fields import FIELD_INDEX
from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS
from ..model.errors import AiedmaError, field_error
from .arbiter import round_robin

__all__ = [
    "B_DEPTH",
    "CLOSED_DEPTH",
    "W_ORDER_DEPTH",
    "AXI4Master",
    "BurstCoalescer",
    "axi4_master_signature",
    "burst_layout",
    "read_client_signature",
    "write_client_signature",
]

MAX_BURST = 256
"""The longest INCR burst AXI4 allows, in beats (AxLEN is 8 bits)."""
PAGE_BYTES = 4096
"""No burst crosses a multiple of this many bytes (AMBA AXI4, A3.4.1)."""
WORD_BYTES = DATA_BITS // 8
SIZE_WORD = (WORD_BYTES - 1).bit_length()
USER_BITS = FIELD_INDEX["shim"]["smid"].slices[0].width
"""Width of AxUSER: the shim BD's ``smid`` (the stream ID the hardware's SMMU takes)."""
"""AxSIZE of a 32-bit beat: 2 (4 bytes)."""
BURST_INCR = 1
"""AxBURST of an incrementing burst."""

CLOSED_DEPTH = 2
"""Closed bursts a client may have waiting for AR/AW: one being loaded into the address
slot, one just closed, so a client never waits on a short burst it just closed."""
W_ORDER_DEPTH = 4
"""AWs put on the channel whose W beats have not all gone. W follows AW within a few
cycles while ``wready`` is high, so four are enough for back-to-back single-word bursts."""
B_DEPTH = 8
"""Write bursts on AW a client may have without their B: single-word bursts keep one a
cycle up to a B latency of six cycles after WLAST; 64-word bursts need two or three."""


def burst_layout(address_bits: int) -> data.StructLayout:
    """A closed burst: first word ``address``, ``count`` (beats minus one, as AxLEN), and
    the ``cache``, ``prot``, ``qos``, ``smid`` its first request carried."""
    return data.StructLayout({"address": address_bits, "count": 8, "cache": 4, "prot": 3,
                              "qos": 4, "smid": USER_BITS})


def read_client_signature(address_bits: int) -> wiring.Signature:
    """A read client's port, seen from the client (a DMA channel).

    ``addr``, ``en`` out: a request, taken in a cycle with ``ready`` high. ``valid``,
    ``data``, ``error`` in: the answer to the client's oldest unanswered request, which it
    cannot refuse. ``cache``, ``prot``, ``qos``, ``smid`` out: the AXI attributes (``smid``
    on AxUSER), sampled with the first request of each burst; ``burst`` out, sampled with
    it too: the most words that burst may hold (0, or more than the block's
    ``max_burst``: ``max_burst``).
    """
    return wiring.Signature({
        "addr": Out(address_bits), "en": Out(1), "ready": In(1),
        "valid": In(1), "data": In(DATA_BITS), "error": In(1),
        "cache": Out(4), "prot": Out(3), "qos": Out(4), "smid": Out(USER_BITS),
        "burst": Out(range(MAX_BURST + 1)),
    })


def write_client_signature(address_bits: int, max_burst: int) -> wiring.Signature:
    """A write client's port, seen from the client (a DMA channel).

    ``addr``, ``data``, ``en`` out: a write, taken in a cycle with ``ready`` high.
    ``acked`` in: how many of the client's writes, oldest first, were answered this
    cycle (a burst's B), ``error`` in: that B was SLVERR or DECERR. ``cache``, ``prot``,
    ``qos``, ``smid``, ``burst`` out, as for a read client.
    """
    return wiring.Signature({
        "addr": Out(address_bits), "data": Out(DATA_BITS), "en": Out(1), "ready": In(1),
        "acked": In(range(max_burst + 1)), "error": In(1),
        "cache": Out(4), "prot": Out(3), "qos": Out(4), "smid": Out(USER_BITS),
        "burst": Out(range(MAX_BURST + 1)),
    })


def _address_channel_members(channel: str, address_bits: int, id_bits: int) -> dict:
    """AR or AW, seen from the master: ``<channel>id``, ``<channel>addr``, ..."""
    members = {"id": Out(id_bits), "addr": Out(address_bits), "len": Out(8), "size": Out(3),
               "burst": Out(2), "lock": Out(1), "cache": Out(4), "prot": Out(3),
               "qos": Out(4), "user": Out(USER_BITS), "valid": Out(1), "ready": In(1)}
    return {f"{channel}{name}": member for name, member in members.items()}


def axi4_master_signature(address_bits: int, id_bits: int) -> wiring.Signature:
    """AXI4, seen from the master, with Vivado's port names (``m_axi_awid``, ...).

    Parameters
    ----------
    address_bits : int
        Width of ``m_axi_awaddr`` / ``m_axi_araddr`` (byte addresses).
    id_bits : int
        Width of the four ID ports.
    """
    members = {
        **_address_channel_members("aw", address_bits, id_bits),
        "wdata": Out(DATA_BITS), "wstrb": Out(WORD_BYTES), "wlast": Out(1), "wvalid": Out(1),
        "wready": In(1),
        "bid": In(id_bits), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
        **_address_channel_members("ar", address_bits, id_bits),
        "rid": In(id_bits), "rdata": In(DATA_BITS), "rresp": In(2), "rlast": In(1),
        "rvalid": In(1), "rready": Out(1),
    }
    return wiring.Signature({f"m_axi_{name}": member for name, member in members.items()})


def _check_parameters(reads: int, writes: int, max_burst: int, address_bits: int) -> None:
    """Refuse parameters the block cannot be built with (an :class:`AiedmaError`)."""
    for name, value in (("reads", reads), ("writes", writes), ("address_bits", address_bits)):
        if value < 1:
            raise field_error(AiedmaError, name, value, "must be at least 1")
    if not 1 <= max_burst <= MAX_BURST or max_burst & (max_burst - 1):
        raise field_error(AiedmaError, "max_burst", max_burst,
                          f"must be a power of two from 1 to {MAX_BURST} (words a burst)")


class BurstCoalescer(wiring.Component):
    """Gathers one client's requests at consecutive word addresses into bursts.

    Parameters
    ----------
    address_bits : int
        Width of a word address.
    max_burst : int
        Most words a burst holds (a power of two up to 256).

    Attributes
    ----------
    addr, en, cache, prot, qos, smid, burst : In
        A request, as the client's port has it (:func:`read_client_signature`).
    ready : Out(1)
        The request is taken; from registers only: low only while an open burst waits
        for room in the closed queue.
    bursts : Out(stream.Signature(burst_layout(address_bits)))
        Closed bursts, oldest first (up to :data:`CLOSED_DEPTH` wait here).
    """

    def __init__(self, address_bits: int, max_burst: int) -> None:
        self.address_bits = address_bits
        self.max_burst = max_burst
        super().__init__({
            "addr": In(address_bits), "en": In(1), "ready": Out(1),
            "cache": In(4), "prot": In(3), "qos": In(4), "smid": In(USER_BITS),
            "burst": In(range(MAX_BURST + 1)),
            "bursts": Out(stream.Signature(burst_layout(address_bits))),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        layout = burst_layout(self.address_bits)
        m.submodules.closed = closed = fifo.SyncFIFO(width=layout.size, depth=CLOSED_DEPTH)
        is_open = Signal()
        burst = Signal(layout)
        next_addr = Signal(self.address_bits)   # the word that would continue the burst
        # A word address whose low bits are 0 starts a 4 KB page (or wraps the space).
        page_bits = min((PAGE_BYTES // WORD_BYTES - 1).bit_length(), self.address_bits)
        stop, take, extend, close = Signal(), Signal(), Signal(), Signal()
        # The open burst's last count (words - 1): the client's ``burst`` at its first
        # request, within ``max_burst``.
        limit = Signal(8)
        asked = self.burst
        opened_limit = Mux((asked == 0) | (asked > self.max_burst), self.max_burst, asked) - 1
        m.d.comb += [
            stop.eq((burst.count == limit) | (next_addr[:page_bits] == 0)),
            # An open burst is queued in any cycle it is not extended, so it needs room.
            self.ready.eq(~is_open | closed.w_rdy),
            take.eq(self.en & self.ready),
            extend.eq(is_open & take & (self.addr == next_addr) & ~stop),
            close.eq(is_open & ~extend & closed.w_rdy),
            closed.w_en.eq(close),
            closed.w_data.eq(burst),
            self.bursts.valid.eq(closed.r_rdy),
            self.bursts.payload.eq(closed.r_data),
            closed.r_en.eq(self.bursts.ready),
        ]
        with m.If(extend):
            m.d.sync += [burst.count.eq(burst.count + 1), next_addr.eq(next_addr + 1)]
        with m.Elif(take):
            # a request that does not continue the burst opens the next one
            m.d.sync += [is_open.eq(1), burst.address.eq(self.addr), burst.count.eq(0),
                         limit.eq(opened_limit),
                         burst.cache.eq(self.cache), burst.prot.eq(self.prot),
                         burst.qos.eq(self.qos), burst.smid.eq(self.smid),
                         next_addr.eq(self.addr + 1)]
        with m.Elif(close):
            m.d.sync += is_open.eq(0)
        return m


@dataclass(frozen=True)
class _AddressIssue:
    """What an address channel (AR or AW) does this cycle."""

    load: Value       # a closed burst moves into the slot (valid on the channel next cycle)
    grant: Value      # from this client
    head: Value       # that burst (burst_layout)


class AXI4Master(wiring.Component):
    """One AXI4 master for several read and write clients (see the module's docstring).

    A read client keeps its own count of the words it asked for and has not received
    (the block keeps none): to stream a word a cycle it needs ``max_burst`` plus the read
    latency plus 4 of them (the module's docstring), and with fewer its bursts end where
    its count runs out.

    Parameters
    ----------
    reads, writes : int
        Number of read and write clients (at least 1 each). A read client's index is its
        ARID/RID, a write client's its AWID/BID.
    max_burst : int
        Most words a burst holds: a power of two from 1 to 256.
    address_bits : int
        Width of a client's word address; the AXI byte address is two bits wider.

    Attributes
    ----------
    rd<n>_addr, rd<n>_en, rd<n>_ready, rd<n>_valid, rd<n>_data, rd<n>_error, ...
        Read client ``n``: the members of :func:`read_client_signature`, flipped.
    wr<n>_addr, wr<n>_data, wr<n>_en, wr<n>_ready, wr<n>_acked, wr<n>_error, ...
        Write client ``n``: the members of :func:`write_client_signature`, flipped.
    m_axi_* : the AXI4 master port (:func:`axi4_master_signature`); AxSIZE 2, AxBURST INCR,
        AxLOCK 0, WSTRB all ones, RREADY and BREADY always high.

    Raises
    ------
    AiedmaError
        A ``ValueError`` naming the parameter, its value and the rule it breaks.
    """

    def __init__(self, reads: int, writes: int, max_burst: int = 64,
                 address_bits: int = ADDRESS_BITS["shim"]) -> None:
        _check_parameters(reads, writes, max_burst, address_bits)
        self.reads, self.writes = reads, writes
        self.max_burst = max_burst
        self.address_bits = address_bits
        self.id_bits = max(1, (max(reads, writes) - 1).bit_length())
        members = {}
        for n in range(reads):
            members |= {f"rd{n}_{name}": member for name, member
                        in read_client_signature(address_bits).flip().members.items()}
        for n in range(writes):
            members |= {f"wr{n}_{name}": member for name, member
                        in write_client_signature(address_bits, max_burst).flip().members.items()}
        members |= axi4_master_signature(address_bits + SIZE_WORD, self.id_bits).members
        super().__init__(members)

    def _client(self, prefix: str, n: int, name: str) -> Signal:
        return getattr(self, f"{prefix}{n}_{name}")

    def _axi(self, name: str) -> Signal:
        return getattr(self, f"m_axi_{name}")

    def elaborate(self, platform: object) -> Module:
        m = Module()
        self._read_side(m)
        self._write_side(m)
        return m

    def _coalescer(self, m: Module, prefix: str, n: int) -> BurstCoalescer:
        """Client ``n``'s coalescer, its address and attributes connected (``en`` and
        ``ready`` are the caller's)."""
        coalescer = BurstCoalescer(self.address_bits, self.max_burst)
        m.submodules[f"{prefix}{n}_bursts"] = coalescer
        m.d.comb += [getattr(coalescer, name).eq(self._client(prefix, n, name))
                     for name in ("addr", "cache", "prot", "qos", "smid", "burst")]
        return coalescer

    def _address_channel(self, m: Module, channel: str, bursts: list[stream.Interface],
                         eligible: list[Value], gate: Value) -> _AddressIssue:
        """AR or AW: a register slot loaded in round robin from the clients' closed bursts
        (those ``eligible``, while ``gate`` is high), driving the channel's ports."""
        layout = burst_layout(self.address_bits)
        slot = Signal(layout, name=f"{channel}_slot")
        client = Signal(self.id_bits, name=f"{channel}_client")
        full = Signal(name=f"{channel}_full")
        load = Signal(name=f"{channel}_load")
        head = Signal(layout, name=f"{channel}_head")
        requests = [b.valid & ok for b, ok in zip(bursts, eligible, strict=True)]
        grant, any_request = round_robin(m, requests, load, channel)
        handshake = full & self._axi(f"{channel}ready")
        m.d.comb += [
            head.eq(Array(Value.cast(b.payload) for b in bursts)[grant]),
            # the slot reloads in the cycle its burst is taken: one burst a cycle
            load.eq((~full | self._axi(f"{channel}ready")) & any_request & gate),
            *(b.ready.eq(load & (grant == n)) for n, b in enumerate(bursts)),
        ]
        with m.If(load):
            m.d.sync += [slot.eq(head), client.eq(grant), full.eq(1)]
        with m.Elif(handshake):
            m.d.sync += full.eq(0)
        ports = {"valid": full, "id": client, "addr": Cat(Const(0, SIZE_WORD), slot.address),
                 "len": slot.count, "size": SIZE_WORD, "burst": BURST_INCR, "lock": 0,
                 "cache": slot.cache, "prot": slot.prot, "qos": slot.qos, "user": slot.smid}
        m.d.comb += [self._axi(f"{channel}{name}").eq(value) for name, value in ports.items()]
        return _AddressIssue(load, grant, head)

    def _read_side(self, m: Module) -> None:
        """Read clients' coalescers, AR, and R routed back by RID."""
        coalescers = [self._coalescer(m, "rd", n) for n in range(self.reads)]
        for n, coalescer in enumerate(coalescers):
            m.d.comb += [coalescer.en.eq(self._client("rd", n, "en")),
                         self._client("rd", n, "ready").eq(coalescer.ready)]
        self._address_channel(m, "ar", [c.bursts for c in coalescers],
                              [Const(1)] * self.reads, Const(1))
        # One register stage from R to the clients; all share the data register.
        rdata = Signal(DATA_BITS)
        m.d.comb += self._axi("rready").eq(1)
        m.d.sync += rdata.eq(self._axi("rdata"))
        for n in range(self.reads):
            hit = self._axi("rvalid") & (self._axi("rid") == n)
            m.d.sync += [self._client("rd", n, "valid").eq(hit),
                         self._client("rd", n, "error").eq(hit & self._axi("rresp")[1])]
            m.d.comb += self._client("rd", n, "data").eq(rdata)

    def _write_client(self, m: Module, n: int) -> tuple[BurstCoalescer, fifo.SyncFIFOBuffered]:
        """Write client ``n``: its coalescer and the FIFO its words wait in for their AW."""
        coalescer = self._coalescer(m, "wr", n)
        words = fifo.SyncFIFOBuffered(width=DATA_BITS, depth=2 * self.max_burst)
        m.submodules[f"wr{n}_words"] = words
        en, ready = self._client("wr", n, "en"), self._client("wr", n, "ready")
        m.d.comb += [
            coalescer.en.eq(en & words.w_rdy),
            ready.eq(coalescer.ready & words.w_rdy),
            words.w_en.eq(en & ready),
            words.w_data.eq(self._client("wr", n, "data")),
        ]
        return coalescer, words

    def _write_side(self, m: Module) -> None:
        """Write clients' coalescers and FIFOs, AW, W in AW order, B routed back by BID."""
        clients = [self._write_client(m, n) for n in range(self.writes)]
        lengths = [fifo.SyncFIFO(width=8, depth=B_DEPTH) for _ in range(self.writes)]
        for n, queue in enumerate(lengths):
            m.submodules[f"wr{n}_lengths"] = queue
        m.submodules.w_order = w_order = fifo.SyncFIFO(width=8 + self.id_bits,
                                                       depth=W_ORDER_DEPTH)
        aw = self._address_channel(m, "aw", [c.bursts for c, _ in clients],
                                   [queue.w_rdy for queue in lengths], w_order.w_rdy)
        # Both queues take a burst as it is loaded into the AW slot: its entry is seen in
        # the next cycle, the first with AWVALID, so W starts no earlier than its AW (and
        # no B can come before the AW is taken).
        m.d.comb += [
            w_order.w_en.eq(aw.load),
            w_order.w_data.eq(Cat(aw.head.count, aw.grant)),
            *(queue.w_en.eq(aw.load & (aw.grant == n)) for n, queue in enumerate(lengths)),
            *(queue.w_data.eq(aw.head.count) for queue in lengths),
        ]
        self._stream_words(m, w_order, [words for _, words in clients])
        self._route_write_responses(m, lengths)

    def _stream_words(self, m: Module, w_order: fifo.SyncFIFO,
                      fifos: list[fifo.SyncFIFOBuffered]) -> None:
        """W: the words of the oldest AW put on the channel, from its client's FIFO, WLAST
        on its last."""
        count, client = w_order.r_data[:8], w_order.r_data[8:]
        beat = Signal(8)
        sent = Signal()
        m.d.comb += [
            self._axi("wvalid").eq(w_order.r_rdy & Array(f.r_rdy for f in fifos)[client]),
            self._axi("wdata").eq(Array(f.r_data for f in fifos)[client]),
            self._axi("wstrb").eq(2 ** WORD_BYTES - 1),
            self._axi("wlast").eq(beat == count),
            sent.eq(self._axi("wvalid") & self._axi("wready")),
            *(f.r_en.eq(sent & (client == n)) for n, f in enumerate(fifos)),
            w_order.r_en.eq(sent & self._axi("wlast")),
        ]
        with m.If(sent):
            m.d.sync += beat.eq(Mux(self._axi("wlast"), 0, beat + 1))

    def _route_write_responses(self, m: Module, lengths: list[fifo.SyncFIFO]) -> None:
        """B to the client its BID names: ``acked`` the burst's length, ``error`` its BRESP,
        through one register stage."""
        m.d.comb += self._axi("bready").eq(1)
        for n, queue in enumerate(lengths):
            hit = self._axi("bvalid") & (self._axi("bid") == n)
            m.d.comb += queue.r_en.eq(hit)
            m.d.sync += [
                self._client("wr", n, "acked").eq(Mux(hit & queue.r_rdy, queue.r_data + 1, 0)),
                self._client("wr", n, "error").eq(hit & self._axi("bresp")[1]),
            ]
