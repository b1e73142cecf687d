"""The one scoreboard: RTL against the cycle timing model, on every cycle.

Simulator-neutral (pure Python): the Amaranth testbench and the cocotb test both
feed it the values they sample at each rising edge. It compares the input's
``ready``, the output's ``valid`` and, while ``valid``, the payload with the
trace of :mod:`aiedma.model.timing`, and on the first difference raises
:class:`Mismatch` naming the cycle, the BD, its dimension counters and the seed
that replays the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model.bd import BufferDescriptor
from ..model.timing import AddrgenTrace, MM2STrace, beat_counters

__all__ = ["AddrgenScoreboard", "MM2SScoreboard", "Mismatch", "RunSummary"]


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


class AddrgenScoreboard:
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

    def __init__(self, kind: str, bds: Sequence[BufferDescriptor], trace: AddrgenTrace,
                 seed: int | None = None) -> None:
        self.kind, self.bds, self.trace, self.seed = kind, list(bds), trace, seed
        self.beats: list[tuple[int, bool, bool]] = []
        self._valid: list[bool] = []  # o.valid as the RTL showed it, per cycle
        # Which BD and beat position each transfer belongs to, from the model.
        lengths = [bd.buffer_length for bd in self.bds]
        self._owner = np.repeat(np.arange(len(lengths)), lengths)
        self._position = np.concatenate([np.arange(n) for n in lengths]) if lengths else []

    def check(self, cycle: int, i_ready: bool, o_valid: bool, address: int, zero: bool,
              last: bool) -> None:
        """Compare the values sampled at the edge that ends ``cycle``.

        Raises
        ------
        Mismatch
            On the first cycle where the RTL differs from the model.
        """
        t = self.trace
        self._valid.append(bool(o_valid))
        if cycle >= t.cycles:
            if o_valid:
                self._fail(cycle, "o.valid is high after the model's last beat", None)
            return
        if bool(i_ready) != bool(t.i_ready[cycle]):
            self._fail(cycle, f"i.ready={int(i_ready)}, model {int(t.i_ready[cycle])}", None)
        if bool(o_valid) != bool(t.o_valid[cycle]):
            self._fail(cycle, f"o.valid={int(o_valid)}, model {int(t.o_valid[cycle])}",
                       len(self.beats) if t.o_valid[cycle] else None)
        if not o_valid:
            return
        got = (int(address), bool(zero), bool(last))
        want = (int(t.address[cycle]), bool(t.zero[cycle]), bool(t.last[cycle]))
        if got != want:
            self._fail(cycle, f"beat (address, zero, last) = {got}, model {want}",
                       len(self.beats))
        if t.o_ready[cycle]:
            self.beats.append(got)

    def _fail(self, cycle: int, what: str, beat: int | None) -> None:
        where = ""
        if beat is not None and beat < len(self._owner):
            b, position = int(self._owner[beat]), int(self._position[beat])
            bd = self.bds[b]
            where = (f"; BD {b} of {len(self.bds)} ({bd!r}), beat {position} of "
                     f"{bd.buffer_length}, counters {beat_counters(bd, position)}")
        replay = f"; replay with seed={self.seed}" if self.seed is not None else ""
        raise Mismatch(f"{self.kind} address generator, cycle {cycle}: {what}{where}{replay}")

    def summary(self) -> RunSummary:
        """Figures of the run so far, from what the RTL showed.

        A bubble is a cycle between the first and the last beat in which the
        consumer was ready but no beat was valid.
        """
        valid = np.array(self._valid[: self.trace.cycles], dtype=bool)
        ready = self.trace.o_ready[: valid.size]
        shown = np.flatnonzero(valid)
        bubbles = 0
        if shown.size:
            span = slice(shown[0], shown[-1] + 1)
            bubbles = int(np.count_nonzero(ready[span] & ~valid[span]))
        return RunSummary(bds=len(self.bds), words=len(self.beats), cycles=valid.size,
                          bubbles=bubbles)


class MM2SScoreboard:
    """Checks an MM2S channel's output stream, cycle by cycle, against the model trace.

    The same checks as :class:`AddrgenScoreboard`, on the channel's ``o`` stream:
    ``o.valid`` on every cycle and, while valid, the word (``data``, ``last``).

    Parameters
    ----------
    kind : str
    bds : sequence of BufferDescriptor
        The BDs offered, in order (word ``j`` of the run belongs to the BD whose
        beats include beat ``j``: MM2S gives one word per beat).
    trace : MM2STrace
        What the RTL must show (same BDs, memory, ready and offer patterns).
    seed : int or None
        Printed with a mismatch so the run can be replayed.
    """

    def __init__(self, kind: str, bds: Sequence[BufferDescriptor], trace: MM2STrace,
                 seed: int | None = None) -> None:
        self.kind, self.bds, self.trace, self.seed = kind, list(bds), trace, seed
        self.words: list[tuple[int, bool]] = []
        self._valid: list[bool] = []  # o.valid as the RTL showed it, per cycle
        lengths = [bd.buffer_length for bd in self.bds]
        self._owner = np.repeat(np.arange(len(lengths)), lengths)
        self._position = np.concatenate([np.arange(n) for n in lengths]) if lengths else []

    def check(self, cycle: int, o_valid: bool, data: int, last: bool) -> None:
        """Compare the values sampled at the edge that ends ``cycle``.

        Raises
        ------
        Mismatch
            On the first cycle where the RTL differs from the model.
        """
        t = self.trace
        self._valid.append(bool(o_valid))
        if cycle >= t.cycles:
            if o_valid:
                self._fail(cycle, "o.valid is high after the model's last word", None)
            return
        if bool(o_valid) != bool(t.o_valid[cycle]):
            self._fail(cycle, f"o.valid={int(o_valid)}, model {int(t.o_valid[cycle])}",
                       len(self.words) if t.o_valid[cycle] else None)
        if not o_valid:
            return
        got = (int(data), bool(last))
        want = (int(t.data[cycle]), bool(t.last[cycle]))
        if got != want:
            self._fail(cycle, f"word (data, last) = ({got[0]:#010x}, {got[1]}), "
                              f"model ({want[0]:#010x}, {want[1]})", len(self.words))
        if t.o_ready[cycle]:
            self.words.append(got)

    def _fail(self, cycle: int, what: str, word: int | None) -> None:
        where = ""
        if word is not None and word < len(self._owner):
            b, position = int(self._owner[word]), int(self._position[word])
            bd = self.bds[b]
            where = (f"; word {word} of the run: BD {b} of {len(self.bds)} ({bd!r}), "
                     f"word {position} of {bd.buffer_length}, "
                     f"counters {beat_counters(bd, position)}")
        replay = f"; replay with seed={self.seed}" if self.seed is not None else ""
        raise Mismatch(f"{self.kind} MM2S channel, cycle {cycle}: {what}{where}{replay}")

    def summary(self) -> RunSummary:
        """Figures of the run so far, from what the RTL showed.

        A bubble is a cycle between the first and the last word in which the
        consumer was ready but no word was valid.
        """
        valid = np.array(self._valid[: self.trace.cycles], dtype=bool)
        ready = self.trace.o_ready[: valid.size]
        shown = np.flatnonzero(valid)
        bubbles = 0
        if shown.size:
            span = slice(shown[0], shown[-1] + 1)
            bubbles = int(np.count_nonzero(ready[span] & ~valid[span]))
        return RunSummary(bds=len(self.bds), words=len(self.words), cycles=valid.size,
                          bubbles=bubbles)
