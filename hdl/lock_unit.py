"""The lock unit: a tile's semaphores, acquired and released by several channels.

The rules are the model's (``model/system/locks.py``, docs/bd.md "Locks"), cycle for
cycle as the system model's two-phase cycles run them (``model/system/scheduler.py``,
docs/cycle.md "Channel", Locks):

* an acquire with a negative value ``v`` waits for the lock to be ``>= -v`` and adds
  ``v``; with a value ``v >= 0`` it waits for the lock to be ``== v`` and leaves it;
* **requests and grants are registers**: a channel asks from registers, the unit
  decides in that cycle and its ``grant`` is a register, high for one cycle in the
  cycle after the decision (``LOCK_GRANT_LATENCY`` in ``model/cycle/contract.py``). In
  that cycle an acquire port's request, still up, is not looked at (the channel drops
  it at the end of the cycle), and a release port asks with the release behind the
  granted one. So nothing another channel decides in a cycle reaches a channel in
  that cycle, and no grant waits on a channel's logic;
* **one acquire a cycle**: the unit decides from the lock values at the start of the
  cycle; of the ports whose acquire holds, the lowest-numbered is granted and the
  others wait; the lock takes its new value at the end of the cycle;
* **one release a cycle**: of the release ports asking, the lowest-numbered is granted
  and its release is applied at the end of the cycle, after that cycle's acquire (it
  sees its lock as the acquire left it); a result outside ``0 .. LOCK_VALUE_MAX`` is
  not applied and sets the sticky ``error`` flag (the model raises there), never
  wraps;
* a write on the register port (``set``) puts a value, at the end of the cycle,
  after acquires and releases.

So each lock has two writers a cycle (the granted acquire, the granted release) and
the register write, whatever the number of ports: on the memory tile, 64 six-bit
registers with 13 read ports (12 acquires, the release) and two write ports, not a
24-writer register file.
"""

from __future__ import annotations

import operator
from functools import reduce

from amaranth.hdl import Array, Cat, Module, Mux, Signal, Value, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..model.system.locks import LOCK_VALUE_MAX

__all__ = ["LOCK_VALUE_BITS", "LockUnit", "lock_port_signature"]

LOCK_VALUE_BITS = 7
"""Width of a BD's acquire/release value (two's complement, -64..63)."""

_STATE_BITS = LOCK_VALUE_MAX.bit_length()


def lock_port_signature(count: int) -> wiring.Signature:
    """One acquire or one release port, from the asking channel's side.

    ``request``, ``lock_id`` (``range(count)``) and ``value`` out; ``grant`` in. The two
    kinds of port carry the same members; the lock unit's rules tell them apart.
    """
    return wiring.Signature({
        "request": Out(1), "lock_id": Out(range(count)),
        "value": Out(signed(LOCK_VALUE_BITS)), "grant": In(1),
    })


def _first(requests: list[Value]) -> list[Value]:
    """One-hot: the first of ``requests`` that is high."""
    return [r & ~Cat(*requests[:k]).any() if k else r for k, r in enumerate(requests)]


def _select(onehot: list[Value], values: list[Value]) -> Value:
    """The value whose ``onehot`` bit is high (0 when none is)."""
    return reduce(operator.or_, (Mux(hit, v, 0) for hit, v in zip(onehot, values, strict=True)))


