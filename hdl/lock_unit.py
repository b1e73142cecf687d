"""The lock unit: a tile's semaphores, acquired and released by several channels.

The rules are the model's (``model/system/locks.py``, docs/bd.md "Locks"), cycle for
cycle as the system model's two-phase cycles run them (``model/system/scheduler.py``):

* an acquire with a negative value ``v`` waits for the lock to be ``>= -v`` and adds
  ``v``; with a value ``v >= 0`` it waits for the lock to be ``== v`` and leaves it;
* acquires are answered in the same cycle (``grant`` is combinational), in port order:
  port ``k`` sees the lock as the acquires granted to ports ``0 .. k-1`` in this cycle
  left it, as the model's channels, stepped in order, see it;
* releases take effect at the end of the cycle, after that cycle's acquires, in port
  order; a release that would leave ``0 .. LOCK_VALUE_MAX`` leaves the lock as it is
  and sets the sticky ``error`` flag (the model raises there), never wraps;
* a write on the register port (``set``) puts a value, at the end of the cycle,
  after acquires and releases.

Everything is registers and adders: ``count`` values of 6 bits. The logic is per port: a
port sees its lock as the last earlier write of the cycle to that lock left it, and each
lock takes its last write.
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
        width = signed(_STATE_BITS + 2)
        # The work is per port, not per lock: a port sees its lock as the last earlier
        # write to it in this cycle left it (acquires in port order, then releases in port
        # order), and each lock takes its last write at the end of the cycle. Per lock and
        # per port it would be count x 2 ports adders (the memory tile's 64 x 24: 30 k LUTs).
        writes: list[tuple[Signal, Value, Signal]] = []   # (active, lock, value) in order

        def seen_by(lock_id: Value, name: str) -> Signal:
            seen = Signal(width, name=f"{name}_seen")
            m.d.comb += seen.eq(values[lock_id])
            for j, (active, lock, value) in enumerate(writes):
                after = Signal(width, name=f"{name}_seen{j}")
                m.d.comb += after.eq(Mux(active & (lock == lock_id), value, seen))
                seen = after
            return seen

        for k, port in enumerate(self.acquire):
            seen = seen_by(port.lock_id, f"acq{k}")
            granted = Signal(name=f"granted{k}")
            m.d.comb += [
                granted.eq(port.request & Mux(port.value < 0, seen >= -port.value,
                                              seen == port.value)),
                port.grant.eq(granted),
            ]
            # An acquire-equal leaves the lock as it is: it adds nothing.
            after = Signal(width, name=f"acq{k}_after")
            m.d.comb += after.eq(seen + Mux(port.value < 0, port.value, 0))
            writes.append((granted, port.lock_id, after))
        error = Signal()
        m.d.comb += self.error.eq(error)
        for k, port in enumerate(self.release):
            tried = Signal(width, name=f"rel{k}_tried")
            m.d.comb += tried.eq(seen_by(port.lock_id, f"rel{k}") + port.value)
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
