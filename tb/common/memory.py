"""Simulated BRAM ports for Amaranth simulations of the datapaths.

Each function returns an async *process* (``Simulator.add_process``) that behaves
like a block RAM port clocked by ``sync``, over a NumPy array indexed by the word
address modulo its size (a small memory stands in for a large address space).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import numpy as np
from amaranth.sim import SimulatorContext

from ...hdl.mm2s import MM2SDatapath
from ...hdl.s2mm import S2MMDatapath

__all__ = ["bram_read_port", "bram_write_port"]


def bram_read_port(dut: MM2SDatapath, memory: np.ndarray, *,
                   seed: int = 0) -> Callable[[SimulatorContext], Awaitable[None]]:
    """A read port with one cycle of latency: ``mem_en`` high at edge ``t`` puts
    ``memory[mem_addr]`` on ``mem_data`` for cycle ``t + 1``.

    In a cycle after ``mem_en`` was low, ``mem_data`` carries random bits, so a
    datapath that uses a word outside its one valid cycle fails.
    """
    rng = random.Random(seed)

    async def process(ctx: SimulatorContext) -> None:
        async for _, _, en, addr in ctx.tick().sample(dut.mem_en, dut.mem_addr):
            word = int(memory[addr % len(memory)]) if en else rng.getrandbits(32)
            ctx.set(dut.mem_data, word)
    return process


def bram_write_port(dut: S2MMDatapath, memory: np.ndarray,
                    writes: list[tuple[int, int, int]] | None = None,
                    ) -> Callable[[SimulatorContext], Awaitable[None]]:
    """A write port: ``mem_we`` high at edge ``t`` stores ``mem_data`` at ``mem_addr``.

    ``memory`` is updated in place; ``writes``, if given, collects ``(edge, address,
    word)`` of every write.
    """
    async def process(ctx: SimulatorContext) -> None:
        edge = 0
        async for _, _, we, addr, word in ctx.tick().sample(dut.mem_we, dut.mem_addr,
                                                             dut.mem_data):
            if we:
                memory[addr % len(memory)] = word
                if writes is not None:
                    writes.append((edge, addr, word))
            edge += 1
    return process
