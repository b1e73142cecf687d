"""What the RTL must show, computed from the golden model: beats, words, memory.

These turn a model :class:`~aiedma.model.bd.descriptor.BufferDescriptor` into the payloads the
RTL streams carry (:mod:`aiedma.hdl.layouts`), so testbenches compare RTL and model
with ``==`` on plain Python values.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.timing import bd_beats

__all__ = ["expected_beats", "mm2s_words", "s2mm_memory"]


def expected_beats(bds: Iterable[BufferDescriptor]) -> list[dict[str, int]]:
    """The address beats of a chain of BDs (each with its own ``iteration_current``).

    The beats are :func:`~aiedma.model.cycle.timing.bd_beats`, the one statement of a
    BD's beats as the RTL shows them, as payload dicts: a zero word has ``zero`` 1 and
    ``address`` 0; ``last`` marks each BD's final beat; addresses are reduced modulo
    the kind's address width.
    """
    beats: list[dict[str, int]] = []
    for bd in bds:
        address, zero, last = bd_beats(bd.kind, bd)
        beats += [{"address": a, "zero": z, "last": t} for a, z, t in
                  zip(address.tolist(), zero.astype(int).tolist(), last.astype(int).tolist(),
                      strict=True)]
    return beats


def mm2s_words(beats: Iterable[dict[str, int]], memory: Sequence[int]) -> list[dict[str, int]]:
    """The words MM2S sends for ``beats`` over ``memory`` (indexed modulo its size)."""
    size = len(memory)
    return [{"data": 0 if b["zero"] else int(memory[b["address"] % size]), "last": b["last"]}
            for b in beats]


def s2mm_memory(beats: Iterable[dict[str, int]], words: Iterable[int],
                memory: np.ndarray) -> np.ndarray:
    """``memory`` after S2MM stores ``words`` at ``beats`` (later writes win; zero beats
    write nothing; indexed modulo the memory's size)."""
    memory = np.array(memory, copy=True)
    for b, w in zip(beats, words, strict=True):
        if not b["zero"]:
            memory[b["address"] % len(memory)] = w
    return memory
