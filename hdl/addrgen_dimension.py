"""One wrapping dimension of the address generator: its position, as registered flags.

A dimension's position ``x`` runs over the padded span ``before + wrap + after``
(padding as an enlarged iteration domain: out of the data range means a zero word).
Three down-counters hold, at position ``x``, the distance to its three events::

    to_enter = before - x                  # 0 at the first data position
    to_last  = before + wrap - x           # 1 at the last data position
    to_wrap  = before + wrap + after - x   # 1 at the span's last position

Each counter equals :data:`SOON` ``[event]`` one position before its event; the
``*_soon`` flags are that fact, registered, so the flags of the next position are
ready before the step that needs them (the registered wrap flags of StanfordAHA
lake). A step computes the next ``*_soon`` from the counters as ``counter == SOON +
1`` (the counter counts down by one per step): a compare with a constant, no
subtraction before it.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Shape, Signal, Value, unsigned
from amaranth.lib import data

from ..model.bd.fields import FIELD_INDEX, HAS_PADDING

__all__ = ["EVENTS", "FLAGS", "SOON", "Dimension", "count_shape", "prepared_layout"]

EVENTS = ("enter", "last", "wrap")
"""The counters' events: the first data position, the last one, the span's end."""

SOON: dict[str, int] = {"enter": 1, "last": 2, "wrap": 2}
"""Each counter's value one position before its event (from the sums above: the
first data position is where ``to_enter`` reaches 0, the two others where theirs
reach 1)."""

FLAGS = ("data", "last_data", "wrap", "enter_soon", "last_soon", "wrap_soon")
"""Registered flags: of the current beat (``data``: inside the data range,
``last_data``: at the last data index, ``wrap``: at the span's last position), and
of the next position (``*_soon``)."""


def count_shape(kind: str, k: int) -> Shape:
    """Counters of dimension ``k``: one bit wider than its longest padded span, so a
    counter that has passed its event (and counts on down, modulo its width) cannot
    equal a :data:`SOON` value or ``SOON + 1`` again within the span."""
    index = FIELD_INDEX[kind]
    span = index[f"d{k}_wrap"].maximum
    if HAS_PADDING[kind]:
        span += index[f"d{k}_zero_before"].maximum + index[f"d{k}_zero_after"].maximum
    return unsigned(span.bit_length() + 1)


def prepared_layout(kind: str, k: int) -> data.StructLayout:
    """What the prepare slots compute for dimension ``k`` of a BD: the counters'
    values at position 0 (``*_at``, also reloaded at each wrap), ``never`` (wrap 0:
    the dimension never wraps) and the flags of position 0 (``init``)."""
    count = count_shape(kind, k)
    return data.StructLayout({
        **{f"{event}_at": count for event in EVENTS},
        "never": 1,
        "init": data.StructLayout({flag: 1 for flag in FLAGS}),
    })


class Dimension:
    """The registers of wrapping dimension ``k`` in the running slot.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    k : int
        The dimension (0 is the innermost).

    Attributes
    ----------
    flag : dict of str to Signal
        The :data:`FLAGS` of the current position.
    """

    def __init__(self, kind: str, k: int) -> None:
        self.k = k
        shape = count_shape(kind, k)
        self.to = {event: Signal(shape, name=f"d{k}_to_{event}") for event in EVENTS}
        self.prepared = Signal(prepared_layout(kind, k), name=f"d{k}_prepared")
        self.flag = {flag: Signal(name=f"d{k}_{flag}") for flag in FLAGS}

    def update(self, m: Module, q: data.View, load: Value, enable: Value,
               stepping: Value) -> Value:
        """On ``load``, keep the BD's constants ``q`` (a :func:`prepared_layout` view
        of the last prepare slot). On ``enable``, go to position 0 of the BD in ``q``
        (``stepping`` low: R loads) or to the next position, back to 0 after the
        span's last (``stepping`` high: a step).

        ``stepping`` is ``r_more`` and the cut's word, so the next value does not
        depend on o.ready; the enable does. Returns the ``wrap`` flag's value after a
        move (its next value where ``enable`` is high).
        """
        own, flag, to = self.prepared, self.flag, self.to
        with m.If(load):
            m.d.sync += own.eq(q)
        wrap = flag["wrap"]
        stepped = {
            "data": flag["enter_soon"] | (flag["data"] & ~flag["last_data"]),
            "last_data": flag["last_soon"],
            "wrap": flag["wrap_soon"],
            "enter_soon": to["enter"] == SOON["enter"] + 1,
            "last_soon": ~own.never & (to["last"] == SOON["last"] + 1),
            "wrap_soon": ~own.never & (to["wrap"] == SOON["wrap"] + 1),
        }
        with m.If(enable):
            m.d.sync += [
                counter.eq(Mux(stepping, Mux(wrap, own[f"{event}_at"], counter - 1),
                               q[f"{event}_at"]))
                for event, counter in to.items()]
        following = {name: Mux(stepping, Mux(wrap, own.init[name], stepped[name]),
                               q.init[name])
                     for name in FLAGS}
        with m.If(enable):
            m.d.sync += [flag[name].eq(following[name]) for name in FLAGS]
        return following["wrap"]

    def next_last_data(self) -> Value:
        """``last_data`` after a step."""
        return Mux(self.flag["wrap"], self.prepared.init.last_data, self.flag["last_soon"])
