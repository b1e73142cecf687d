# amaranth: UnusedElaboratable=no
# (test_the_address_width_must_reach_every_register builds a block that refuses)
"""The AXI4-Lite slave alone (hdl/axi_lite.py) on Amaranth's simulator.

A cycle-by-cycle bench: each AXI channel is a queue its master side presents from a
given cycle on and holds until taken; B and R are taken when the cycle's ``bready`` /
``rready`` is high; the register port answers from a dict one cycle after a read, as
the DMA does.
"""

import random
from dataclasses import dataclass, field

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from aiedma.hdl.axi_lite import OKAY, SLVERR, AXILiteSlave, register_decode
from aiedma.model.arch import register_map
from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.arch.register_map import (
    Access,
    RegisterBlock,
    Role,
    register_at,
    register_span,
    registers,
)
from aiedma.model.arch.registers import (
    START_QUEUE_BASE,
    START_QUEUE_STRIDE,
    fot_count_address,
    lock_value_address,
    start_queue_address,
    status_address,
)

LOCK = lock_value_address("tile", 2)
BD = 0x1D000 + 4          # BD 0 word 1 of the core tile
UNMAPPED = 0x1D018        # BD 0 word 6: a core-tile BD has six words


@dataclass
class Run:
    """What one bench run saw."""

    writes: list = field(default_factory=list)     # (cycle, address, data) on the port
    reads: list = field(default_factory=list)      # (cycle, address) on the port
    b: list = field(default_factory=list)          # (cycle, resp)
    r: list = field(default_factory=list)          # (cycle, resp, data)
    taken: dict = field(default_factory=lambda: {"aw": [], "w": [], "ar": []})


def simulate(aw=(), w=(), ar=(), bready=None, rready=None, cycles=40, store=None, dut=None):
    """Run the slave (default: the core tile's); ``aw``/``ar``: (from_cycle, address),
    ``w``: (from_cycle, data, strb); ``bready``/``rready``: function of the cycle (default
    always high)."""
    dut = dut or AXILiteSlave("tile")
    store = dict(store or {})
    run = Run()
    queues = {"aw": list(aw), "w": list(w), "ar": list(ar)}
    bready = bready or (lambda c: True)
    rready = rready or (lambda c: True)

    async def bench(ctx):
        answer = 0
        for cycle in range(cycles):
            for name, queue in queues.items():
                head = queue[0] if queue and queue[0][0] <= cycle else None
                ctx.set(getattr(dut, f"s_axil_{name}valid"), head is not None)
                if head is not None and name == "w":
                    ctx.set(dut.s_axil_wdata, head[1])
                    ctx.set(dut.s_axil_wstrb, head[2])
                elif head is not None:
                    ctx.set(getattr(dut, f"s_axil_{name}addr"), head[1])
            ctx.set(dut.s_axil_bready, bready(cycle))
            ctx.set(dut.s_axil_rready, rready(cycle))
            ctx.set(dut.reg_rdata, answer)
            for name, queue in queues.items():
                if ctx.get(getattr(dut, f"s_axil_{name}valid")) and \
                        ctx.get(getattr(dut, f"s_axil_{name}ready")):
                    run.taken[name].append(cycle)
                    queue.pop(0)
            if ctx.get(dut.s_axil_bvalid) and bready(cycle):
                run.b.append((cycle, ctx.get(dut.s_axil_bresp)))
            if ctx.get(dut.s_axil_rvalid) and rready(cycle):
                run.r.append((cycle, ctx.get(dut.s_axil_rresp), ctx.get(dut.s_axil_rdata)))
            address = ctx.get(dut.reg_addr)
            assert not (ctx.get(dut.reg_write) and ctx.get(dut.reg_read)), cycle
            answer = 0
            if ctx.get(dut.reg_read):
                run.reads.append((cycle, address))
                answer = store.get(address, 0)
            if ctx.get(dut.reg_write):
                data = ctx.get(dut.reg_wdata)
                run.writes.append((cycle, address, data))
                store[address] = data
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return run


@pytest.mark.parametrize(("aw_at", "w_at"), [(0, 5), (5, 0), (2, 2)],
                         ids=["aw-before-w", "w-before-aw", "together"])
def test_a_write_lands_whatever_order_aw_and_w_come_in(aw_at, w_at):
    run = simulate(aw=[(aw_at, LOCK)], w=[(w_at, 0x2A, 0xF)], ar=[(10, LOCK)])
    later = max(aw_at, w_at)
    assert run.writes == [(later + 1, LOCK, 0x2A)]
    assert run.b == [(later + 2, OKAY)]
    assert run.r == [(13, OKAY, 0x2A)]


