# amaranth: UnusedElaboratable=no
"""The RTL BD table: BD words written at their register addresses come back bit-exact, a fetch
decodes every field to the model's actual value, and iteration_current is written back."""

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.bd_table import BDTable, SharedBDTable
from aiedma.model import BufferDescriptor
from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.bd.fields import BD_COUNT, FIELD_INDEX, FIELDS
from aiedma.model.cycle.contract import BD_FETCH_LATENCY
from aiedma.tb.common.stimulus import random_bd

OTHER = {"lock_acq_enable", "lock_acq_id", "lock_acq_value", "lock_rel_id", "lock_rel_value",
         "enable_packet", "packet_id", "packet_type", "tlast_suppress", "use_next_bd",
         "next_bd", "out_of_order_bd_id", "compression_enable", "burst_length", "axq_os",
         "axcache", "axqos", "secure_access"}


LATENCIES = [BD_FETCH_LATENCY, BD_FETCH_LATENCY + 1]
"""The contract's fetch latency, and one more: the table is built for either (the next
contract's block RAM output register)."""

def full_random_bd(kind, rng, bd_id):
    """A legal BD with every field in play, not only address generation."""
    bd = random_bd(kind, rng)
    fields = FIELD_INDEX[kind]
    extra = {}
    for name in OTHER & set(fields):
        f = fields[name]
        extra[name] = rng.randint(f.minimum, f.maximum) if name != "burst_length" else \
            rng.choice([64, 128, 256])
    if "next_bd" in extra:
        half = DMA_KINDS[kind].bd_half(bd_id) if kind == "memtile" else range(BD_COUNT[kind])
        extra["next_bd"] = rng.choice(list(half))
    extra["lock_acq_value"] = rng.randint(-63, 63)
    if extra.get("enable_packet") and not bd.buffer_length:
        extra["enable_packet"] = 0
    return bd.replace(**extra)


async def write_bds(ctx, dut, kind, bds):
    """Write each BD's register words through the table's register port, one a cycle."""
    base = DMA_KINDS[kind].bd_register_base
    for n, bd in bds.items():
        for w, word in enumerate(bd.encode()):
            ctx.set(dut.reg_addr, base + 0x20 * n + 4 * w)
            ctx.set(dut.reg_wdata, word)
            ctx.set(dut.reg_write, 1)
            await ctx.tick()
    ctx.set(dut.reg_write, 0)


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
@pytest.mark.parametrize("latency", LATENCIES)
def test_the_bd_table_is_the_register_image_and_decodes_every_field(latency, kind):
    rng = random.Random(kind)
    count = BD_COUNT[kind]
    ids = rng.sample(range(count), min(count, 10))
    table = {n: full_random_bd(kind, rng, n) for n in ids}
    dut = BDTable(kind, latency)
    base = DMA_KINDS[kind].bd_register_base

    async def bench(ctx):
        await write_bds(ctx, dut, kind, table)
        # Register reads give the words back.
        for n, bd in table.items():
            for w, word in enumerate(bd.encode()):
                ctx.set(dut.reg_addr, base + 0x20 * n + 4 * w)
                ctx.set(dut.reg_read, 1)
                await ctx.tick()
                ctx.set(dut.reg_read, 0)
                assert ctx.get(dut.reg_rdata) == word, (n, w)
        # A fetch decodes every field latency cycles later; fetching one BD
        # every cycle sees its write-back.
        for n, bd in table.items():
            expected = [bd, bd.next_iteration(), bd.next_iteration().next_iteration()]
            ctx.set(dut.fetch_id, n)
            for k in range(len(expected) + latency - 1):
                ctx.set(dut.fetch_en, k < len(expected))
                await ctx.tick()
                if k >= latency - 1:
                    want = expected[k - latency + 1].fields()
                    got = {f.name: ctx.get(getattr(dut.bd, f.name)) for f in FIELDS[kind]}
                    assert got == want, (n, {k: (v, want[k]) for k, v in got.items()
                                             if v != want[k]})
                    assert ctx.get(dut.bd_id) == n
            ctx.set(dut.fetch_en, 0)
            await ctx.tick()   # the last write-back lands
            table[n] = expected[-1].next_iteration()
        for n, bd in table.items():
            w = FIELD_INDEX[kind]["iteration_current"].slices[0].word
            ctx.set(dut.reg_addr, base + 0x20 * n + 4 * w)
            ctx.set(dut.reg_read, 1)
            await ctx.tick()
            assert ctx.get(dut.reg_rdata) == bd.encode()[w], "written back into the register"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert any(bd.iteration_wrap > 1 for bd in table.values()), "iteration was in play"


