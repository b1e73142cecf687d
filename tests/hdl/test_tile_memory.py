# amaranth: UnusedElaboratable=no
"""The banked memory inside the core and memory tiles' AXI tops (hdl/tile_memory.py):
clients asking at random, every read answered in its client's order with the word a
plain memory holds at that point, the host never waiting, a word a cycle for a client
alone, a bank meeting two clients serving one a cycle, and bad sizes refused."""

from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.tile_memory import TileMemory, check_memory
from aiedma.model.errors import AiedmaError

WORDS, BANKS = 64, 4


def _run(memory: TileMemory, plan, cycles: int) -> dict:
    """Drive ``memory`` for ``cycles``: ``plan(cycle)`` gives, per reader / writer, the
    request it offers (an address, or ``(address, word)``, or None) and the host's
    access (``("read", address)``, ``("write", address, word)`` or None). A request
    offered and not taken is offered again until taken. Returns what happened, in
    order: each client's requests taken with their cycle, each answer with its cycle
    (reads: the word), the host's reads' words."""
    readers, writers = len(memory.read), len(memory.write)
    seen = {"taken": [[] for _ in range(readers + writers)],
            "answers": [[] for _ in range(readers + writers)], "host": [], "host_writes": []}

    async def bench(ctx):
        pending: list = [None] * (readers + writers)
        host_read = False
        for cycle in range(cycles):
            reads, writes, host = plan(cycle)
            for k, offer in enumerate([*reads, *writes]):
                if pending[k] is None:
                    pending[k] = offer
            for k, port in enumerate(memory.read):
                ctx.set(port.mem_en, pending[k] is not None)
                ctx.set(port.mem_addr, pending[k] or 0)
            for n, port in enumerate(memory.write):
                offer = pending[readers + n]
                ctx.set(port.mem_we, offer is not None)
                ctx.set(port.mem_addr, offer[0] if offer else 0)
                ctx.set(port.mem_data, offer[1] if offer else 0)
            ctx.set(memory.reg_read, bool(host) and host[0] == "read")
            ctx.set(memory.reg_write, bool(host) and host[0] == "write")
            ctx.set(memory.reg_addr, 4 * host[1] if host else 0)
            ctx.set(memory.reg_wdata, host[2] if host and host[0] == "write" else 0)
            ctx.set(memory.reg_wstrb, host[3] if host and host[0] == "write" else 0)
            if host_read:
                seen["host"].append(ctx.get(memory.reg_rdata))
            if host and host[0] == "write" and host[3] == 0xF:
                seen["host_writes"].append((cycle, host[1], host[2]))
            host_read = bool(host) and host[0] == "read"
            for k, port in enumerate(memory.read):
                if ctx.get(port.mem_valid):
                    seen["answers"][k].append((cycle, ctx.get(port.mem_data)))
                if pending[k] is not None and ctx.get(port.mem_ready):
                    seen["taken"][k].append((cycle, pending[k]))
                    pending[k] = None
                assert not ctx.get(port.mem_error)
            for n, port in enumerate(memory.write):
                k = readers + n
                if ctx.get(port.mem_acked):
                    seen["answers"][k].append((cycle, None))
                if pending[k] is not None and ctx.get(port.mem_ready):
                    seen["taken"][k].append((cycle, pending[k]))
                    pending[k] = None
            await ctx.tick()

    sim = Simulator(memory)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_clients_get_their_words_in_order_and_the_host_never_waits(seed):
    """Two readers, two writers and the host at random on few words: every read's word
    is that of the last write to its address served before it (a client's access is
    served the cycle before its answer, the host's in its cycle; a bank serves one
    access a cycle), and each client's answers come one per request, in order."""
    rng = random.Random(seed)
    memory = TileMemory("tile", WORDS, BANKS, readers=2, writers=2)

    def plan(cycle):
        def maybe(make):   # (nothing new in the last cycles: every request answered)
            return make() if cycle < 280 and rng.random() < 0.7 else None
        reads = [maybe(lambda: rng.randrange(WORDS)) for _ in range(2)]
        writes = [maybe(lambda: (rng.randrange(WORDS), rng.getrandbits(32))) for _ in range(2)]
        host = None
        if rng.random() < 0.2:
            host = rng.choice([("read", rng.randrange(WORDS)),
                               ("write", rng.randrange(WORDS), rng.getrandbits(32), 0xF)])
        return reads, writes, host

    seen = _run(memory, plan, 300)
    for k, taken in enumerate(seen["taken"]):
        assert len(seen["answers"][k]) == len(taken)
        assert len(taken) > 50          # the clients got through
    # Answers come in request order, at least two cycles after the request was taken.
    for taken, answers in zip(seen["taken"], seen["answers"], strict=True):
        for (asked, _), (answered, _) in zip(taken, answers, strict=True):
            assert answered >= asked + 2
    writes = list(seen["host_writes"])
    for taken, answers in zip(seen["taken"][2:], seen["answers"][2:], strict=True):
        writes += [(answered - 1, address, word)
                   for (_, (address, word)), (answered, _) in zip(taken, answers, strict=True)]
    checked = 0
    for k in range(2):
        for (_, address), (answered, word) in zip(seen["taken"][k], seen["answers"][k],
                                                      strict=True):
            before = [(served, w) for served, a, w in writes
                      if a == address and served < answered - 1]
            assert word == (max(before)[1] if before else 0)
            checked += 1
    assert checked > 100


