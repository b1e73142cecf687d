"""The RTL lock unit against the model's lock table, cycle by cycle, with several ports."""

import random

import pytest
from amaranth.sim import Simulator

from aiedma.hdl.lock_unit import LockUnit
from aiedma.model.system.locks import LockError, LockTable


class Ports:
    """The requests on one kind of port, as channels make them: a request stays up, with
    its lock and value, until its grant shows. An acquire port drops it at the end of
    that cycle; a release port asks with the release behind in that very cycle (its
    queue's next head)."""

    def __init__(self, rng, count, locks, values, chance, behind_at_grant):
        self.rng, self.locks, self.values, self.chance = rng, locks, values, chance
        self.behind_at_grant = behind_at_grant
        self.asks = [None] * count        # (lock, value, first cycle shown) or None
        self.shown = [False] * count      # the grant register: it shows in this cycle
        self.reset = [False] * count      # its channel was reset at the end of the cycle

    def new(self, cycle):
        return (self.rng.choice(self.locks), self.rng.choice(self.values), cycle)

    def start(self, cycle):
        """The requests of this cycle."""
        for k, ask in enumerate(self.asks):
            if self.reset[k]:             # its queue is empty for a cycle
                self.asks[k], self.reset[k] = None, False
                continue
            if self.shown[k] and self.behind_at_grant:
                ask = None
            if ask is None and (self.behind_at_grant or not self.shown[k]):
                if self.rng.random() < self.chance:
                    ask = self.new(cycle)
            self.asks[k] = ask

    def drive(self, ctx, ports):
        for port, ask in zip(ports, self.asks, strict=True):
            ctx.set(port.request, ask is not None)
            ctx.set(port.lock_id, ask[0] if ask else 0)
            ctx.set(port.value, ask[1] if ask else 0)

    def end(self, granted):
        """The edge: an acquire port drops the request whose grant showed."""
        if not self.behind_at_grant:
            self.asks = [None if shown else ask for ask, shown in zip(self.asks, self.shown,
                                                                    strict=True)]
        self.shown = granted


def run(count, ports, cycles, seed):
    """Random acquires, releases and writes on every port; every grant and value compared
    with the contract's rules on the model's table (docs/cycle.md "Lock requests"):

    * an acquire request is granted from its second cycle up, not while its grant shows,
      when its lock was not written at the end of the cycle before and it holds: the
      first such port (``try_acquire(..., settled=True)``); the grant shows next cycle;
    * a release is chosen (the first port asking, not the one being applied), applied
      at the end of the next cycle after its acquire, its grant showing in the cycle
      after, unless its channel is reset at the end of the cycle it is chosen in
      (``drop``: the request is gone in the next); a register write goes last.
    """
    rng = random.Random(seed)
    dut = LockUnit(count, ports)
    table = LockTable("model", count)
    log = {"grants": 0, "refusals": 0, "errors": 0, "beaten": 0, "passed_over": 0,
           "release_waits": 0, "written_waits": 0, "dropped": 0}
    # Few locks, anywhere in the unit (the first, the last, between), so contention
    # and both outcomes are frequent.
    locks = sorted({0, count - 1, rng.randrange(count)})
    acquires = Ports(rng, ports, locks, [-2, -1, -1, 0, 1, 2], 0.6, False)
    releases = Ports(rng, ports, locks, [-1, 1, 2, 63], 0.4, True)

    async def bench(ctx):
        error = False
        applying = None                   # the release chosen last cycle: (port, lock, value)
        for cycle in range(cycles):
            acquires.start(cycle)
            releases.start(cycle)
            acquires.drive(ctx, dut.acquire)
            releases.drive(ctx, dut.release)
            # Frequent small writes keep the locks low, where acquires are refused.
            write = (rng.random() < 0.3, rng.choice(locks), rng.randrange(4))
            ctx.set(dut.set_en, write[0])
            ctx.set(dut.set_id, write[1])
            ctx.set(dut.set_value, write[2])
            # Now and then a channel is reset: its release queue empties at the edge.
            drops = [rng.random() < 0.05 for _ in range(ports)]
            ctx.set(dut.drop, sum(d << k for k, d in enumerate(drops)))
            for k in range(ports):
                got = bool(ctx.get(dut.acquire[k].grant))
                assert got == acquires.shown[k], f"seed {seed} cycle {cycle} port {k}: grant"
                got = bool(ctx.get(dut.release[k].grant))
                assert got == releases.shown[k], f"seed {seed} cycle {cycle} release port {k}"
            granted = decide_acquires(table, acquires, cycle, log)
            broke = False
            if applying is not None:
                try:
                    table.release(applying[1], applying[2], cycle=cycle)
                except LockError:
                    broke = True
            released = [applying is not None and applying[0] == k for k in range(ports)]
            applying = choose_release(releases, applying, log)
            if applying is not None and drops[applying[0]]:
                applying = None
                log["dropped"] += 1
            if broke:
                error = True
                log["errors"] += 1
            if write[0]:
                table.set(write[1], write[2], cycle=cycle)
            acquires.end(granted)
            releases.end(released)
            acquires.reset, releases.reset = list(drops), list(drops)
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


def decide_acquires(table, acquires, cycle, log):
    """This cycle's acquire decision on the model's table; the grants that show next."""
    start = list(table.values)
    granted, refused = [], False
    for k, ask in enumerate(acquires.asks):
        tested = ask is not None and ask[2] < cycle and not acquires.shown[k]
        want = tested and table.try_acquire(ask[0], ask[1], cycle=cycle, settled=True)
        if tested:
            holds = (start[ask[0]] >= -ask[1]) if ask[1] < 0 else start[ask[0]] == ask[1]
            waits = holds and table.written_before(ask[0], cycle)
            log["written_waits"] += waits
            log["beaten"] += holds and not want and not waits   # an earlier port won
            log["passed_over"] += want and refused
            refused = refused or not holds
            log["grants" if want else "refusals"] += 1
        granted.append(want)
    return granted


def choose_release(releases, applying, log):
    """The release port's choice of this cycle, applied in the next."""
    busy = None if applying is None else applying[0]
    chosen = None
    for k, ask in enumerate(releases.asks):
        if ask is None or k == busy:
            continue
        if chosen is None:
            chosen = (k, ask[0], ask[1])
        else:
            log["release_waits"] += 1
    return chosen


# The memory tile's unit (64 locks, 12 channels) simulates slowly: fewer cycles.
@pytest.mark.parametrize(("count", "ports", "cycles", "seed"),
                         [(4, 1, 300, 1), (4, 3, 300, 2), (16, 2, 300, 3), (64, 12, 60, 4)])
def test_the_lock_unit_is_the_model_lock_table(count, ports, cycles, seed):
    log = run(count, ports, cycles, seed)
    assert log["grants"] and log["refusals"] and log["errors"], log
    assert log["written_waits"], log    # a lock written the cycle before holds a grant back
    assert log["dropped"], log          # a release chosen as its channel is reset is not applied
    if ports > 1:
        # One acquire and one release a cycle; a port whose acquire cannot hold does
        # not keep a later one from its grant.
        assert log["beaten"] and log["passed_over"] and log["release_waits"], log
