"""The report of an RTL channel engine that differs from its model engine in some cycle.

One error and one message for both ways of checking an RTL engine inside the system
model: in lockstep (:mod:`.loop`) and by replay (:mod:`.loop_replay`).
"""

from __future__ import annotations

from ...model.cycle.timing import beat_counters
from ..common.scoreboard import Mismatch

__all__ = ["LoopMismatch", "loop_mismatch"]


class LoopMismatch(Mismatch):
    """An RTL channel and its model engine differ in some cycle.

    Attributes
    ----------
    cycle : int
    channel : str
    differences : dict of str to tuple
        Per differing signal, ``(RTL, model)``.
    """

    def __init__(self, message: str, cycle: int, channel: str,
                 differences: dict[str, tuple]) -> None:
        super().__init__(message)
        self.cycle, self.channel, self.differences = cycle, channel, differences


def loop_mismatch(channel: str, simulator: str, cycle: int, differences: dict[str, tuple],
                  run: tuple | None, position: int, channel_bd: int | None,
                  seed: int | None) -> LoopMismatch:
    """The :class:`LoopMismatch` of ``channel`` in ``cycle``.

    Parameters
    ----------
    channel, simulator : str
        The channel's name and what ran its RTL (named in the message).
    cycle : int
    differences : dict of str to tuple
        Per differing signal, ``(RTL, model)``.
    run : tuple or None
        The model engine's running BD, ``(addresses, zeros, bd_id, bd)``; its beat
        ``position`` and dimension counters are named.
    position : int
    channel_bd : int or None
        Named when no BD runs.
    seed : int, optional
        Named to replay the run.
    """
    where = ""
    if run is not None:
        bd_id, bd = run[2], run[3]
        where = (f"; BD {bd_id} beat {position} of {bd.buffer_length}, counters "
                 f"{beat_counters(bd, position)}")
    elif channel_bd is not None:
        where = f"; BD {channel_bd}"
    what = ", ".join(f"{name} RTL {rtl} model {model}"
                     for name, (rtl, model) in differences.items())
    replay = f"; replay with seed={seed}" if seed is not None else ""
    return LoopMismatch(f"{channel} ({simulator}), cycle {cycle}: {what}{where}{replay}", cycle,
                        channel, differences)
