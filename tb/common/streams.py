"""Stream helpers for Amaranth async testbenches: put, get, send, receive, record.

One set of helpers for every test (docs/style.md): payloads are plain Python values
(``dict`` for a struct layout, ``int`` otherwise), transfers are sampled right at
the clock edge, and the consumer checks the stream rule "a payload holds until it
is taken" on every cycle it stalls.

Cycle numbers returned by :func:`stream_send` and :func:`stream_receive` count the
clock edges since the helper was called: called at the start of a testbench they are
the cycle numbers of :mod:`aiedma.model.cycle.contract` (cycle 0 ends with the first edge).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from amaranth.hdl import ValueLike
from amaranth.lib import data, stream
from amaranth.sim import SimulatorContext

from ...model.cycle.timing import held_high

__all__ = [
    "TIMEOUT",
    "StreamRuleError",
    "StreamTimeout",
    "record",
    "stream_get",
    "stream_put",
    "stream_receive",
    "stream_send",
    "to_python",
]


TIMEOUT = 2000
"""Default cycles :func:`stream_send` / :func:`stream_receive` wait for one transfer."""


class StreamRuleError(AssertionError):
    """A stream broke a transfer rule (valid dropped or payload changed before it was taken)."""


class StreamTimeout(AssertionError):
    """No transfer for ``timeout`` cycles: the design (or its stimulus) is stuck."""


def to_python(value: Any) -> Any:
    """A sampled value as plain Python: struct layouts become dicts, the rest ints."""
    if isinstance(value, data.Const):
        layout = value.shape()
        if isinstance(layout, data.StructLayout):
            return {name: to_python(value[name]) for name, _ in layout}
        return int(value.as_value().value)
    return int(value)


async def stream_put(ctx: SimulatorContext, s: stream.Interface, payload: Any) -> None:
    """Offers ``payload`` on ``s`` until it is taken (valid is dropped afterwards)."""
    ctx.set(s.valid, 1)
    ctx.set(s.payload, payload)
    await ctx.tick().until(s.ready)
    ctx.set(s.valid, 0)


async def stream_get(ctx: SimulatorContext, s: stream.Interface) -> Any:
    """Takes one payload from ``s`` (ready is held high until then) and returns it."""
    ctx.set(s.ready, 1)
    (payload,) = await ctx.tick().sample(s.payload).until(s.valid)
    ctx.set(s.ready, 0)
    return to_python(payload)


async def stream_send(ctx: SimulatorContext, s: stream.Interface, payloads: Iterable[Any], *,
                      offer: Sequence[bool] | None = None,
                      timeout: int = TIMEOUT) -> list[int]:
    """Sends ``payloads`` in order; returns the cycle in which each one was taken.

    Parameters
    ----------
    offer : sequence of bool, optional
        Per cycle (:mod:`.stimulus` patterns; held high past its end): a payload is
        first offered only in a cycle where it is high, so low cycles idle the
        producer. Once offered, a payload is held until taken, as the stream rules
        demand. Default: offer at once.
    timeout : int
        Cycles a payload may wait for ``ready`` before :class:`StreamTimeout`.
    """
    cycle = 0
    taken: list[int] = []
    for payload in payloads:
        while not held_high(offer, cycle):
            ctx.set(s.valid, 0)
            await ctx.tick()
            cycle += 1
        ctx.set(s.valid, 1)
        ctx.set(s.payload, payload)
        offered = cycle
        while True:
            _, _, ready = await ctx.tick().sample(s.ready)
            if ready:
                break
            cycle += 1
            if cycle - offered > timeout:
                raise StreamTimeout(f"cycle {cycle}: payload {len(taken)} waited "
                                    f"{timeout} cycles for ready")
        taken.append(cycle)
        cycle += 1
    ctx.set(s.valid, 0)
    return taken


async def stream_receive(ctx: SimulatorContext, s: stream.Interface, count: int, *,
                         ready: Sequence[bool] | None = None,
                         timeout: int = TIMEOUT) -> list[tuple[int, Any]]:
    """Takes ``count`` payloads; returns ``(cycle, payload)`` of each transfer.

    Parameters
    ----------
    ready : sequence of bool, optional
        ``ready`` per cycle (backpressure; :mod:`.stimulus` patterns, held high past
        its end); default: always ready.
    timeout : int
        Cycles to wait for the next transfer before :class:`StreamTimeout`.

    Raises
    ------
    StreamRuleError
        If ``valid`` falls or the payload changes while a payload waits to be taken.
    StreamTimeout
        If no transfer happens for ``timeout`` cycles.
    """
    cycle = 0
    got: list[tuple[int, Any]] = []
    waiting: Any = None
    while len(got) < count:
        r = int(held_high(ready, cycle))
        ctx.set(s.ready, r)
        _, _, valid, payload = await ctx.tick().sample(s.valid, s.payload)
        payload = to_python(payload)
        if waiting is not None and (not valid or payload != waiting):
            raise StreamRuleError(f"cycle {cycle}: a stalled payload {waiting} was not held "
                                  f"(valid={valid}, payload={payload})")
        waiting = None
        if valid and r:
            got.append((cycle, payload))
        elif valid:
            waiting = payload
        cycle += 1
        if cycle - (got[-1][0] if got else 0) > timeout:
            raise StreamTimeout(f"cycle {cycle}: no transfer for {timeout} cycles "
                                f"({len(got)} of {count} received)")
    ctx.set(s.ready, 0)
    return got


def record(log: list[list[Any]], *exprs: ValueLike) -> Callable[[SimulatorContext],
                                                                  Awaitable[None]]:
    """A background testbench that appends the values of ``exprs`` at every clock edge.

    ``log[t]`` holds the values sampled at edge ``t`` (the values of cycle ``t``),
    converted with :func:`to_python`.
    """
    async def bench(ctx: SimulatorContext) -> None:
        async for _, _, *values in ctx.tick().sample(*exprs):
            log.append([to_python(v) for v in values])
    return bench
