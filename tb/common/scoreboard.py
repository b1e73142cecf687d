"""The one scoreboard: RTL against the cycle timing model, on every cycle.

Simulator-neutral (pure Python): the Amaranth testbench and the cocotb test both
feed it the values they sample at each rising edge. It compares the input's
``ready``, the output's ``valid`` and, while ``valid``, the payload with the
trace of :mod:`aiedma.model.cycle.timing`, and on the first difference raises
:class:`Mismatch` naming the cycle, the BD, its dimension counters and the seed
that replays the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.contract import S2MM_WRITE_LATENCY
from ...model.cycle.timing import beat_counters

__all__ = ["AddrgenScoreboard", "MM2SScoreboard", "Mismatch", "RunSummary", "S2MMScoreboard"]


class Mismatch(AssertionError):
    """The RTL and the model differ; the message says where and how to replay it."""


@dataclass
class RunSummary:
    """Figures of one checked run (summed over runs with ``+``)."""

    bds: int = 0
    words: int = 0
    cycles: int = 0
    bubbles: int = 0  # cycles with ready high and a BD running, but no beat
    mismatches: int = 0
    extra: dict = field(default_factory=dict)

    def __add__(self, other: RunSummary) -> RunSummary:
        return RunSummary(self.bds + other.bds, self.words + other.words,
                          self.cycles + other.cycles, self.bubbles + other.bubbles,
                          self.mismatches + other.mismatches)


class _Scoreboard:
    """What both scoreboards share: the run's bookkeeping, failure report and figures.

    Word ``j`` of a run belongs to the BD whose beats include beat ``j`` (one word
    per beat), which is how a mismatch names its BD and dimension counters.
    """

    block = "block"

    def __init__(self, kind: str, bds: Sequence[BufferDescriptor], trace,
                 seed: int | None = None) -> None:
        self.kind, self.bds, self.trace, self.seed = kind, list(bds), trace, seed
        self._valid: list[bool] = []  # o.valid as the RTL showed it, per cycle
        self._taken: list[tuple] = []  # what the RTL transferred, in order
        lengths = [bd.buffer_length for bd in self.bds]
        self._owner = np.repeat(np.arange(len(lengths)), lengths)
        self._position = np.concatenate([np.arange(n) for n in lengths]) if lengths else []

    def _check_valid(self, cycle: int, o_valid: bool) -> bool:
        """Record and compare ``o.valid``; True when a payload is to be compared."""
        t = self.trace
        self._valid.append(bool(o_valid))
        if cycle >= t.cycles:
            if o_valid:
                self._fail(cycle, "o.valid is high after the model's last word", None)
            return False
        if bool(o_valid) != bool(t.o_valid[cycle]):
            self._fail(cycle, f"o.valid={int(o_valid)}, model {int(t.o_valid[cycle])}",
                       len(self._taken) if t.o_valid[cycle] else None)
        return bool(o_valid)

    def _check_payload(self, cycle: int, got: tuple, want: tuple, what: str) -> None:
        if got != want:
            self._fail(cycle, f"{what} = {self._show(got)}, model {self._show(want)}",
                       len(self._taken))
        if self.trace.o_ready[cycle]:
            self._taken.append(got)

    @staticmethod
    def _show(payload: tuple) -> str:
        return repr(payload)

    def _fail(self, cycle: int, what: str, word: int | None) -> None:
        where = ""
        if word is not None and word < len(self._owner):
            b, position = int(self._owner[word]), int(self._position[word])
            bd = self.bds[b]
            where = (f"; BD {b} of {len(self.bds)} ({bd!r}), beat {position} of "
                     f"{bd.buffer_length}, counters {beat_counters(bd, position)}")
        replay = f"; replay with seed={self.seed}" if self.seed is not None else ""
        raise Mismatch(f"{self.kind} {self.block}, cycle {cycle}: {what}{where}{replay}")

    def summary(self) -> RunSummary:
        """Figures of the run so far, from what the RTL showed.

        A bubble is a cycle between the first and the last word in which the
        consumer was ready but nothing was valid.
        """
        valid = np.array(self._valid[: self.trace.cycles], dtype=bool)
        ready = self.trace.o_ready[: valid.size]
        shown = np.flatnonzero(valid)
        bubbles = 0
        if shown.size:
            span = slice(shown[0], shown[-1] + 1)
            bubbles = int(np.count_nonzero(ready[span] & ~valid[span]))
        return RunSummary(bds=len(self.bds), words=len(self._taken), cycles=valid.size,
                          bubbles=bubbles)


class AddrgenScoreboard(_Scoreboard):
    """Checks an address generator, cycle by cycle, against the model trace.

    Parameters
    ----------
    kind : str
    bds : sequence of BufferDescriptor
        The BDs offered, in order.
    trace : AddrgenTrace
        What the RTL must show (same BDs, ready and offer patterns).
    seed : int or None
        Printed with a mismatch so the run can be replayed.
    """

    block = "address generator"

    @property
    def beats(self) -> list[tuple[int, bool, bool]]:
        """The ``(address, zero, last)`` beats the RTL transferred."""
        return self._taken

    def check(self, cycle: int, i_ready: bool, o_valid: bool, address: int, zero: bool,
              last: bool) -> None:
        """Compare the values sampled at the edge that ends ``cycle``.

        Raises
        ------
        Mismatch
            On the first cycle where the RTL differs from the model.
        """
        t = self.trace
        if cycle < t.cycles and bool(i_ready) != bool(t.i_ready[cycle]):
            self._fail(cycle, f"i.ready={int(i_ready)}, model {int(t.i_ready[cycle])}", None)
        if self._check_valid(cycle, o_valid):
            self._check_payload(cycle, (int(address), bool(zero), bool(last)),
                                (int(t.address[cycle]), bool(t.zero[cycle]), bool(t.last[cycle])),
                                "beat (address, zero, last)")


class MM2SScoreboard(_Scoreboard):
    """Checks an MM2S channel's output stream, cycle by cycle, against the model trace.

    The same checks as :class:`AddrgenScoreboard` on the channel's ``o`` stream:
    ``o.valid`` on every cycle and, while valid, the word (``data``, ``last``).
    Parameters as :class:`AddrgenScoreboard`, with an :class:`MM2STrace`.
    """

    block = "MM2S channel"

    @property
    def words(self) -> list[tuple[int, bool]]:
        """The ``(data, last)`` words the RTL transferred."""
        return self._taken

    def check(self, cycle: int, o_valid: bool, data: int, last: bool) -> None:
        """Compare the values sampled at the edge that ends ``cycle`` (raises Mismatch)."""
        t = self.trace
        if self._check_valid(cycle, o_valid):
            self._check_payload(cycle, (int(data), bool(last)),
                                (int(t.data[cycle]), bool(t.last[cycle])), "word (data, last)")

    @staticmethod
    def _show(payload: tuple) -> str:
        data, last = payload
        return f"(0x{data:08X}, {last})"


class S2MMScoreboard(_Scoreboard):
    """Checks an S2MM channel, cycle by cycle, against the model trace.

    Every cycle: the BD input's ``ready``, the data input's ``ready`` and the write
    port's ``mem_we``; in a write cycle, ``mem_addr`` and ``mem_data``. Parameters as
    :class:`AddrgenScoreboard`, with an :class:`~aiedma.model.cycle.timing.S2MMTrace`.
    """

    block = "S2MM channel"

    def __init__(self, kind: str, bds: Sequence[BufferDescriptor], trace,
                 seed: int | None = None) -> None:
        super().__init__(kind, bds, trace, seed)
        self._joined = 0  # data words taken so far (by the model's count)

    @property
    def writes(self) -> list[tuple[int, int]]:
        """The ``(address, data)`` writes the RTL made, in order."""
        return self._taken

    def check(self, cycle: int, bd_ready: bool, i_ready: bool, we: bool, address: int,
              data: int) -> None:
        """Compare the values sampled at the edge that ends ``cycle`` (raises Mismatch)."""
        t = self.trace
        self._valid.append(bool(we))
        if cycle >= t.cycles:
            if we:
                self._fail(cycle, "mem_we is high after the model's last write", None)
            return
        # The word this cycle joins, if any: it names the BD and counters of a failure.
        word = self._joined if t.i_valid[cycle] and t.i_ready[cycle] else None
        if bool(bd_ready) != bool(t.bd_ready[cycle]):
            self._fail(cycle, f"bd.ready={int(bd_ready)}, model {int(t.bd_ready[cycle])}", None)
        if bool(i_ready) != bool(t.i_ready[cycle]):
            self._fail(cycle, f"i.ready={int(i_ready)}, model {int(t.i_ready[cycle])}", word)
        if word is not None:
            self._joined += 1
        if bool(we) != bool(t.we[cycle]):
            self._fail(cycle, f"mem_we={int(we)}, model {int(t.we[cycle])}",
                       self._write_word(cycle))
        if we:
            got, want = (int(address), int(data)), (int(t.address[cycle]), int(t.data[cycle]))
            if got != want:
                self._fail(cycle, f"write (address, data) = {self._show(got)}, model "
                           f"{self._show(want)}", self._write_word(cycle))
            self._taken.append(got)

    def _write_word(self, cycle: int) -> int | None:
        """The word whose write the model makes (or would make) in ``cycle``."""
        joined = cycle - S2MM_WRITE_LATENCY
        return self.trace.joins.index(joined) if joined in self.trace.joins else None

    @staticmethod
    def _show(payload: tuple) -> str:
        address, data = payload
        return f"({address}, 0x{data:08X})"

    def summary(self) -> RunSummary:
        """Figures of the run: BDs, words taken, cycles, and bubbles.

        A bubble is a cycle between the first and the last join in which a word was
        offered but no beat was ready for it.
        """
        t = self.trace
        cycles = min(len(self._valid), t.cycles)
        offered, joined = t.i_valid[:cycles], t.i_valid[:cycles] & t.i_ready[:cycles]
        shown = np.flatnonzero(joined)
        bubbles = 0
        if shown.size:
            span = slice(shown[0], shown[-1] + 1)
            bubbles = int(np.count_nonzero(offered[span] & ~t.i_ready[:cycles][span]))
        return RunSummary(bds=len(self.bds), words=int(np.count_nonzero(joined)),
                          cycles=cycles, bubbles=bubbles)
