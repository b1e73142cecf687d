"""The release queue (hdl/channel/release_queue.py) against a plain queue: under random
pushes and grants as the lock unit and the lock requester make them (a grant only while
a release asks, never two cycles running; no push into a full queue), the port shows the
oldest release, the one behind it in the cycle the head's grant shows, in every cycle."""

from __future__ import annotations

import random
from collections import deque

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.channel.release_queue import ReleaseQueue
from aiedma.model.cycle.contract import RELEASE_QUEUE_DEPTH


def run(kind: str, seed: int, cycles: int = 300) -> dict:
    """Drive ``cycles`` random cycles; the queue's depth reached and the port mismatches."""
    rng = random.Random(seed)
    dut = ReleaseQueue(kind)
    seen = {"mismatches": [], "deepest": 0, "grants": 0}

    async def bench(ctx):
        queue: deque[tuple[int, int]] = deque()
        granted_before = False
        for cycle in range(cycles):
            grant = bool(queue) and not granted_before and rng.random() < 0.6
            if grant:
                queue.popleft()
                seen["grants"] += 1
            push = len(queue) < RELEASE_QUEUE_DEPTH and rng.random() < 0.5
            release = (rng.randrange(1 << dut.id_bits), rng.randrange(-64, 64))
            ctx.set(dut.release.grant, grant)
            ctx.set(dut.push, push)
            ctx.set(dut.lock_id, release[0])
            ctx.set(dut.value, release[1])
            shown = (ctx.get(dut.release.request), ctx.get(dut.release.lock_id),
                     ctx.get(dut.release.value))
            want = (1, *queue[0]) if queue else (0,)
            if shown[:len(want)] != want or ctx.get(dut.pending) != (bool(queue) or grant):
                seen["mismatches"].append((cycle, shown, want))
            await ctx.tick()
            if push:
                queue.append(release)
            seen["deepest"] = max(seen["deepest"], len(queue))
            granted_before = grant

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


@pytest.mark.parametrize("kind", ["tile", "memtile"])
@pytest.mark.parametrize("seed", range(3))
def test_the_port_shows_the_oldest_release_in_every_cycle(kind, seed):
    seen = run(kind, seed)
    assert seen["mismatches"] == []
    # the run filled the queue and emptied it through the port
    assert seen["deepest"] == RELEASE_QUEUE_DEPTH and seen["grants"] > 50
