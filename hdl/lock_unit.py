"""The lock unit: a tile's semaphores, acquired and released by several channels.

The rules are the model's (``model/system/locks.py``, docs/bd.md "Locks"), cycle for
cycle as the system model's two-phase cycles run them (``model/system/scheduler.py``,
docs/cycle.md "Channel", Locks):

* an acquire with a negative value ``v`` waits for the lock to be ``>= -v`` and adds
  ``v``; with a value ``v >= 0`` it waits for the lock to be ``== v`` and leaves it;
* **requests and grants are registers**: a channel asks from registers and each
  ``grant`` is a register, high for one cycle. In that cycle an acquire port's request,
  still up, is not looked at (the channel drops it at the end of the cycle), and a
  release port asks with the release behind the granted one. So nothing another
  channel decides in a cycle reaches a channel in that cycle, and no grant waits on a
  channel's logic;
* **an acquire is tested, then granted** (``LOCK_GRANT_LATENCY`` in
  ``model/cycle/contract.py``): in each cycle every request is tested against its lock
  and what the lock would become is worked out, into registers; in the next cycle, of
  the requests whose test held and whose lock was not written at the end of the cycle
  between (so the test still holds), the lowest-numbered port is granted (**one
  acquire a cycle**), its lock takes its new value at the end of that cycle and its
  grant shows in the next. So the grant's path starts at the test's registers, not at
  a lock read and compare, and not at the channel: a request tested stays up until its
  grant shows unless its channel is reset (``drop``, told in the cycle of the test),
  and the test keeps the request's lock, decoded, beside its result;
* **a release is chosen, then applied**: of the release ports asking (not the one
  being applied), the lowest-numbered is chosen into registers; the unit applies it at
  the end of the next cycle, after that cycle's acquire (it sees its lock as the
  acquire left it), if its port still asks then (a channel reset drops the request:
  the unit is told in the cycle it chooses, ``drop``, so that whether it applies the
  release is a register), and its grant shows in the cycle after (**one release a
  cycle**).
  A result outside ``0 .. LOCK_VALUE_MAX`` is not applied and sets the sticky
  ``error`` flag (the model raises there), never wraps;
* a write on the register port (``set``) puts a value, at the end of the cycle,
  after acquires and releases.

So each lock has two writers a cycle (the granted acquire, the granted release) and
the register write, whatever the number of ports: on the memory tile, 64 six-bit
registers with 12 read ports (the acquires) and two write ports, not a 24-writer
register file. The chosen release's lock is kept decoded (one bit a lock), and each
lock adds the release to its own value and checks the range itself: the release's
path is a 7-bit add and a compare at the lock, not a read of the chosen lock through a
64-way multiplexer whose result then fans out to every lock's enable. A release on the
lock being acquired in the same cycle is added at each port in the grant's cycle, to
the acquire's tested result, both registers, beside the grant's priority: the grant
then selects one port's value. Neither the test nor that add sees the release port's
choice among the channels of the same cycle (a path across the whole tile, from every
channel's release queue). A port's lock counts as written by the release alone when
the release lands on a lock no acquire takes (one range check at the chosen lock), so a
port's staleness does not wait on the grant's choice either.
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


class _Release:
    """The release chosen in the cycle before, applied in this one (registers): its lock
    by ID and decoded (``hit``, one bit a lock, low when the release is dropped), so each
    lock tests the release on its own value rather than every lock waiting on one read of
    the chosen lock, and its write enable is that bit and the test alone."""

    def __init__(self, count: int, ports: int) -> None:
        self.lock_id = Signal(range(count), name="rel_id")
        self.hit = [Signal(name=f"rel_hit{i}") for i in range(count)]
        self.value = Signal(signed(LOCK_VALUE_BITS), name="rel_value")
        self.port = [Signal(name=f"rel_port{p}") for p in range(ports)]
        self.applied = [Signal(name=f"rel_applied{p}") for p in range(ports)]  # ... and due
        self.due = Signal(name="rel_due")               # applied at the end of this cycle


class _Acquire:
    """One acquire port's test of the cycle before (registers) and this cycle's facts."""

    def __init__(self, k: int, count: int) -> None:
        self.fit = Signal(name=f"acq{k}_fit")           # its acquire held when tested
        self.lock_id = Signal(range(count), name=f"acq{k}_lock_id")  # the lock tested
        self.hit = [Signal(name=f"acq{k}_hit{i}") for i in range(count)]  # ... decoded
        self.after = Signal(_STATE_BITS, name=f"acq{k}_after")  # the lock, granted
        # The lock, granted with the release applied now on it, and whether that fits.
        self.with_release = Signal(_STATE_BITS, name=f"acq{k}_with_release")
        self.with_release_fits = Signal(name=f"acq{k}_with_release_fits")
        self.dirty = Signal(name=f"acq{k}_dirty")       # its lock was written since
        self.eligible = Signal(name=f"acq{k}_eligible")
        self.on_release = Signal(name=f"acq{k}_on_release")
        self.result = Signal(_STATE_BITS, name=f"acq{k}_result")  # its lock's next value


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
    drop : In(ports)
        Bit ``p``: channel ``p`` drops its requests at the end of this cycle (its
        reset): a release chosen from its port now is not applied, and an acquire
        tested now is not granted. An acquire request otherwise stays up, with its lock
        and value, until its grant shows (the unit grants from its own registers).
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
            "release": In(lock_port_signature(count)).array(ports), "drop": In(ports),
            "set_en": In(1), "set_id": In(range(count)), "set_value": In(_STATE_BITS),
            "read_id": In(range(count)), "read_value": Out(_STATE_BITS),
            "error": Out(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        values = Array(Signal(_STATE_BITS, name=f"lock{i}") for i in range(self.count))
        m.d.comb += self.read_value.eq(values[self.read_id])
        release = self._chosen_release(m)
        acquires = [self._tested_acquire(m, k, values, release) for k in range(self.ports)]

        # Grants: of the requests tested in the cycle before (their locks unwritten
        # since), the first is granted; its grant register shows in the next cycle. Its
        # lock's next value was chosen at the port, beside the priority, so the grant
        # only selects it.
        granted = _first([a.eligible for a in acquires])
        for port, grant in zip(self.acquire, granted, strict=True):
            m.d.sync += port.grant.eq(grant)
        acq_id = Signal.like(self.acquire[0].lock_id)
        acq_any, acq_result, meets = Signal(), Signal(_STATE_BITS), Signal()
        m.d.comb += [acq_id.eq(_select(granted, [a.lock_id for a in acquires])),
                     acq_any.eq(Cat(*granted).any()),
                     acq_result.eq(_select(granted, [a.result for a in acquires])),
                     meets.eq(Cat(*(g & a.on_release for g, a in
                                    zip(granted, acquires, strict=True))).any())]

        # The release chosen in the cycle before is applied now, after the acquire: on a
        # lock just acquired (``meets``) in the acquire's result, worked out at its port;
        # on any other lock, to the lock's own value, tested at the lock.
        # Each lock is the granted acquire's when its port's decoded lock says so: no
        # multiplexer of lock IDs and compare on the way to the locks' enables.
        acq_hits = [Cat(*(g & a.hit[i] for g, a in zip(granted, acquires, strict=True))).any()
                    for i in range(self.count)]
        refused_alone = self._write_locks(m, values, release, (acq_hits, acq_result))
        refused_with = Cat(*(g & a.on_release & ~a.with_release_fits for g, a in
                             zip(granted, acquires, strict=True))).any()
        error = Signal()
        m.d.comb += self.error.eq(error)
        with m.If(release.due & Mux(meets, refused_with, refused_alone)):
            m.d.sync += error.eq(1)

        # Which tested request's lock is written at this edge (it waits a cycle more). A
        # release on a lock also acquired now needs no test of its own: the acquire wrote
        # the lock; so the release counts alone, and the grant is not on this path.
        for port, acquire in zip(self.acquire, acquires, strict=True):
            m.d.sync += acquire.dirty.eq(
                (acq_any & (acq_id == port.lock_id))
                | (release.due & (port.lock_id == release.lock_id) & ~refused_alone)
                | (self.set_en & (self.set_id == port.lock_id)))
        return m

    def _write_locks(self, m: Module, values: Array, release: _Release,
                     acquire: tuple[list[Value], Value]) -> Value:
        """Each lock's next value: the register write, else the granted acquire (its
        result already holds a release on its lock), else the release alone (tested at
        the lock). Returns whether the release alone, on its lock's own value, would be
        refused (its result outside ``0 .. LOCK_VALUE_MAX``)."""
        acq_hits, acq_result = acquire
        refused = []
        for i in range(self.count):
            tried, fits = self._release_result(m, f"lock{i}", values[i], release.value)
            refused.append(release.hit[i] & ~fits)
            with m.If(self.set_en & (self.set_id == i)):
                m.d.sync += values[i].eq(self.set_value)
            with m.Elif(acq_hits[i]):
                m.d.sync += values[i].eq(acq_result)
            with m.Elif(release.hit[i] & fits):
                m.d.sync += values[i].eq(tried)
        return Cat(*refused).any()

    def _chosen_release(self, m: Module) -> _Release:
        """The release port's choice: of the ports asking (a port whose release is being
        applied now is not), the first; held in registers, applied in the next cycle
        while its port still asks (a channel reset drops its queue); its grant shows in
        the cycle after. Whether it is applied is known when it is chosen (``drop``), so
        ``due`` and the grants are registers: no port's request of the next cycle reaches
        the locks' writes."""
        release = _Release(self.count, self.ports)
        asking = [p.request & ~applying for p, applying in
                  zip(self.release, release.port, strict=True)]
        chosen = _first(asking)
        lock_id = Signal.like(release.lock_id, name="rel_id_next")
        still = [c & ~self.drop[p] for p, c in enumerate(chosen)]
        applies = Signal(name="rel_applies")
        m.d.comb += [lock_id.eq(_select(chosen, [p.lock_id for p in self.release])),
                     applies.eq(Cat(*still).any())]
        m.d.sync += [
            release.lock_id.eq(lock_id),
            *(hit.eq((lock_id == i) & applies) for i, hit in enumerate(release.hit)),
            release.value.eq(_select(chosen, [p.value for p in self.release])),
            *(bit.eq(c) for bit, c in zip(release.port, chosen, strict=True)),
            *(bit.eq(s) for bit, s in zip(release.applied, still, strict=True)),
            release.due.eq(applies),
        ]
        m.d.sync += [p.grant.eq(bit) for p, bit in zip(self.release, release.applied,
                                                          strict=True)]
        return release

    def _tested_acquire(self, m: Module, k: int, values: Array, release: _Release) -> _Acquire:
        """Acquire port ``k``'s test: in each cycle its request (not one whose grant
        shows) is tested against its lock, and what the lock would become is worked
        out; the next cycle may grant it if its lock was not written in between (then
        its lock's value is still the one tested), and adds the release applied in that
        cycle to the tested result, both registers."""
        port, acquire = self.acquire[k], _Acquire(k, self.count)
        # What the acquire adds (0 for an acquire-equal, which leaves the lock as it is).
        adds = Signal(signed(LOCK_VALUE_BITS), name=f"acq{k}_adds")
        seen = Signal(_STATE_BITS, name=f"acq{k}_seen")
        m.d.comb += [adds.eq(Mux(port.value < 0, port.value, 0)),
                     seen.eq(Cat(*values).word_select(port.lock_id, _STATE_BITS))]
        # An acquire with a negative value holds when the lock it leaves is >= 0: the sign
        # of the sum it stores, not a compare of its own.
        after = Signal(signed(_STATE_BITS + 2), name=f"acq{k}_after_next")
        m.d.comb += after.eq(seen + adds)
        holds = Mux(port.value < 0, after >= 0, seen == port.value)
        # A request tested now is still up in the next cycle unless its grant shows then
        # (not eligible) or its channel is reset now (``drop``): so the grant needs no
        # look at the port, and its lock, decoded here, is a register of the unit's.
        m.d.sync += [acquire.fit.eq(port.request & ~port.grant & ~self.drop[k] & holds),
                     acquire.after.eq(after[:_STATE_BITS]),
                     acquire.lock_id.eq(port.lock_id),
                     *(hit.eq(port.lock_id == i) for i, hit in enumerate(acquire.hit))]
        # The release it may meet when granted is the one applied then: added to the
        # tested result from registers (``after`` is in range wherever the test held).
        tried, fits = self._release_result(m, f"acq{k}", acquire.after, release.value)
        m.d.comb += [
            acquire.with_release.eq(tried), acquire.with_release_fits.eq(fits),
            acquire.eligible.eq(acquire.fit & ~port.grant & ~acquire.dirty),
            acquire.on_release.eq(acquire.lock_id == release.lock_id),
            # Were it granted now: its lock with the release applied on it, if that fits.
            acquire.result.eq(Mux(release.due & acquire.on_release & acquire.with_release_fits,
                                  acquire.with_release, acquire.after)),
        ]
        return acquire

    @staticmethod
    def _release_result(m: Module, name: str, before: Value,
                        value: Value) -> tuple[Signal, Signal]:
        """A change of ``value`` (a release, or an acquire and a release) on a lock at
        ``before``: the new value and whether it stays in ``0 .. LOCK_VALUE_MAX`` (else
        a release is not applied)."""
        tried = Signal(signed(_STATE_BITS + 2), name=f"rel_{name}_tried")
        fits = Signal(name=f"rel_{name}_fits")
        m.d.comb += [tried.eq(before + value),
                     fits.eq((tried >= 0) & (tried <= LOCK_VALUE_MAX))]
        return tried[:_STATE_BITS], fits
