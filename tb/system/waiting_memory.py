"""A whole RTL DMA on handshake memory ports, run on Amaranth against a waiting memory.

:func:`run_on_waiting_memory` runs a program whose outcome does not depend on timing
(:func:`~.stream_programs.random_stream_program`) on :class:`~aiedma.hdl.dma.DMA` built
with ``outstanding``: every channel's memory port is served by
:func:`~aiedma.tb.common.memory.waiting_read_port` / ``waiting_write_port`` over one
memory (refusals, a latency, jitter), the MM2S streams are taken under random
backpressure and the S2MM streams fed with random idle cycles. What it returns has the
shape :func:`~aiedma.tb.regress.axi_dma_runner.compare_run` compares with the model's
run (words, memory, tokens, outcome registers, error cycles); the cycles are not the
model's, as the memory does not answer as the fixed port would.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from amaranth.sim import Simulator

from ...hdl.dma import DMA
from ...model.arch.kinds import DMA_KINDS
from ..common.memory import waiting_read_port, waiting_write_port
from ..common.stimulus import random_pattern
from ..common.streams import stream_send

__all__ = ["run_on_waiting_memory"]

_IDLE_CYCLES = 8        # busy low this long after every input was sent: the run is over


def run_on_waiting_memory(program: Any, registers: list[int], *, outstanding: int = 16,
                          latency: int = 1, refuse: float = 0.0, jitter: int = 0,
                          stall: float = 0.0, seed: int = 0, bound: int = 20000,
                          read_errors: dict[int, set[int]] | None = None,
                          allowed: tuple[int, int] | None = None) -> dict:
    """Run ``program`` (register writes with ``pause`` high, then the streams) and read
    ``registers`` after it.

    Parameters
    ----------
    program : WritesProgram
    registers : list of int
        Register addresses read once the run is over, in order.
    outstanding, allowed :
        The DMA's (:class:`~aiedma.hdl.dma.DMA`).
    latency, refuse, jitter :
        The memory's (:func:`~aiedma.tb.common.memory.waiting_read_port`).
    stall : float
        Chance an MM2S stream refuses a word in a cycle, and an S2MM source idles.
    read_errors : dict, optional
        MM2S channel -> indices of its reads answered with a bus error.

    Returns
    -------
    dict
        ``outputs`` (MM2S name -> ``[data, last]`` words), ``memory``, ``tokens`` (name
        -> controller IDs), ``registers`` (``(address, 0, word)``), ``error_cycles``,
        ``length`` (cycles from ``pause`` low to the end), ``hang``, and ``requests``
        (channel name -> ``(address, *bus attributes)`` of each request taken).
    """
    kind = program.kind
    dma = DMA(kind, outstanding=outstanding, allowed=allowed)
    channels = DMA_KINDS[kind].channels
    memory = np.array(program.memory, dtype=np.uint64)
    rng = random.Random(seed)
    read_errors = read_errors or {}
    got: dict[str, Any] = {"outputs": {}, "tokens": {}, "error_cycles": 0,
                           "requests": {f"{d}{n}": [] for d in ("mm2s", "s2mm")
                                        for n in range(channels)}}
    state = {"fed": 0}
    feeds = program.inputs

    async def program_registers(ctx):
        ctx.set(dma.pause, 1)
        for address, word in program.writes:
            ctx.set(dma.reg_addr, address)
            ctx.set(dma.reg_wdata, word)
            ctx.set(dma.reg_write, 1)
            await ctx.tick()
        ctx.set(dma.reg_write, 0)
        ctx.set(dma.pause, 0)
        idle = cycles = 0
        while idle < _IDLE_CYCLES and cycles < bound:
            await ctx.tick()
            cycles += 1
            got["error_cycles"] += ctx.get(dma.error)
            sent = state["fed"] == len(feeds)
            idle = idle + 1 if sent and not ctx.get(dma.busy) else 0
        got["length"], got["hang"] = cycles, cycles >= bound
        words = []
        for address in registers:
            ctx.set(dma.reg_addr, address)
            ctx.set(dma.reg_read, 1)
            await ctx.tick()
            ctx.set(dma.reg_read, 0)
            words.append((address, 0, ctx.get(dma.reg_rdata)))
        got["registers"] = words

    def source(name: str, port: Any):
        offer = random_pattern(rng, 50 * len(feeds[name]) + 100, stall)

        async def process(ctx):
            await ctx.tick().until(dma.pause == 0)
            await stream_send(ctx, port, [{"data": b.data, "last": int(b.last)}
                                          for b in feeds[name]], offer=offer, timeout=bound)
            state["fed"] += 1
        return process

    def sink(name: str, port: Any):
        ready = random_pattern(rng, bound, stall)

        async def process(ctx):
            words, cycle = [], 0
            async for _, _, valid, take, data, last in ctx.tick().sample(
                    port.valid, port.ready, port.payload.data, port.payload.last):
                if valid and take:
                    words.append([data, last])
                ctx.set(port.ready, ready[cycle] if cycle < len(ready) else 1)
                cycle += 1
                got["outputs"][name] = words
        return process

    def tokens(name: str, outside: Any):
        async def process(ctx):
            seen = got["tokens"].setdefault(name, [])
            async for _, _, token, controller in ctx.tick().sample(outside.token,
                                                                    outside.token_controller):
                if token:
                    seen.append(controller)
        return process

    sim = Simulator(dma)
    sim.add_clock(1e-6)
    sim.add_testbench(program_registers)
    for n in range(channels):
        mm2s, s2mm = dma.mm2s[n], dma.s2mm[n]
        sim.add_process(waiting_read_port(mm2s, memory, latency=latency, refuse=refuse,
                                          jitter=jitter, seed=seed + n,
                                          errors=read_errors.get(n, ()),
                                          requests=got["requests"][f"mm2s{n}"]))
        sim.add_process(waiting_write_port(s2mm, memory, latency=latency, refuse=refuse,
                                           batch=4, seed=seed + 10 + n,
                                           requests=got["requests"][f"s2mm{n}"]))
        sim.add_process(sink(f"mm2s{n}", mm2s.o))
        sim.add_process(tokens(f"mm2s{n}", mm2s))
        sim.add_process(tokens(f"s2mm{n}", s2mm))
        if f"s2mm{n}" in feeds:
            sim.add_testbench(source(f"s2mm{n}", s2mm.i))
    sim.run()
    got["memory"] = memory.astype(np.int64)
    return got
