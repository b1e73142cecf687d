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

Everything is registers and adders: ``count`` values of 6 bits.
"""

from __future__ import annotations

from amaranth.hdl import Array, Module, Mux, Signal, signed
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
        # Acquires in port order: each port sees the earlier ports' grants of this cycle.
        width = signed(_STATE_BITS + 2)
        taken: list[tuple[Signal, Signal, Signal]] = []  # (granted, lock, value) of ports < k
        for k, port in enumerate(self.acquire):
            seen = Signal(width, name=f"seen{k}")
            m.d.comb += seen.eq(values[port.lock_id])
            now = seen
            for j, (granted, lock, value) in enumerate(taken):
                after = Signal(width, name=f"seen{k}_after{j}")
                m.d.comb += after.eq(now + Mux(granted & (lock == port.lock_id), value, 0))
                now = after
            greater_equal = now >= -port.value
            equal = now == port.value
            granted = Signal(name=f"granted{k}")
            m.d.comb += [
                granted.eq(port.request & ((port.value < 0) & greater_equal
                                           | (port.value >= 0) & equal)),
                port.grant.eq(granted),
            ]
            # An acquire-equal leaves the lock as it is: it adds nothing.
            added = Signal(signed(LOCK_VALUE_BITS), name=f"added{k}")
            m.d.comb += added.eq(Mux(port.value < 0, port.value, 0))
            taken.append((granted, port.lock_id, added))
        error = Signal()
        m.d.comb += self.error.eq(error)
        for i in range(self.count):
            value = Signal(width, name=f"lock{i}_next0")
            m.d.comb += value.eq(values[i])
            for k, (granted, lock, added) in enumerate(taken):
                nxt = Signal(width, name=f"lock{i}_acq{k}")
                m.d.comb += nxt.eq(value + Mux(granted & (lock == i), added, 0))
                value = nxt
            for k, port in enumerate(self.release):
                hit = port.request & (port.lock_id == i)
                tried = Signal(width, name=f"lock{i}_rel{k}_try")
                nxt = Signal(width, name=f"lock{i}_rel{k}")
                outside = (tried < 0) | (tried > LOCK_VALUE_MAX)
                m.d.comb += [tried.eq(value + port.value),
                             nxt.eq(value)]
                with m.If(hit & ~outside):
                    m.d.comb += nxt.eq(tried)
                with m.If(hit & outside):
                    m.d.sync += error.eq(1)
                value = nxt
            with m.If(self.set_en & (self.set_id == i)):
                m.d.sync += values[i].eq(self.set_value)
            with m.Else():
                m.d.sync += values[i].eq(value[:_STATE_BITS])
        return m
