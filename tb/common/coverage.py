"""Functional coverage of address-generator runs: which corners the stimulus reached.

Bins (docs/style.md): dimensions in use, wrap sizes {0, 1, 2, max} per dimension,
simultaneous wraps, padding {0, 1, max} before and after per dimension (memory
tile), a stall on a wrap cycle, and a BD offered during a last beat. Bins are
counted from the BDs and the cycle trace of each run; since the scoreboard has
checked the RTL against that trace on every cycle, they are what the RTL saw.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ...model.cycle.timing import AddrgenTrace

__all__ = ["Coverage"]


class Coverage:
    """Coverage bins of one kind, filled run by run."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.hits: Counter[str] = Counter()
        self.bins = self._all_bins()

    def _all_bins(self) -> list[str]:
        n = ADDRESS_DIMENSIONS[self.kind]
        bins = [f"dimensions in use: {d}" for d in range(1, n + 1)]
        bins += [f"d{k}_wrap {v}" for k in range(n - 1) for v in ("0", "1", "2", "max")]
        bins += ["simultaneous wraps: 2", "simultaneous wraps: 3+" if n > 3 else None]
        if HAS_PADDING[self.kind]:
            bins += [f"d{k}_zero_{side} {v}" for k in range(n - 1) for side in ("before", "after")
                     for v in ("0", "1", "max")]
        bins += ["stall on a wrap cycle", "BD offered during a last beat"]
        return [b for b in bins if b]

    def add_run(self, bds: Sequence[BufferDescriptor], trace: AddrgenTrace) -> None:
        """Count the bins one checked run reached."""
        fields = FIELD_INDEX[self.kind]
        n = ADDRESS_DIMENSIONS[self.kind]
        wrapping_beats: list[np.ndarray] = []
        for bd in bds:
            f = bd.fields()
            for k in range(n - 1):
                wrap = f[f"d{k}_wrap"]
                label = "max" if wrap == fields[f"d{k}_wrap"].maximum else str(wrap)
                if label in ("0", "1", "2", "max"):
                    self.hits[f"d{k}_wrap {label}"] += 1
                if HAS_PADDING[self.kind]:
                    for side in ("before", "after"):
                        pad = f[f"d{k}_zero_{side}"]
                        top = fields[f"d{k}_zero_{side}"].maximum
                        label = "max" if pad == top else str(pad)
                        if label in ("0", "1", "max"):
                            self.hits[f"d{k}_zero_{side} {label}"] += 1
            if not bd.buffer_length:
                continue
            digits = bd.dimension_counters()
            # The highest dimension whose counter moves is the highest non-zero digit
            # of the last beat (counting only goes up).
            used = max((k for k, d in enumerate(digits) if d[-1]), default=0) + 1
            self.hits[f"dimensions in use: {used}"] += 1
            # A dimension wraps after a beat when its counter is 0 on the next beat and
            # was not before; count dimensions wrapping together per beat.
            wraps = sum(((d[1:] == 0) & (d[:-1] != 0)).astype(int) for d in digits[:-1]) \
                if len(digits) > 1 else np.zeros(max(bd.buffer_length - 1, 0), dtype=int)
            together = np.asarray(wraps)
            self.hits["simultaneous wraps: 2"] += int(np.count_nonzero(together == 2))
            self.hits["simultaneous wraps: 3+"] += int(np.count_nonzero(together >= 3))
            d0_wrap = np.zeros(bd.buffer_length, dtype=bool)
            if len(digits) > 1:
                d0_wrap[:-1] = (digits[0][1:] == 0) & (digits[0][:-1] != 0)
            wrapping_beats.append(d0_wrap)
        beat_wraps = np.concatenate(wrapping_beats) if wrapping_beats else np.zeros(0, bool)
        # Map cycles to beats: the j-th cycle with o.valid & o.ready took beat j; a
        # cycle with o.valid and not o.ready shows the beat taken next.
        shown = np.cumsum(trace.o_valid & trace.o_ready) - (trace.o_valid & trace.o_ready)
        stalled = trace.o_valid & ~trace.o_ready
        on_wrap = stalled & (shown < beat_wraps.size)
        on_wrap[on_wrap] = beat_wraps[shown[on_wrap]]
        self.hits["stall on a wrap cycle"] += int(np.count_nonzero(on_wrap))
        self.hits["BD offered during a last beat"] += int(
            np.count_nonzero(trace.i_valid & trace.o_valid & trace.last))

    def missed(self) -> list[str]:
        """Bins no run has reached."""
        return [b for b in self.bins if not self.hits[b]]

    def report(self) -> str:
        """One line: bins hit of bins, and the missed ones by name."""
        missed = self.missed()
        line = f"coverage {self.kind}: {len(self.bins) - len(missed)}/{len(self.bins)} bins"
        return line + (f" (missed: {', '.join(missed)})" if missed else "")