def chained(kind, next_bd, use=1):
    """A BD chained to ``next_bd`` as the table stores it (any 6-bit value)."""
    return BufferDescriptor(kind, valid_bd=1, use_next_bd=use).stored_with(next_bd=next_bd)


@pytest.mark.parametrize(("kind", "bd_id", "next_bd", "use", "leaves"), [
    ("memtile", 3, 23, 1, 0), ("memtile", 3, 24, 1, 1), ("memtile", 3, 24, 0, 0),
    ("memtile", 30, 24, 1, 0), ("memtile", 30, 47, 1, 0), ("memtile", 30, 0, 1, 1),
    ("memtile", 10, 50, 1, 1), ("memtile", 40, 63, 1, 1),
    ("tile", 3, 15, 1, 0), ("shim", 15, 0, 1, 0),
])
@pytest.mark.parametrize("latency", LATENCIES)
def test_chain_leaves_says_when_a_chain_leaves_its_half_of_the_table(latency, kind, bd_id, next_bd,
                                                                     use, leaves):
    """With the fetched BD, ``chain_leaves`` shows whether its chain names a BD outside
    its half of the memory tile's table (or past BD 47), from a register; a core tile's
    or shim's chain never leaves."""
    dut = BDTable(kind, latency)

    async def bench(ctx):
        await write_bds(ctx, dut, kind, {bd_id: chained(kind, next_bd, use)})
        ctx.set(dut.fetch_id, bd_id)
        ctx.set(dut.fetch_en, 1)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        for _ in range(latency - 1):
            assert ctx.get(dut.chain_leaves) == 0      # (no BD shown yet)
            await ctx.tick()
        assert (ctx.get(dut.bd.next_bd), ctx.get(dut.chain_leaves)) == (next_bd, leaves)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_a_write_outside_the_bd_region_changes_nothing(kind):
    """Just below the region, just past its last BD, inside the power-of-two window the
    decode looks at but past the last BD, and the region's low bits under other high
    bits: none of them writes a BD."""
    dut = BDTable(kind)
    base, count = DMA_KINDS[kind].bd_register_base, BD_COUNT[kind]
    end = base + 0x20 * count
    window = 1 << (0x20 * count - 1).bit_length()
    outside = {base - 4, end, end + 0x1C, base + window, base ^ (window << 1),
               base ^ (window << 3)}
    if end < base + window:
        outside.add(base + window - 4)

    async def bench(ctx):
        for address in sorted(outside):
            ctx.set(dut.reg_addr, address)
            ctx.set(dut.reg_wdata, 0xFFFF_FFFF)
            ctx.set(dut.reg_write, 1)
            await ctx.tick()
        ctx.set(dut.reg_write, 0)
        for n in range(count):
            ctx.set(dut.fetch_id, n)
            ctx.set(dut.fetch_en, 1)
            for _ in range(BD_FETCH_LATENCY):
                await ctx.tick()
            assert ctx.get(dut.bd.buffer_length) == 0 and ctx.get(dut.bd.valid_bd) == 0, n

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert BufferDescriptor(kind).buffer_length == 0


