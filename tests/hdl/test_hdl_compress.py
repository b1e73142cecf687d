"""hdl/compress.py against model/cycle/compression.py on every cycle, random data, random
valid and ready, BDs with and without compression, packet headers passing through."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from aiedma.hdl.compress import Compressor, Decompressor
from aiedma.model.bd.compression import compress_words
from aiedma.model.cycle import compression as model


def sparse_bd(rng, n):
    data = rng.integers(1, 256, 4 * n, dtype=np.uint8)
    data[rng.random(4 * n) < rng.random()] = 0
    return data.view("<u4").astype(np.uint32).tolist()


def compressor_words(rng, bds=6):
    """(data, last, end, header, compress) per word: BDs of random length and mode, some
    with a header in front."""
    words = []
    for _ in range(bds):
        n, mode = int(rng.integers(1, 20)), bool(rng.integers(0, 2))
        if rng.random() < 0.3:
            words.append((0x1234_5678, False, False, True, mode))
        bd = sparse_bd(rng, n)
        words += [(w, k == n - 1 and rng.random() < 0.7, k == n - 1, False, mode)
                  for k, w in enumerate(bd)]
    return words


@pytest.mark.parametrize("seed", range(6))
def test_compressor_matches_the_model_every_cycle(seed):
    rng = np.random.default_rng(seed)
    words = compressor_words(rng)
    dut, ref = Compressor(), model.Compressor()
    sent = []

    async def bench(ctx):
        i = 0
        for _ in range(2000):
            offer = i < len(words) and rng.random() < 0.8
            data, last, end, header, mode = words[i] if offer else words[min(i, len(words) - 1)]
            ready = bool(rng.random() < 0.7)
            ctx.set(dut.i.valid, offer)
            ctx.set(dut.i.payload, {"data": data, "last": last, "end": end, "header": header})
            ctx.set(dut.compress, mode)
            ctx.set(dut.o.ready, ready)
            want = ref.sample(offer, data, last, header, mode, ready)
            got = (ctx.get(dut.i.ready), ctx.get(dut.o.valid))
            assert got == (want.i_ready, want.o_valid), (i, got, want)
            if want.o_valid:
                assert (ctx.get(dut.o.payload.data), ctx.get(dut.o.payload.last)) == (
                    want.o_data, want.o_last), i
            taken = offer and want.i_ready
            out = want.o_valid and ready
            if out:
                sent.append(want.o_data)
            ref.clock((data, last, end) if taken else None, header, mode, out)
            await ctx.tick()
            i += taken
        assert i == len(words) and ref.empty

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    expect, bd = [], []
    for data, _, end, header, mode in words:
        if header:
            expect.append(data)
            continue
        bd.append(data)
        if end:
            expect += compress_words(bd).tolist() if mode else bd
            bd = []
    assert sent == expect


@pytest.mark.parametrize("seed", range(6))
def test_decompressor_matches_the_model_every_cycle(seed):
    rng = np.random.default_rng(100 + seed)
    bds = []
    for _ in range(6):
        n, mode = int(rng.integers(1, 20)), bool(rng.integers(0, 2))
        bds.append((sparse_bd(rng, n), mode, rng.random() < 0.3))
    stream = []
    for bd, mode, header in bds:
        words = compress_words(bd).tolist() if mode else bd
        stream += [(0xABCD, False)] if header else []
        stream += [(w, k == len(words) - 1) for k, w in enumerate(words)]
    dut, ref = Decompressor(16), model.Decompressor()
    written = []

    async def bench(ctx):
        i, b, left, header_due = 0, 0, len(bds[0][0]), bds[0][2]
        new_head = True    # the stage head changed BD at the end of the cycle before
        for _ in range(3000):
            if b == len(bds):
                break
            mode = bds[b][1]
            offer = i < len(stream) and rng.random() < 0.8
            data, last = stream[i] if offer else (0, False)
            ready = bool(rng.random() < 0.7)
            # Not settled after a new head; sometimes not either (it only delays a mask).
            settled = not new_head and rng.random() < 0.9
            for port, value in ((dut.i.valid, offer), (dut.i.payload.data, data),
                                (dut.i.payload.last, last), (dut.raw, header_due),
                                (dut.compress, mode), (dut.remaining, left),
                                (dut.o.ready, ready), (dut.settled, settled)):
                ctx.set(port, value)
            want = ref.sample(offer, data, last, header_due, mode, ready, settled)
            got = (ctx.get(dut.i.ready), ctx.get(dut.o.valid))
            assert got == (want.i_ready, want.o_valid), (i, got, want)
            if want.o_valid:
                assert (ctx.get(dut.o.payload.data), ctx.get(dut.o.payload.last)) == (
                    want.o_data, want.o_last), i
            out = want.o_valid and ready
            took = ref.took(offer, header_due, mode, out, settled)
            ref.clock((data, last) if took else None, header_due, mode, left, out)
            await ctx.tick()
            i += took
            new_head = False
            if out and header_due:
                header_due = False
            elif out:
                written.append(want.o_data)
                left -= 1
                if not left:
                    b, new_head = b + 1, True
                    if b < len(bds):
                        left, header_due = len(bds[b][0]), bds[b][2]
        assert b == len(bds)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert written == [w for bd, _, _ in bds for w in bd]