def test_writes_back_to_back_one_a_cycle_and_reads_one_a_cycle():
    n = 12
    run = simulate(aw=[(0, BD + 0x20 * k) for k in range(n)],
                   w=[(0, k, 0xF) for k in range(n)])
    assert run.taken["aw"] == list(range(n)) and run.taken["w"] == list(range(n))
    assert [c for c, _ in run.b] == list(range(2, n + 2))
    run = simulate(ar=[(0, BD + 0x20 * k) for k in range(n)],
                   store={BD + 0x20 * k: 100 + k for k in range(n)})
    assert run.taken["ar"] == list(range(n))
    assert run.r == [(3 + k, OKAY, 100 + k) for k in range(n)]


def test_bready_low_for_cycles_loses_no_response():
    n = 8
    run = simulate(aw=[(0, BD + 0x20 * k) for k in range(n)],
                   w=[(0, k, 0xF) for k in range(n)],
                   bready=lambda c: c >= 12 or c % 5 == 4)
    assert [a for _, a, _ in run.writes] == [BD + 0x20 * k for k in range(n)]
    assert [resp for _, resp in run.b] == [OKAY] * n
    assert all(c >= 12 or c % 5 == 4 for c, _ in run.b)


def test_rready_low_for_cycles_loses_no_word():
    n = 8
    store = {BD + 0x20 * k: 7 * k + 1 for k in range(n)}
    run = simulate(ar=[(0, BD + 0x20 * k) for k in range(n)], store=store,
                   rready=lambda c: c >= 15 or c % 4 == 3)
    assert [(resp, data) for _, resp, data in run.r] == [(OKAY, 7 * k + 1) for k in range(n)]


def test_a_read_and_a_write_in_the_same_cycle_take_turns_on_the_port():
    n = 6
    run = simulate(aw=[(0, LOCK + 0x10 * k) for k in range(n)],
                   w=[(0, k, 0xF) for k in range(n)],
                   ar=[(0, BD + 0x20 * k) for k in range(n)],
                   store={BD + 0x20 * k: k + 50 for k in range(n)})
    ops = sorted([c for c, _, _ in run.writes] + [c for c, _ in run.reads])
    assert ops == list(range(1, 2 * n + 1))       # one a cycle, none idle
    assert [resp for _, resp in run.b] == [OKAY] * n
    assert [(resp, data) for _, resp, data in run.r] == [(OKAY, k + 50) for k in range(n)]


def test_an_unmapped_address_answers_slverr_and_changes_nothing():
    run = simulate(aw=[(0, UNMAPPED), (0, 0xFFFFC)], w=[(0, 1, 0xF), (0, 2, 0xF)],
                   ar=[(4, UNMAPPED), (4, 0x0)])
    assert run.writes == [] and run.reads == []
    assert [resp for _, resp in run.b] == [SLVERR, SLVERR]
    assert [(resp, data) for _, resp, data in run.r] == [(SLVERR, 0), (SLVERR, 0)]


@pytest.mark.parametrize("strobe", [0x0, 0x1, 0x7, 0xE, 0x8])
def test_a_partial_strobe_answers_slverr_and_changes_nothing(strobe):
    run = simulate(aw=[(0, LOCK)], w=[(0, 0x11, strobe)])
    assert run.writes == [] and [resp for _, resp in run.b] == [SLVERR]


def test_a_memory_slave_maps_every_word_below_its_size_and_no_more():
    """``words=16``: byte addresses 0-63 are the memory's (here with a wider bus, so the
    words past it answer SLVERR); a partial strobe is taken, its bytes on ``reg_wstrb``
    (tests/hdl/test_tile_memory.py stores them)."""
    def memory():
        return AXILiteSlave("tile", 8, words=16)
    run = simulate(aw=[(0, 0), (0, 60), (0, 64), (0, 8)],
                   w=[(0, 1, 0xF), (0, 2, 0xF), (0, 3, 0xF), (0, 4, 0x3)],
                   ar=[(8, 60), (8, 252)], dut=memory())
    assert [(a, d) for _, a, d in run.writes] == [(0, 1), (60, 2), (8, 4)]
    assert [resp for _, resp in run.b] == [OKAY, OKAY, SLVERR, OKAY]
    assert [(resp, data) for _, resp, data in run.r] == [(OKAY, 2), (SLVERR, 0)]
    with pytest.raises(ValueError, match=r"^address_bits=5: a memory of 16 words need 6 "):
        AXILiteSlave("tile", 5, words=16)
    with pytest.raises(ValueError, match=r"^words=524288: a memory behind the register port "):
        AXILiteSlave("tile", 24, words=1 << 19)