@pytest.mark.parametrize("latency", LATENCIES)
def test_a_fetch_shows_a_word_written_in_its_cycle_and_only_a_fetch_advances_the_iteration(latency):
    """The fetch's read port is transparent: it must show a word written in the same
    cycle, and an address presented without ``fetch_en`` must not count as a fetch."""
    kind, base = "tile", DMA_KINDS["tile"].bd_register_base
    dut = BDTable(kind, latency)
    old = BufferDescriptor(kind, valid_bd=1, buffer_length=5, iteration_wrap=4)
    new = old.replace(buffer_length=9)

    async def bench(ctx):
        await write_bds(ctx, dut, kind, {3: old})
        ctx.set(dut.fetch_id, 3)          # read, not fetched, for three cycles
        for _ in range(3):
            await ctx.tick()
        ctx.set(dut.reg_addr, base + 0x20 * 3)
        ctx.set(dut.reg_wdata, new.encode()[0])
        ctx.set(dut.reg_write, 1)
        ctx.set(dut.fetch_en, 1)          # fetched in the cycle its word 0 is written
        await ctx.tick()
        ctx.set(dut.reg_write, 0)
        ctx.set(dut.fetch_en, 0)
        for _ in range(latency - 1):
            await ctx.tick()
        assert ctx.get(dut.bd.buffer_length) == 9, "the written word, not the old one"
        assert ctx.get(dut.bd.iteration_current) == 0, "reads without fetch_en advanced it"
        ctx.set(dut.fetch_en, 1)
        for _ in range(latency):
            await ctx.tick()
        assert ctx.get(dut.bd.iteration_current) == 1

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize(("ports", "seed"), [(4, 1), (12, 2)])
def test_the_shared_table_serves_one_fetch_a_cycle_in_round_robin(ports, seed):
    """Random requests on every port: the grant is the first requester after the port
    served last (the model DMA's rule), and every port sees the granted fetch's chain
    next cycle and its BD BD_FETCH_LATENCY cycles later, iteration_current advanced by
    each fetch of the same BD."""
    rng = random.Random(seed)
    kind = "tile"
    dut = SharedBDTable(kind, ports)
    bds = {n: BufferDescriptor(kind, valid_bd=1, buffer_length=n + 1, iteration_wrap=3,
                               use_next_bd=n % 2, next_bd=3 - n)
           for n in range(4)}
    served = [0] * ports

    async def bench(ctx):
        await write_bds(ctx, dut, kind, bds)
        last, shown = ports - 1, [None] * BD_FETCH_LATENCY
        iterations = dict.fromkeys(bds, 0)
        for cycle in range(200):
            asks = {p: rng.randrange(4) for p in range(ports) if rng.random() < 0.4}
            for p, port in enumerate(dut.fetch):
                ctx.set(port.en, p in asks)
                ctx.set(port.id, asks.get(p, 0))
            if shown[-1] is not None:
                n, iteration = shown[-1]
                for port in dut.fetch:
                    assert ctx.get(port.bd.buffer_length) == n + 1, f"cycle {cycle}"
                    assert ctx.get(port.bd.next_bd) == 3 - n, f"cycle {cycle}"
                    assert ctx.get(port.bd.iteration_current) == iteration, f"cycle {cycle}"
            want = min(asks, key=lambda p: (p - last - 1) % ports) if asks else None
            grants = [p for p, port in enumerate(dut.fetch) if ctx.get(port.grant)]
            assert grants == ([] if want is None else [want]), f"cycle {cycle}: {asks}"
            fetched = None
            if want is not None:
                last, served[want] = want, served[want] + 1
                n = asks[want]
                fetched = (n, iterations[n])
                iterations[n] = (iterations[n] + 1) % 3
            shown = [fetched, *shown[:-1]]
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert min(served) > 0, served


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
@pytest.mark.filterwarnings("ignore::aiedma.model.errors.UndocumentedBehaviourWarning")
@pytest.mark.parametrize("latency", LATENCIES)
def test_iteration_current_past_its_wrap_restarts_at_0_as_in_the_model(latency, kind):
    """mlir-aie writes ``iteration_current`` 42 with a wrap of 29: the first fetch shows 42
    (its offset is 42 steps), the next ones 0 and 1, as ``next_iteration`` gives."""
    dut = BDTable(kind, latency)
    base = DMA_KINDS[kind].bd_register_base
    bd = BufferDescriptor(kind, valid_bd=1, buffer_length=2, iteration_wrap=29,
                          iteration_current=42, iteration_stepsize=3)
    expected = [bd, bd.next_iteration(), bd.next_iteration().next_iteration()]
    seen = []

    async def bench(ctx):
        await write_bds(ctx, dut, kind, {5: bd})
        ctx.set(dut.fetch_id, 5)
        for k in range(len(expected) + latency - 1):
            ctx.set(dut.fetch_en, k < len(expected))
            await ctx.tick()
            if k >= latency - 1:
                seen.append(ctx.get(dut.bd.iteration_current))
        ctx.set(dut.fetch_en, 0)
        await ctx.tick()
        w = FIELD_INDEX[kind]["iteration_current"].slices[0].word
        ctx.set(dut.reg_addr, base + 0x20 * 5 + 4 * w)
        ctx.set(dut.reg_read, 1)
        await ctx.tick()
        seen.append(ctx.get(dut.reg_rdata))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    after = expected[-1].next_iteration()
    assert seen[:3] == [b.iteration_current for b in expected] == [42, 0, 1]
    assert seen[3] == after.encode()[FIELD_INDEX[kind]["iteration_current"].slices[0].word]