class LockUnit(wiring.Component):
    """``count`` locks with ``ports`` acquire and ``ports`` release ports.

    Parameters
    ----------
    count : int
        Locks (16 on a core tile and shim, 64 on a memory tile).
    ports : int
        Acquire ports and release ports (one each per channel, in priority order).

    Attributes
    ----------
    acquire : In(lock_port_signature(count)).array(ports)
    release : In(lock_port_signature(count)).array(ports)
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
            "acquire": In(lock_port_signature(count)).array(ports),
            "release": In(lock_port_signature(count)).array(ports),
            "set_en": In(1), "set_id": In(range(count)), "set_value": In(_STATE_BITS),
            "read_id": In(range(count)), "read_value": Out(_STATE_BITS),
            "error": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        values = Array(Signal(_STATE_BITS, name=f"lock{i}") for i in range(self.count))
        m.d.comb += self.read_value.eq(values[self.read_id])
        # The release is chosen from registers alone (the ports' requests), so all that
        # waits on the acquire decision is a few multiplexers at the end: what every
        # release result would be is worked out beside the acquires, not after them.
        asking = [p.request for p in self.release]
        chosen = _first(asking)
        rel_any, rel_id = Signal(), Signal(range(self.count))
        rel_value = Signal(signed(LOCK_VALUE_BITS))
        m.d.comb += [rel_any.eq(Cat(*asking).any()),
                     rel_id.eq(_select(chosen, [p.lock_id for p in self.release])),
                     rel_value.eq(_select(chosen, [p.value for p in self.release]))]
        for port, grant in zip(self.release, chosen, strict=True):
            m.d.sync += port.grant.eq(grant)
        alone = self._release_result(m, "alone", values[rel_id], rel_value)

        # Acquires: every port tests its lock; the first that holds is granted. A port
        # whose grant shows now is not looked at (its request drops at this edge).
        holds, after, with_release, same = [], [], [], []
        for k, port in enumerate(self.acquire):
            # What the acquire adds (0 for an acquire-equal, which leaves the lock as it
            # is) and, with the release, what both add: from registers, so each result
            # below is one adder after the lock's value.
            adds = Signal(signed(LOCK_VALUE_BITS), name=f"acq{k}_adds")
            both = Signal(signed(LOCK_VALUE_BITS + 1), name=f"acq{k}_both")
            m.d.comb += [adds.eq(Mux(port.value < 0, port.value, 0)),
                         both.eq(adds + rel_value)]
            seen = Signal(_STATE_BITS, name=f"acq{k}_seen")
            hold = Signal(name=f"acq{k}_holds")
            left = Signal(_STATE_BITS, name=f"acq{k}_after")
            m.d.comb += [seen.eq(values[port.lock_id]),
                         hold.eq(port.request & ~port.grant
                                 & Mux(port.value < 0, seen >= -port.value,
                                       seen == port.value)),
                         left.eq(seen + adds)]
            holds.append(hold)
            after.append(left)
            # The release, were this acquire granted on the release's lock.
            with_release.append(self._release_result(m, f"acq{k}", seen, both))
            same.append(port.lock_id == rel_id)
        granted = _first(holds)
        for port, grant in zip(self.acquire, granted, strict=True):
            m.d.sync += port.grant.eq(grant)
        acq_after = Signal(_STATE_BITS)
        m.d.comb += acq_after.eq(_select(granted, after))
        # The release sees its lock as the acquire left it.
        meets = Signal()
        m.d.comb += meets.eq(Cat(*(g & s for g, s in zip(granted, same, strict=True))).any())
        tried, fits = Signal(_STATE_BITS), Signal()
        m.d.comb += [
            tried.eq(Mux(meets, _select(granted, [r[0] for r in with_release]), alone[0])),
            fits.eq(Mux(meets, _select(granted, [r[1] for r in with_release]), alone[1])),
        ]
        applied = Signal()
        m.d.comb += applied.eq(rel_any & fits)
        error = Signal()
        m.d.comb += self.error.eq(error)
        with m.If(rel_any & ~applied):
            m.d.sync += error.eq(1)

        for i in range(self.count):
            acquired = Cat(*(g & (p.lock_id == i)
                             for g, p in zip(granted, self.acquire, strict=True))).any()
            with m.If(self.set_en & (self.set_id == i)):
                m.d.sync += values[i].eq(self.set_value)
            with m.Elif(applied & (rel_id == i)):
                m.d.sync += values[i].eq(tried)
            with m.Elif(acquired):
                m.d.sync += values[i].eq(acq_after)
        return m

    @staticmethod
    def _release_result(m: Module, name: str, before: Value,
                        value: Value) -> tuple[Signal, Signal]:
        """A release of ``value`` on a lock at ``before``: the new value and whether it
        stays in ``0 .. LOCK_VALUE_MAX`` (else it is not applied)."""
        tried = Signal(signed(_STATE_BITS + 2), name=f"rel_{name}_tried")
        fits = Signal(name=f"rel_{name}_fits")
        m.d.comb += [tried.eq(before + value),
                     fits.eq((tried >= 0) & (tried <= LOCK_VALUE_MAX))]
        return tried[:_STATE_BITS], fits
