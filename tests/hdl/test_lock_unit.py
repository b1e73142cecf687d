"""The RTL lock unit against the model's lock table, cycle by cycle, with several ports."""

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.lock_unit import LockUnit
from aiedma.model.system.locks import LockError, LockTable


def run(count, ports, cycles, seed):
    """Random acquires, releases and writes on every port; every grant and value compared."""
    rng = random.Random(seed)
    dut = LockUnit(count, ports)
    table = LockTable("model", count)
    log = {"grants": 0, "refusals": 0, "errors": 0, "order_mattered": 0}
    # Few locks, anywhere in the unit (the first, the last, between), so contention
    # and both outcomes are frequent.
    locks = sorted({0, count - 1, rng.randrange(count)})

    async def bench(ctx):
        error = False
        for cycle in range(cycles):
            acquires = [(rng.random() < 0.6, rng.choice(locks),
                         rng.choice([-2, -1, -1, 0, 1, 2])) for _ in range(ports)]
            releases = [(rng.random() < 0.4, rng.choice(locks),
                         rng.choice([-1, 1, 2, 63])) for _ in range(ports)]
            # Frequent small writes keep the locks low, where acquires are refused.
            write = (rng.random() < 0.3, rng.choice(locks), rng.randrange(4))
            for port, (request, lock, value) in zip(dut.acquire, acquires, strict=True):
                ctx.set(port.request, request)
                ctx.set(port.lock_id, lock)
                ctx.set(port.value, value)
            for port, (request, lock, value) in zip(dut.release, releases, strict=True):
                ctx.set(port.request, request)
                ctx.set(port.lock_id, lock)
                ctx.set(port.value, value)
            ctx.set(dut.set_en, write[0])
            ctx.set(dut.set_id, write[1])
            ctx.set(dut.set_value, write[2])
            start = LockTable("start", count)
            for lock in range(count):
                start.set(lock, table[lock])
            for k, (request, lock, value) in enumerate(acquires):
                alone = request and start.can_acquire(lock, value)
                want = request and table.try_acquire(lock, value)
                log["order_mattered"] += alone != want   # an earlier port took it first
                got = bool(ctx.get(dut.acquire[k].grant))
                assert got == want, f"seed {seed} cycle {cycle} port {k}: grant {got}, want {want}"
                log["grants" if want else "refusals"] += request
            for request, lock, value in releases:
                if request:
                    try:
                        table.release(lock, value)
                    except LockError:
                        error = True
                        log["errors"] += 1
            if write[0]:
                table.set(write[1], write[2])
            await ctx.tick()
            assert bool(ctx.get(dut.error)) == error, f"seed {seed} cycle {cycle}: error flag"
            for lock in locks:
                ctx.set(dut.read_id, lock)
                got = ctx.get(dut.read_value)
                assert got == table[lock], f"seed {seed} cycle {cycle}: lock {lock} {got}"

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return log


# The memory tile's unit (64 locks, 12 channels) simulates slowly: fewer cycles.
@pytest.mark.parametrize(("count", "ports", "cycles", "seed"),
                         [(4, 1, 300, 1), (4, 3, 300, 2), (16, 2, 300, 3), (64, 12, 60, 4)])
def test_the_lock_unit_is_the_model_lock_table(count, ports, cycles, seed):
    log = run(count, ports, cycles, seed)
    assert log["grants"] and log["refusals"] and log["errors"], log
    if ports > 1:
        assert log["order_mattered"], "an earlier port's grant refused a later port"