def test_write_only_reads_0_and_read_only_takes_a_write_that_changes_nothing():
    queue, pop = start_queue_address("tile", "mm2s", 0), fot_count_address("tile", 0)
    run = simulate(aw=[(0, pop)], w=[(0, 5, 0xF)], ar=[(0, queue)],
                   store={queue: 0xBAD, pop: 9})
    assert run.writes == [] and run.reads == []
    assert [resp for _, resp in run.b] == [OKAY]
    assert [(resp, data) for _, resp, data in run.r] == [(OKAY, 0)]


def test_a_status_write_reaches_the_register_port_for_its_write_1_to_clear_bit():
    status = status_address("tile", "mm2s", 0)
    run = simulate(aw=[(0, status)], w=[(0, 1 << 18, 0xF)])
    assert [(address, data) for _, address, data in run.writes] == [(status, 1 << 18)]
    assert [resp for _, resp in run.b] == [OKAY]


def test_the_low_address_bits_are_dropped():
    run = simulate(aw=[(0, LOCK + 3)], w=[(0, 9, 0xF)], ar=[(4, LOCK + 1)])
    assert run.writes == [(1, LOCK, 9)] and run.r == [(7, OKAY, 9)]


def test_the_address_width_must_reach_every_register():
    with pytest.raises(ValueError, match="need 20 address bits"):
        AXILiteSlave("memtile", address_bits=16)


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_the_decode_is_the_model_map(kind):
    """Every register, its neighbours and random addresses: the generated decode says
    what ``register_at`` says."""
    bits = 20
    address = Signal(bits)
    decode = register_decode(kind, address)
    m = Module()
    m.d.comb += [Signal(name="mapped").eq(decode.mapped)]   # (a module to simulate)
    rng = random.Random(kind)
    candidates = {a for r in registers(kind) for a in (r.address, r.address + 4,
                                                       r.address - 4, r.address + 2)}
    candidates |= {rng.randrange(1 << bits) for _ in range(300)}
    candidates |= {rng.randrange(1 << register_span(kind)) & ~3 for _ in range(300)}
    checked = []
    sim = Simulator(m)

    async def bench(ctx):
        for a in sorted(c for c in candidates if 0 <= c < 1 << bits):
            ctx.set(address, a)
            found = register_at(kind, a)
            got = (ctx.get(decode.mapped), ctx.get(decode.readable), ctx.get(decode.writable))
            want = (found is not None, found is not None and found.readable,
                    found is not None and found.writable)
            assert got == want, (hex(a), got, want)
            checked.append(a)

    sim.add_testbench(bench)
    sim.run()
    assert {r.address for r in registers(kind)} <= set(checked)     # the bench ran them all
    assert len(checked) > len(registers(kind)) + 300


def test_one_role_more_is_one_entry_and_the_decode_follows(monkeypatch):
    """A channel control register (4 bytes before each start queue) as one more entry of
    the model's ROLES: the model finds it and the generated decode maps it."""
    def control(kind, name):
        return [RegisterBlock(name, START_QUEUE_BASE[kind, d] - 4, DMA_KINDS[kind].channels,
                              START_QUEUE_STRIDE, direction=d) for d in ("mm2s", "s2mm")]

    roles = (*register_map.ROLES, Role("control", Access(readable=True, writable=True), control))
    monkeypatch.setattr(register_map, "ROLES", roles)
    address = start_queue_address("tile", "s2mm", 1) - 4
    assert str(register_at("tile", address)) == "control s2mm1 at 0x1de08"
    word = Signal(20)
    decode = register_decode("tile", word)
    sim = Simulator(Module())

    async def bench(ctx):
        ctx.set(word, address)
        assert (ctx.get(decode.mapped), ctx.get(decode.readable)) == (1, 1)
        for other in range(0x1DDF0, 0x1DE40, 4):       # controls, queues and the gaps
            ctx.set(word, other)
            assert ctx.get(decode.mapped) == (register_at("tile", other) is not None)

    sim.add_testbench(bench)
    sim.run()
