"""The lock unit: a tile's semaphores, acquired and released by several channels.

The rules are the model's (``model/system/locks.py``, docs/bd.md "Locks"), cycle for
cycle as the system model's two-phase cycles run them (``model/system/scheduler.py``):

* an acquire with a negative value ``v`` waits for the lock to be ``>= -v`` and adds
  ``v``; with a value ``v >= 0`` it waits for the lock to be ``== v`` and leaves it;
* acquires are answered in the same cycle (``grant`` is combinational) from the lock
  values at the start of the cycle, **one acquire per lock per cycle**: of the ports
  whose acquire holds, the lowest-numbered wins its lock and the others wait (the
  model's channels, stepped in port order, see a lock taken earlier in the cycle as
  refused);
* releases take effect at the end of the cycle, after that cycle's acquire: release
  port ``k`` sees its lock as the acquire left it plus the releases of ports
  ``0 .. k-1`` to it; one whose result leaves ``0 .. LOCK_VALUE_MAX`` is not applied and
  sets the sticky ``error`` flag (the model raises there), never wraps;
* a write on the register port (``set``) puts a value, at the end of the cycle,
  after acquires and releases.

Everything is registers and adders: ``count`` values of 6 bits. Every port decides in
parallel (no port waits for another's decision: a chain through twelve channels' ports
could not be clocked); each lock takes its last write of the cycle.
"""

from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Array, Cat, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.system.locks import LOCK_VALUE_MAX

__all__ = ["LOCK_VALUE_BITS", "LockUnit"]

LOCK_VALUE_BITS = 7
"""Width of a BD's acquire/release value (two's complement, -64..63)."""

_STATE_BITS = LOCK_VALUE_MAX.bit_length()


def acquire_signature(count: int) -> wiring.Signature:
    """One acquire port: ``request``, ``lock_id``, ``value`` in; ``grant`` out."""
    return wiring.Signature({
        "request": Out(1), "lock_id": Out(range(count)),
        "value": Out(signed(LOCK_VALUE_BITS)), "grant": In(1),
    })


def release_signature(count: int) -> wiring.Signature:
    """One release port: ``request``, ``lock_id``, ``value``."""
    return wiring.Signature({
        "request": Out(1), "lock_id": Out(range(count)), "value": Out(signed(LOCK_VALUE_BITS)),
    })


class LockUnit(wiring.Component):
    """``count`` locks with ``ports`` acquire and ``ports`` release ports.

    Parameters
    ----------
    count : int
        Locks (16 on a core tile and shim, 64 on a memory tile).
    ports : int
        Acquire ports and release ports (one each per channel).

    Attributes
    ----------
    acquire : In(acquire_signature(count)).array(ports)
    release : In(release_signature(count)).array(ports)
    set_en, set_id, set_value : In
        Register write of a lock's value.
    read_id : In
    read_value : Out
        A lock's value now (registers only).
    error : Out
        Sticky: a release left 0..63 (the lock kept its value).
    """

    def __init__(self, count: int, ports: int) -> None:
        self.count, self.ports = count, ports
        super().__init__({
            "acquire": In(acquire_signature(count)).array(ports),
            "release": In(release_signature(count)).array(ports),
            "set_en": In(1), "set_id": In(range(count)), "set_value": In(_STATE_BITS),
            "read_id": In(range(count)), "read_value": Out(_STATE_BITS),
            "error": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        values = Array(Signal(_STATE_BITS, name=f"lock{i}") for i in range(self.count))
        m.d.comb += self.read_value.eq(values[self.read_id])
        # Wide enough for a lock's value plus every port's release and an acquire.
        width = signed((LOCK_VALUE_MAX + (1 << (LOCK_VALUE_BITS - 1)) * (self.ports + 1))
                       .bit_length() + 1)
        # The work is per port, not per lock (per lock, every lock would need an adder per
        # port: the memory tile's 64 x 24). Each write is (active, lock, value), acquires
        # first, then releases, in port order; each lock takes its last.
        writes: list[tuple[Signal, Value, Value]] = []

        holds, acquired = [], []     # acquired: (granted, lock, what it took)
        for k, port in enumerate(self.acquire):
            seen = Signal(_STATE_BITS, name=f"acq{k}_seen")
            m.d.comb += seen.eq(values[port.lock_id])
            hold = Signal(name=f"acq{k}_holds")
            m.d.comb += hold.eq(port.request & Mux(port.value < 0, seen >= -port.value,
                                                    seen == port.value))
            holds.append(hold)
            granted = Signal(name=f"granted{k}")
            beaten = [h & (other.lock_id == port.lock_id)
                      for h, other in zip(holds[:k], self.acquire[:k], strict=True)]
            m.d.comb += [granted.eq(hold & ~Cat(*beaten).any() if beaten else hold),
                         port.grant.eq(granted)]
            # An acquire-equal leaves the lock as it is: it adds nothing.
            taken = Signal(width, name=f"acq{k}_taken")
            m.d.comb += taken.eq(Mux(port.value < 0, port.value, 0))
            writes.append((granted, port.lock_id, seen + taken))
            acquired.append((granted, port.lock_id, taken))

        error = Signal()
        m.d.comb += self.error.eq(error)
        for k, port in enumerate(self.release):
            # The lock's value plus the releases of ports 0..k to it (a balanced tree),
            # plus what this cycle's acquire of it took (at most one acquire).
            terms = [Mux(other.request & (other.lock_id == port.lock_id), other.value, 0)
                     for other in self.release[:k]] + [port.value]
            # The grants come late in the cycle: the acquire's part is added last.
            released = Signal(width, name=f"rel{k}_sum")
            m.d.comb += released.eq(values[port.lock_id] + _tree_sum(terms))
            taken = [Mux(granted & (lock == port.lock_id), took, 0)
                     for granted, lock, took in acquired]
            tried = Signal(width, name=f"rel{k}_tried")
            m.d.comb += tried.eq(released + (reduce(operator.or_, taken) if taken else 0))
            applied = Signal(name=f"applied{k}")
            m.d.comb += applied.eq(port.request & (tried >= 0) & (tried <= LOCK_VALUE_MAX))
            with m.If(port.request & ~applied):
                m.d.sync += error.eq(1)
            writes.append((applied, port.lock_id, tried))
        # A write is its lock's last when no later write names the same lock.
        last = []
        for p, (active, lock, value) in enumerate(writes):
            later = [a & (q_lock == lock) for a, q_lock, _ in writes[p + 1:]]
            flag = Signal(name=f"last{p}")
            m.d.comb += flag.eq(active & ~Cat(*later).any() if later else active)
            last.append((flag, lock, value[:_STATE_BITS]))
        for i in range(self.count):
            hits = [flag & (lock == i) for flag, lock, _ in last]
            written = Signal(_STATE_BITS, name=f"lock{i}_written")
            m.d.comb += written.eq(reduce(operator.or_, (
                Mux(hit, value, 0) for hit, (_, _, value) in zip(hits, last, strict=True))))
            with m.If(self.set_en & (self.set_id == i)):
                m.d.sync += values[i].eq(self.set_value)
            with m.Elif(Cat(*hits).any()):
                m.d.sync += values[i].eq(written)
        return m


def _tree_sum(terms: list[Value]) -> Value:
    """The sum of ``terms`` as a balanced tree of additions (depth log2 of their number)."""
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i]
                 for i in range(0, len(terms), 2)]
    return terms[0]
