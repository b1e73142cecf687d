"""The RTL lock unit against the model's lock table, cycle by cycle, with several ports."""

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.lock_unit import LockUnit
from aiedma.model.system.locks import LockError, LockTable


def release_of_a_cycle(table, releases):
    """Apply the cycle's one release (the first port asking whose grant does not show) to
    the model ``table``.

    Returns the granted port (None when no port asks) and whether the release broke
    the range: the model raises there and the lock keeps its value, as the unit does
    (it sets its error flag).
    """
    for k, (request, lock, value) in enumerate(releases):
        if request:
            try:
                table.release(lock, value)
            except LockError:
                return k, True
            return k, False
    return None, False


def run(count, ports, cycles, seed):
    """Random acquires, releases and writes on every port; every grant and value compared.

    A grant is the unit's register: decided in one cycle, it shows in the next, and in
    that cycle the acquire port's request is not looked at (a release port's is: the
    channel asks with its next release then)."""
    rng = random.Random(seed)
    dut = LockUnit(count, ports)
    table = LockTable("model", count)
    log = {"grants": 0, "refusals": 0, "errors": 0, "beaten": 0, "passed_over": 0,
           "release_waits": 0}
    # Few locks, anywhere in the unit (the first, the last, between), so contention
    # and both outcomes are frequent.
    locks = sorted({0, count - 1, rng.randrange(count)})

    async def bench(ctx):
        error = False
        shown = [False] * ports           # the acquire grants decided last cycle
        shown_release = [False] * ports
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
            for k in range(ports):
                got = bool(ctx.get(dut.acquire[k].grant))
                assert got == shown[k], f"seed {seed} cycle {cycle} port {k}: grant {got}"
                got = bool(ctx.get(dut.release[k].grant))
                assert got == shown_release[k], f"seed {seed} cycle {cycle} release port {k}"
            acquires = [(request and not shown[k], lock, value)
                        for k, (request, lock, value) in enumerate(acquires)]
            refused = False     # an earlier port asked and its acquire did not hold
            for k, (request, lock, value) in enumerate(acquires):
                holds = request and start.can_acquire(lock, value)
                want = request and table.try_acquire(lock, value, cycle=cycle)
                log["beaten"] += holds and not want       # an earlier port was granted
                log["passed_over"] += want and refused
                if request and not holds:
                    refused = True
                shown[k] = want
                log["grants" if want else "refusals"] += request
            granted, broke = release_of_a_cycle(table, releases)
            for k, (request, _, _) in enumerate(releases):
                shown_release[k] = k == granted
                log["release_waits"] += request and k != granted
            if broke:
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
        # One acquire and one release a cycle; a port whose acquire cannot hold does
        # not keep a later one from its grant.
        assert log["beaten"] and log["passed_over"] and log["release_waits"], log