@pytest.mark.parametrize("written", [6, 5])
@pytest.mark.parametrize("latency", LATENCIES)
def test_a_register_write_in_the_cycle_of_a_write_back(latency, written):
    """The register port and the write-back each write ``iteration_current`` in the same
    cycle: of two BDs, both land (the table has a write port for each); of the same BD,
    the write-back wins (``BDTable._iteration``'s decision)."""
    kind, base = "memtile", DMA_KINDS["memtile"].bd_register_base
    dut = BDTable(kind, latency)
    bds = {n: BufferDescriptor(kind, valid_bd=1, buffer_length=2, iteration_wrap=4,
                               iteration_current=n - 4) for n in (5, 6)}
    w = FIELD_INDEX[kind]["iteration_current"].slices[0].word
    rewritten = bds[written].replace(iteration_current=1)
    seen = {}

    async def bench(ctx):
        await write_bds(ctx, dut, kind, bds)
        ctx.set(dut.fetch_id, 6)          # BD 6 written back once before: 2 -> 3
        ctx.set(dut.fetch_en, 1)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        for _ in range(latency):
            await ctx.tick()
        ctx.set(dut.fetch_id, 5)
        ctx.set(dut.fetch_en, 1)
        await ctx.tick()
        ctx.set(dut.fetch_en, 0)
        await ctx.tick()                  # the write-back of BD 5 lands in the next cycle
        ctx.set(dut.reg_addr, base + 0x20 * written + 4 * w)
        ctx.set(dut.reg_wdata, rewritten.encode()[w])
        ctx.set(dut.reg_write, 1)
        await ctx.tick()
        ctx.set(dut.reg_write, 0)
        for n in bds:
            ctx.set(dut.fetch_id, n)
            ctx.set(dut.fetch_en, 1)
            await ctx.tick()
            ctx.set(dut.fetch_en, 0)
            for _ in range(latency - 1):
                await ctx.tick()
            seen[n] = ctx.get(dut.bd.iteration_current)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen == {5: 2, 6: 1 if written == 6 else 3}


def test_a_latency_below_two_is_refused():
    with pytest.raises(ValueError, match="latency=1: a BD table's fetch is a RAM read"):
        BDTable("tile", latency=1)
