"""The address generator's prepare slots: the per-BD arithmetic, one level per slot.

A BD passes the slots ``P[0] .. P[S-1]`` of the cycle contract
(:mod:`aiedma.model.cycle.contract`) before it runs. Each slot is one register record
(a :class:`~amaranth.lib.data.StructLayout`) and each hop does one level of the
arithmetic, so no path between slots holds more than one adder or a compare and a
LUT:

========  ==========================================================================
slot      holds
========  ==========================================================================
``P[0]``  the BD as it came (:func:`~.layouts.bd_layout`)
``P[1]``  first sums of the iteration offset; the padded spans ``before + wrap``;
          the flags of position 0 that need only the BD's fields
``P[2]``  second sums; the counters' values at position 0 (:func:`prepared_layout`);
          the ``*_soon`` flags of position 0; the live level and its stride
``P[3]``  the start address (the last sum); everything else carried
========  ==========================================================================

The iteration offset ``iteration_current * iteration_stepsize`` is the sum of one
shifted copy of the step per set bit of ``iteration_current``, added pairwise, one
tree level per hop, so no multiplier is inferred: 7 terms (base and 6 bits) take the
three levels of ``P[1] .. P[3]``, which is why there are :data:`PREPARE_SLOTS` (4).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Shape, Signal, Value, unsigned
from amaranth.lib import data, stream

from ..model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle.contract import ADDRESS_BITS, ADDRGEN_PREPARE_SLOTS
from .addrgen_dimension import SOON, count_shape, prepared_layout
from .layouts import bd_layout

__all__ = ["NEXT_IS_FINAL", "PREPARE_SLOTS", "PrepareSlots"]

PREPARE_SLOTS = 4
"""The prepare slots of this design: the BD as it came, then one per level of the
iteration offset's adder tree (``P[1] .. P[3]``). It is a constant of the design,
stated in the contract as :data:`~aiedma.model.cycle.contract.ADDRGEN_PREPARE_SLOTS`
(the timing model takes other values only to test the contract's rules)."""

if ADDRGEN_PREPARE_SLOTS != PREPARE_SLOTS:
    raise AssertionError(f"the contract has {ADDRGEN_PREPARE_SLOTS} prepare slots, "
                         f"the address generator {PREPARE_SLOTS}")

NEXT_IS_FINAL = 2
"""Beats left (the current one included) when the next beat is the BD's final one:
the running slot registers ``left <= NEXT_IS_FINAL`` so that ``last`` is a register."""


def _sum_counts(kind: str) -> list[int]:
    """Partial sums of the iteration offset held in slots 1 .. S-1 (one level each)."""
    counts = [1 + FIELD_INDEX[kind]["iteration_current"].value_width]
    for _ in range(1, PREPARE_SLOTS):
        counts.append((counts[-1] + 1) // 2)
    if counts[-1] != 1:
        raise AssertionError(f"{kind}: the iteration offset needs more prepare slots")
    return counts[1:]


def length_layout(kind: str) -> data.StructLayout:
    """``buffer_length`` and the facts R needs of it at a load, as registers."""
    return data.StructLayout({
        "length": unsigned(FIELD_INDEX[kind]["buffer_length"].value_width),
        "empty": 1,     # length 0: the BD is dropped in the last slot
        "single": 1,    # length 1: the first beat is the last
        "short": 1,     # length <= NEXT_IS_FINAL
    })


def spans_layout(kind: str, k: int) -> data.StructLayout:
    """Slot 1's record of dimension ``k``: its padding, ``before + wrap`` and the
    flags of position 0 that need no sum."""
    count = count_shape(kind, k)
    return data.StructLayout({
        "before": count, "after": count, "before_wrap": count,
        "never": 1,     # wrap 0: the dimension never wraps
        "one": 1,       # wrap 1: always at its last (only) data index
        "init": data.StructLayout({flag: 1 for flag in
                                   ("data", "last_data", "wrap", "enter_soon")}),
    })


def _stride_shape(kind: str) -> Shape:
    """A step size as an address increment: its actual value, at most address-wide."""
    index = FIELD_INDEX[kind]
    widest = max(index[f"d{k}_stepsize"].value_width for k in range(ADDRESS_DIMENSIONS[kind]))
    return unsigned(min(widest, ADDRESS_BITS[kind]))


def slot_layout(kind: str, s: int) -> data.StructLayout:
    """The record of prepare slot ``s`` (1 .. S-1); slot 0 holds the BD itself."""
    n = ADDRESS_DIMENSIONS[kind]
    width = ADDRESS_BITS[kind]
    dims = spans_layout if s == 1 else prepared_layout
    fields = {
        "sums": data.ArrayLayout(unsigned(width), _sum_counts(kind)[s - 1]),
        "length": length_layout(kind),
        "stride": data.ArrayLayout(_stride_shape(kind), n),
        "dim": data.StructLayout({f"d{k}": dims(kind, k) for k in range(n - 1)}),
    }
    if s > 1:
        # The live level: the lowest dimension whose wrap is not 1, and its stride.
        fields |= {"live": unsigned(len(Const(n - 1, range(n)))),
                   "live_stride": unsigned(width)}
    return data.StructLayout(fields)


class PrepareSlots:
    """The prepare slots of one address generator: records, valid bits, handshake.

    A BD moves on whenever the next slot is empty or empties in the same cycle; the
    last slot empties on :attr:`leave`. ``ready[s]`` is flattened to ``room[s] |
    (o.ready & r_last)``, where ``room[s]`` ("some slot from ``s`` on is empty, the
    last one holds a BD of length 0, or R is idle") and ``room[s] | r_last`` are
    registers computed from next values, so that every ready and every slot's enable
    is one LUT from ``o.ready``. A slot's record takes the slot before's whenever the
    slot is ready, a BD coming or not (its valid bit says which).

    Parameters
    ----------
    m : Module
    kind : {"tile", "memtile", "shim"}
    i : stream.Interface
        The generator's BD input; its ``ready`` is driven here.
    r_last : Value
        R shows its BD's final beat.
    o_ready : Value
        The generator's ``o.ready``.
    cut : Value
        A beat taken now ends R's BD early (finish on TLAST): R is free as on its
        final beat.

    Attributes
    ----------
    last : data.View
        The last slot's record (:func:`slot_layout`), what R loads.
    leave : Signal
        The last slot empties at this edge.
    enter_last : Value
        A BD enters the last slot at this edge.
    before_last : data.View
        The record it comes from.
    """

    def __init__(self, m: Module, kind: str, i: stream.Interface, r_last: Value,
                 o_ready: Value, cut: Value = 0) -> None:
        self.m = m
        self.kind = kind
        slots = range(PREPARE_SLOTS)
        self.valid = [Signal(name=f"slot{s}_valid") for s in slots]
        self.record = [Signal(bd_layout(kind), name="slot0_bd")] + [
            Signal(slot_layout(kind, s), name=f"slot{s}") for s in slots[1:]]
        self.last = self.record[-1]
        self.before_last = self.record[-2]

        ready = [Signal(name=f"slot{s}_ready") for s in slots]
        self.room = [Signal(name=f"slot{s}_room", init=1) for s in slots]
        self.room_or_last = [Signal(name=f"slot{s}_room_or_last", init=1) for s in slots]
        m.d.comb += [ready[s].eq(self.room[s] | (o_ready & r_last) | cut) for s in slots]
        m.d.comb += i.ready.eq(ready[0])
        self.leave = Signal()
        m.d.comb += self.leave.eq(self.valid[-1] & ready[-1])
        # moves[s]: a BD enters slot s at this edge.
        moves = [i.valid & ready[0]] + [self.valid[s - 1] & ready[s] for s in slots[1:]]
        self.enter_last = moves[-1]
        self.capture = [Mux(o_ready, self.room_or_last[s] | cut, self.room[s]) for s in slots]
        self.i_valid = i.valid
        m.d.sync += [self.valid[s].eq(v) for s, v in enumerate(self._valid_next(ready))]
        self._stage(0, i.payload)
        self._prepare()

    def _stage(self, s: int, value: Value) -> None:
        with self.m.If(self.capture[s]):
            self.m.d.sync += self.record[s].eq(value)

    def _prepare(self) -> None:
        """The records of slots 1 .. S-1, each from the slot before."""
        self._prepare_first()
        self._prepare_second()
        self._prepare_rest()

    def _prepare_first(self) -> None:
        """Slot 1: first sums, padded spans, the flags of position 0."""
        m, kind = self.m, self.kind
        n = ADDRESS_DIMENSIONS[kind]
        width = ADDRESS_BITS[kind]
        padded = HAS_PADDING[kind]
        bd, first = self.record[0], self.record[1]
        ic, step = bd.iteration_current, bd.iteration_stepsize
        terms = [bd.base_address] + [Mux(ic[b], step << b, 0) for b in range(len(ic))]
        length = bd.buffer_length
        with m.If(self.capture[1]):
            m.d.sync += [
                *_assign_array(first.sums, _pair_sums(terms, width)),
                first.length.length.eq(length),
                first.length.empty.eq(length == 0),
                first.length.single.eq(length == 1),
                first.length.short.eq(length < NEXT_IS_FINAL + 1),
                *_assign_array(first.stride, [bd[f"d{k}_stepsize"].as_unsigned()[:width]
                                              for k in range(n)]),
            ]
        for k in range(n - 1):
            wrap = bd[f"d{k}_wrap"]
            before = bd[f"d{k}_zero_before"] if padded else Const(0)
            after = bd[f"d{k}_zero_after"] if padded else Const(0)
            wraps = wrap != 0
            position0_last = wraps & (before == 0) & (wrap == 1)
            d = first.dim[f"d{k}"]
            with m.If(self.capture[1]):
                m.d.sync += [
                    d.before.eq(before),
                    d.after.eq(after),
                    d.before_wrap.eq(before + wrap),
                    d.never.eq(~wraps),
                    d.one.eq(wrap == 1),
                    d.init.data.eq(before == 0),
                    d.init.last_data.eq(position0_last),
                    d.init.wrap.eq(position0_last & (after == 0)),
                    d.init.enter_soon.eq(before == SOON["enter"]),
                ]

    def _prepare_second(self) -> None:
        """Slot 2: second sums, the counters at position 0, the live level."""
        m, n, width = self.m, ADDRESS_DIMENSIONS[self.kind], ADDRESS_BITS[self.kind]
        first, second = self.record[1], self.record[2]
        with m.If(self.capture[2]):
            m.d.sync += [*_assign_array(second.sums, _pair_sums(list(first.sums), width)),
                         second.length.eq(first.length),
                         second.stride.eq(first.stride)]
        for k in range(n - 1):
            d, p = first.dim[f"d{k}"], second.dim[f"d{k}"]
            # The wrap counter at position 0 is before_wrap + after == SOON["wrap"],
            # taken apart by the value of `after` so that no adder comes before the
            # compare (a == SOON needs before_wrap == 0: wrap 0, `never`).
            wrap_soon = Cat(*((d.before_wrap == SOON["wrap"] - a) & (d.after == a)
                              for a in range(SOON["wrap"]))).any()
            with m.If(self.capture[2]):
                m.d.sync += [
                    p.enter_at.eq(d.before),
                    p.last_at.eq(d.before_wrap),
                    p.wrap_at.eq(d.before_wrap + d.after),
                    p.never.eq(d.never),
                    *(p.init[flag].eq(d.init[flag])
                      for flag in ("data", "last_data", "wrap", "enter_soon")),
                    p.init.last_soon.eq(~d.never & (d.before_wrap == SOON["last"])),
                    p.init.wrap_soon.eq(~d.never & wrap_soon),
                ]
        live: Value = Const(n - 1, range(n))
        live_stride: Value = first.stride[n - 1]
        for k in reversed(range(n - 1)):
            one = first.dim[f"d{k}"].one
            live = Mux(one, live, k)
            live_stride = Mux(one, live_stride, first.stride[k])
        with m.If(self.capture[2]):
            m.d.sync += [second.live.eq(live), second.live_stride.eq(live_stride)]

    def _prepare_rest(self) -> None:
        """Slots 3 .. S-1: the remaining sums; everything else carried."""
        m, width = self.m, ADDRESS_BITS[self.kind]
        for s in range(3, PREPARE_SLOTS):
            before, record = self.record[s - 1], self.record[s]
            with m.If(self.capture[s]):
                m.d.sync += [
                    *_assign_array(record.sums, _pair_sums(list(before.sums), width)),
                    *(record[name].eq(before[name])
                      for name in ("length", "stride", "dim", "live", "live_stride")),
                ]

    def _valid_next(self, ready: list[Value]) -> list[Value]:
        """The slots' valid bits after the edge, with ``ready[s]`` each slot's ready."""
        moves = [self.i_valid & ready[0]] + [self.valid[s - 1] & ready[s]
                                             for s in range(1, PREPARE_SLOTS)]
        leaves = [*moves[1:], self.valid[-1] & ready[-1]]
        return [moves[s] | (self.valid[s] & ~leaves[s]) for s in range(PREPARE_SLOTS)]

    def _room_next(self, ready: list[Value], r_next: tuple[Value, Value]) -> list[tuple]:
        """``room[s]`` and ``room[s] | r_last`` after the edge, for each slot, with
        ``ready`` the slots' ready (a slot captures exactly when it is ready) and
        ``r_next`` R's ``(r_last, idle)`` after the edge."""
        valid_next = self._valid_next(ready)
        last_empty_next = Mux(ready[-1], self.before_last.length.empty,
                              self.last.length.empty)
        r_last_next, idle_next = r_next
        rooms = [Cat(*(~v for v in valid_next[s:]), last_empty_next, idle_next).any()
                 for s in range(PREPARE_SLOTS)]
        return [(room, room | r_last_next) for room in rooms]

    def finish(self, o_ready: Value, frees: Value, taken: tuple[Value, Value],
               held: tuple[Value, Value]) -> None:
        """Register ``room[s]`` and ``room[s] | r_last`` from the next values of what
        they are made of, worked out twice from registers: for a cycle in which R's
        beat is taken (o.ready high; ``frees``: that frees R, its BD's final beat or a
        cut; ``taken``: R's ``(r_last, idle)`` after the edge then) and for one in
        which it is not (``held``). o.ready only chooses (one LUT before the
        registers): it comes late, through the gate and the datapath's join, and its
        way through the slots' valid bits was the channel's worst path."""
        m = self.m
        take = self._room_next([room | frees for room in self.room], taken)
        hold = self._room_next(list(self.room), held)
        for s in range(PREPARE_SLOTS):
            m.d.sync += [self.room[s].eq(Mux(o_ready, take[s][0], hold[s][0])),
                         self.room_or_last[s].eq(Mux(o_ready, take[s][1], hold[s][1]))]


def _assign_array(array: data.View, values: list[Value]) -> list:
    """``array[j] = values[j]`` for every element."""
    return [array[j].eq(value) for j, value in enumerate(values)]


def _pair_sums(terms: list[Value], width: int) -> list[Value]:
    """One level of the adder tree: ``terms[j] + terms[j + 1]`` (or ``terms[j]``
    alone) modulo ``2**width``, for even ``j``."""
    return [Value.cast(terms[j] + terms[j + 1] if j + 1 < len(terms) else terms[j])[:width]
            for j in range(0, len(terms), 2)]
