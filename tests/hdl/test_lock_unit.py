"""The RTL lock unit against the model's lock table, cycle by cycle, with several ports."""

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.lock_unit import LockUnit
from aiedma.model.system.locks import LOCK_VALUE_MAX, LockTable


def releases_of_a_cycle(table, releases):
    """Apply one cycle's releases to the model ``table``; True if one broke the range.

    Without an error this is the model's own rule (``LockTable.release`` in port order).
    With one, the model raises and stops; the unit's documented rule takes over: each
    release sees the lock plus the earlier releases of the cycle to it (applied or not),
    and a lock takes its last release whose result stays in 0..63.
    """
    running, final, error = {}, {}, False
    for request, lock, value in releases:
        if request:
            running[lock] = running.get(lock, table[lock]) + value
            if 0 <= running[lock] <= LOCK_VALUE_MAX:
                final[lock] = running[lock]
            else:
                error = True
    if error:
        for lock, value in final.items():
            table.set(lock, value)
    else:
        for request, lock, value in releases:
            if request:
                table.release(lock, value)
    return error


def run(count, ports, cycles, seed):
    """Random acquires, releases and writes on every port; every grant and value compared."""
    rng = random.Random(seed)
    dut = LockUnit(count, ports)
    table = LockTable("model", count)
    log = {"grants": 0, "refusals": 0, "errors": 0, "beaten": 0, "passed_over": 0}
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
            refused = set()     # locks an earlier port asked for and could not have
            for k, (request, lock, value) in enumerate(acquires):
                holds = request and start.can_acquire(lock, value)
                want = request and table.try_acquire(lock, value, cycle=cycle)
                log["beaten"] += holds and not want       # an earlier port won the lock
                log["passed_over"] += want and lock in refused
                if request and not holds:
                    refused.add(lock)
                got = bool(ctx.get(dut.acquire[k].grant))
                assert got == want, f"seed {seed} cycle {cycle} port {k}: grant {got}, want {want}"
                log["grants" if want else "refusals"] += request
            if releases_of_a_cycle(table, releases):
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
        # One acquire per lock per cycle, and a port whose acquire cannot hold does not
        # keep a later one from the lock.
        assert log["beaten"] and log["passed_over"], log