def test_a_client_alone_moves_a_word_a_cycle_and_reads_what_the_host_wrote():
    memory = TileMemory("tile", WORDS, BANKS, readers=1, writers=1)
    words = [0x1000 + n for n in range(WORDS)]

    def load(cycle):
        host = ("write", cycle, words[cycle], 0xF) if cycle < WORDS else None
        reads = [cycle - WORDS - 2] if WORDS + 2 <= cycle < 2 * WORDS + 2 else [None]
        return reads, [None], host

    seen = _run(memory, load, 2 * WORDS + 8)
    taken = [cycle for cycle, _ in seen["taken"][0]]
    assert taken == list(range(WORDS + 2, 2 * WORDS + 2))     # never refused
    assert [word for _, word in seen["answers"][0]] == words


def test_two_clients_in_one_bank_take_turns_and_the_host_comes_first():
    """Readers 0 and 1 ask for bank 0 every cycle: the bank serves them by turns; in the
    cycles the host reads bank 0 it serves neither."""
    memory = TileMemory("tile", WORDS, BANKS, readers=2, writers=0)
    host_cycles = {10, 11, 20}

    def plan(cycle):
        host = ("read", 0) if cycle in host_cycles else None
        return [BANKS * (cycle % 4), BANKS * (cycle % 4)], [], host

    seen = _run(memory, plan, 40)
    served = sorted(c + 0 for k in range(2) for c, _ in seen["answers"][k])
    # one answer a cycle from cycle 2 on (the queues fill), none after a host cycle
    for cycle in range(4, 38):
        expect = 0 if cycle - 1 in host_cycles else 1
        assert served.count(cycle) == expect, cycle
    assert len(seen["host"]) == len(host_cycles)


def test_the_host_writes_the_bytes_its_strobes_name():
    memory = TileMemory("tile", WORDS, BANKS, readers=1, writers=0)
    host = {0: ("write", 5, 0x11223344, 0xF), 1: ("write", 5, 0xAABBCCDD, 0b0101),
            2: ("write", 5, 0xFFFFFFFF, 0), 3: ("read", 5)}
    seen = _run(memory, lambda cycle: ([None], [], host.get(cycle)), 6)
    assert seen["host"] == [0x11BB33DD]


@pytest.mark.parametrize("words, banks, field", [
    (100, 4, "memory_words"), (0, 4, "memory_words"), (1 << 19, 4, "memory_words"),
    (64, 3, "memory_banks"), (64, 1, "memory_banks"), (64, 128, "memory_banks"),
    (True, 4, "memory_words")])
def test_a_bad_size_is_refused_naming_the_field(words, banks, field):
    with pytest.raises(AiedmaError, match=field):
        check_memory(words, banks)
