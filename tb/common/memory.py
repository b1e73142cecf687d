"""Simulated BRAM ports for Amaranth simulations of the datapaths.

Each function returns an async *process* (``Simulator.add_process``) that behaves
like a block RAM port clocked by ``sync``, over a NumPy array indexed by the word
address modulo its size (a small memory stands in for a large address space). The
``waiting_*`` ones serve the handshake port of ``hdl/memory_port.py`` as a memory behind
a bus would: random refusals, a latency, answers in request order, bus errors on chosen
requests.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Awaitable, Callable, Collection

import numpy as np
from amaranth.sim import SimulatorContext

from ...hdl.mm2s import MM2SDatapath
from ...hdl.s2mm import S2MMDatapath

__all__ = ["bram_read_port", "bram_write_port", "waiting_read_port", "waiting_write_port"]


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


_ATTRIBUTES = ("mem_burst", "mem_cache", "mem_prot", "mem_qos", "mem_smid")


def _attributes(port: object) -> tuple:
    """The port's bus attributes (``hdl/memory_port.py``), if it has them."""
    return tuple(getattr(port, name) for name in _ATTRIBUTES if hasattr(port, name))


def waiting_read_port(port: object, memory: np.ndarray, *, latency: int = 1,
                      seed: int = 0, refuse: float = 0.0, jitter: int = 0,
                      errors: Collection[int] = (), requests: list | None = None,
                      ) -> Callable[[SimulatorContext], Awaitable[None]]:
    """A handshake read port (``mem_en``/``mem_ready``, ``mem_valid``/``mem_data``).

    ``mem_ready`` is low in a cycle with probability ``refuse``. A request taken at edge
    ``t`` is answered, in request order and at most one a cycle, from cycle ``t +
    latency`` (plus up to ``jitter`` random cycles). Requests whose index (0 first) is
    in ``errors`` are answered with ``mem_error`` high and random data. ``requests``, if
    given, collects ``(address, *attributes)`` of each request taken (its bus
    attributes, ``mem_burst``, ``mem_cache``, ``mem_prot``, ``mem_qos``, ``mem_smid``,
    where the port has them).
    """
    rng = random.Random(seed)
    pending: deque[tuple[int, int, bool]] = deque()   # (due cycle, word, error)

    async def process(ctx: SimulatorContext) -> None:
        cycle = taken = 0
        ctx.set(port.mem_ready, 1)
        async for _, _, en, ready, addr, *attributes in ctx.tick().sample(
                port.mem_en, port.mem_ready, port.mem_addr, *_attributes(port)):
            cycle += 1
            if en and ready and requests is not None:
                requests.append((addr, *attributes))
            if en and ready:
                error = taken in errors
                word = rng.getrandbits(32) if error else int(memory[addr % len(memory)])
                due = max(cycle - 1 + latency + rng.randint(0, jitter),
                          pending[-1][0] if pending else 0)
                pending.append((due, word, error))
                taken += 1
            answer = pending and pending[0][0] <= cycle
            if answer:
                _, word, error = pending.popleft()
            ctx.set(port.mem_valid, bool(answer))
            ctx.set(port.mem_data, word if answer else rng.getrandbits(32))
            ctx.set(port.mem_error, bool(answer) and error)
            ctx.set(port.mem_ready, rng.random() >= refuse)
    return process


def waiting_write_port(port: object, memory: np.ndarray, *, latency: int = 1,
                       seed: int = 0, refuse: float = 0.0, batch: int = 1,
                       errors: Collection[int] = (), requests: list | None = None,
                       ) -> Callable[[SimulatorContext], Awaitable[None]]:
    """A handshake write port (``mem_we``/``mem_ready``, ``mem_acked``).

    A write taken at edge ``t`` lands in ``memory`` then and is acknowledged from cycle
    ``t + latency``, oldest first, up to ``batch`` a cycle (a bus acknowledges a burst
    at once). A cycle that acknowledges a write whose index is in ``errors`` raises
    ``mem_error`` with its acknowledgements. ``requests`` as :func:`waiting_read_port`'s.
    """
    rng = random.Random(seed)
    pending: deque[tuple[int, bool]] = deque()        # (due cycle, error)

    async def process(ctx: SimulatorContext) -> None:
        cycle = taken = 0
        ctx.set(port.mem_ready, 1)
        async for _, _, we, ready, addr, word, *attributes in ctx.tick().sample(
                port.mem_we, port.mem_ready, port.mem_addr, port.mem_data,
                *_attributes(port)):
            cycle += 1
            if we and ready and requests is not None:
                requests.append((addr, *attributes))
            if we and ready:
                memory[addr % len(memory)] = word
                pending.append((cycle - 1 + latency, taken in errors))
                taken += 1
            acked, error = 0, False
            while pending and pending[0][0] <= cycle and acked < batch:
                error |= pending.popleft()[1]
                acked += 1
            ctx.set(port.mem_acked, acked)
            ctx.set(port.mem_error, error)
            ctx.set(port.mem_ready, rng.random() >= refuse)
    return process
