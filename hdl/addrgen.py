"""The BD address generator: one BD in, one address beat per cycle out.

It implements bd.md "Address generation", "Zero padding" and the iteration offset
for one DMA kind, under the cycle contract of :mod:`aiedma.model.cycle` (latency,
ready rule, no bubble at wraps, padding runs or BD boundaries).

The structure is chosen for Fmax (the techniques of style.md, arranged so that no
register-to-register path holds more than one adder):

* **Prepare slots.** A BD passes ``ADDRGEN_PREPARE_SLOTS`` (3) slots before it runs,
  and each hop does one level of the per-BD arithmetic. The iteration offset
  ``iteration_current * iteration_stepsize`` is the sum of one shifted copy of the
  step per set bit of ``iteration_current``, added pairwise, one tree level per hop,
  so no multiplier is inferred; the padded span of each dimension is summed the same
  way. The slots move one BD per cycle, so BDs still follow each other without a
  bubble.
* **Rows instead of relative strides.** The next data word's address is
  ``row[k] + S[k]``, where ``k`` is the lowest dimension whose data index is not at
  its last value and ``row[k]`` is the address of the current word with every index
  below ``k`` at zero (``row[0]`` is the address itself); after the step, the rows up
  to ``k`` take the new address. No ``(W - 1) * S`` product is needed, at load or
  ever. All candidates ``row[k] + S[k]`` are added in parallel and a registered
  selector, computed one beat ahead, picks one: the per-beat path is add, then
  multiplex.
* **Wrap decisions one position ahead** (StanfordAHA lake's registered flags). Each
  dimension keeps its flags for the current beat (``data``, ``last_data``, ``wrap``)
  and for the next position (``*_soon``); the latter come from down-counters
  compared with small constants, so a step only chooses between registers.
* **Padding as an enlarged iteration domain** (Gemmini). Each dimension's position
  runs over ``before + wrap + after``; a beat is a zero word when any dimension is
  outside its data range. Zero words do not move the address: the data words of a
  padded BD come in the same order, at the same addresses, as without padding.

Addresses wrap modulo ``2**ADDRESS_BITS[kind]`` (**decision** in
:mod:`aiedma.model.cycle`). Measured with ``make fpga``: the per-beat loop (rows,
adder, selector, rows) is the critical path on ECP5.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Shape, Signal, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd_fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle import ADDRESS_BITS, ADDRGEN_PREPARE_SLOTS
from .layouts import bd_layout, beat_layout, check_kind

__all__ = ["BDAddressGenerator"]

_SLOTS = 3
"""The prepare slots this implementation has (raw BD, first sums, second sums)."""

if ADDRGEN_PREPARE_SLOTS != _SLOTS:
    raise AssertionError(f"the contract has {ADDRGEN_PREPARE_SLOTS} prepare slots, "
                         f"the address generator {_SLOTS}")


class BDAddressGenerator(wiring.Component):
    """Generates the word addresses of BDs, one beat per cycle, for one DMA kind.

    Implements bd.md "Address generation" (3 dimensions on tile and shim, 4 on the
    memory tile; wrap 0 never wraps; the outermost dimension is unbounded;
    ``buffer_length`` alone ends a BD), "Zero padding" (memory tile) and the iteration
    offset ``iteration_current * iteration_stepsize`` (the write-back of
    ``iteration_current`` is not this block's job). The cycle contract (latency, ready
    rule, BD boundaries, BDs of length 0) is stated in :mod:`aiedma.model.cycle`.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA kind; it fixes the BD layout, the dimensions and the address width.

    Attributes
    ----------
    i : In(stream.Signature(bd_layout(kind)))
        BDs (actual field values).
    o : Out(stream.Signature(beat_layout(kind)))
        Beats: ``address`` (0 on a zero word), ``zero`` (padding word), ``last``
        (the BD's final beat).
    """

    def __init__(self, kind: str) -> None:
        self.kind = check_kind(kind)
        super().__init__({
            "i": In(stream.Signature(bd_layout(kind))),
            "o": Out(stream.Signature(beat_layout(kind))),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind = self.kind
        index = FIELD_INDEX[kind]
        n = ADDRESS_DIMENSIONS[kind]
        wrapping = range(n - 1)
        width = ADDRESS_BITS[kind]
        padded = HAS_PADDING[kind]
        length_shape = unsigned(index["buffer_length"].value_width)
        count_shape = [_count_shape(kind, k) for k in wrapping]

        # --- R's handshake state, and the decisions of model/cycle.py ------------------
        r_valid = Signal()
        r_last = Signal()          # R shows its BD's final beat
        r_more = Signal()          # R shows a beat that is not the final one
        r_left = Signal(length_shape)
        loadable = Signal()        # the last slot holds a BD of length > 0
        free = Signal()
        leave = Signal()
        load = Signal()
        advance = Signal()         # a beat is taken and R moves on to the next one
        slots = _Slots(m, self.i, leave)
        m.d.comb += [
            self.o.valid.eq(r_valid),
            free.eq(~r_valid | (self.o.ready & r_last)),
            leave.eq(slots.valid[-1] & (slots.last_empty | free)),
            # loadable is `valid and length > 0` of the last slot, kept as a register
            # so that load is one gate from o.ready.
            load.eq(loadable & free),
            advance.eq(r_more & self.o.ready),
        ]

        # --- slot 0 holds the BD as it came; slot 1: first sums, zero-free flags --------
        p = slots.bd
        ic, step = p.iteration_current, p.iteration_stepsize
        terms = [p.base_address] + [Mux(ic[b], step << b, 0) for b in range(len(ic))]
        first = [slots.stage(1, f"start{j}", _pair_sum(terms, j, width))
                 for j in range(0, len(terms), 2)]
        slots.stage(1, "length", p.buffer_length)
        slots.stage(1, "empty", p.buffer_length == 0)
        slots.stage(1, "single", p.buffer_length == 1)
        for k in range(n):
            slots.stage(1, f"stride{k}", p[f"d{k}_stepsize"].as_unsigned()[:width])
        for k in wrapping:
            wrap = p[f"d{k}_wrap"]
            before = p[f"d{k}_zero_before"] if padded else Const(0)
            after = p[f"d{k}_zero_after"] if padded else Const(0)
            wraps = wrap != 0
            slots.stage(1, f"d{k}_before", before, count_shape[k])
            slots.stage(1, f"d{k}_after", after, count_shape[k])
            slots.stage(1, f"d{k}_before_wrap", before + wrap, count_shape[k])
            slots.stage(1, f"d{k}_never", ~wraps)
            # The flags of position 0, and "position 1 is the first data".
            slots.stage(1, f"d{k}_data_init", before == 0)
            slots.stage(1, f"d{k}_last_data_init", wraps & (before == 0) & (wrap == 1))
            slots.stage(1, f"d{k}_wrap_init", wraps & (before == 0) & (wrap == 1) & (after == 0))
            slots.stage(1, f"d{k}_enter_soon_init", before == 1)

        # --- slot 2: second sums, the flags that need the first ones ----------------------
        second = [slots.stage(2, f"start{j}", _pair_sum(first, j, width))
                  for j in range(0, len(first), 2)]
        if len(second) > 2:
            raise AssertionError("the iteration offset needs more prepare slots")
        for name in ("length", "empty", "single", *(f"stride{k}" for k in range(n))):
            slots.carry(2, name)
        s1 = slots.regs[1]
        for k in wrapping:
            before_wrap, after = s1[f"d{k}_before_wrap"], s1[f"d{k}_after"]
            never = s1[f"d{k}_never"]
            slots.stage(2, f"d{k}_enter_at", s1[f"d{k}_before"], count_shape[k])
            slots.stage(2, f"d{k}_last_at", before_wrap, count_shape[k])
            slots.stage(2, f"d{k}_wrap_at", before_wrap + after, count_shape[k])
            for name in ("never", "data_init", "last_data_init", "wrap_init",
                         "enter_soon_init"):
                slots.carry(2, f"d{k}_{name}")
            # Position 1 is the last data position, or the end of the span.
            slots.stage(2, f"d{k}_last_soon_init", ~never & (before_wrap == 2))
            slots.stage(2, f"d{k}_wrap_soon_init",
                        ~never & (((before_wrap == 2) & (after == 0))
                                  | ((before_wrap == 1) & (after == 1))))
        with m.If(slots.moves[2]):
            m.d.sync += loadable.eq(~s1["empty"])
        with m.Elif(leave):
            m.d.sync += loadable.eq(0)

        # --- R: the running BD ---------------------------------------------------------------
        q = slots.regs[2]
        start = Signal(width)
        m.d.comb += start.eq(second[0] + second[1] if len(second) > 1 else second[0])
        rows = [Signal(width, name="address")] + [Signal(width, name=f"row{k}")
                                                  for k in range(1, n)]
        address = rows[0]
        strides = [Signal(width, name=f"stride{k}") for k in range(n)]
        dims = [_Dimension(k, count_shape[k]) for k in wrapping]

        is_data = Signal()
        m.d.comb += [
            is_data.eq(_all(*(d.flag["data"] for d in dims)) if padded else 1),
            self.o.payload.address.eq(Mux(is_data, address, 0)),
            self.o.payload.zero.eq(~is_data),
            self.o.payload.last.eq(r_last),
        ]

        # Every candidate next address in parallel; `sel`, registered one beat ahead,
        # names the lowest dimension not at its last data position (the step's level).
        candidates = [Signal(width, name=f"candidate{k}") for k in range(n)]
        m.d.comb += [candidates[k].eq(rows[k] + strides[k]) for k in range(n)]
        sel = Signal(range(n))

        def chosen(lowest: int) -> Value:
            """The candidate ``sel`` names, knowing ``sel >= lowest``."""
            value: Value = candidates[n - 1]
            for j in reversed(range(lowest, n - 1)):
                value = Mux(sel == j, candidates[j], value)
            return value

        def lowest_not_last(flags: list[Value]) -> Value:
            value: Value = Const(n - 1, range(n))
            for k in reversed(wrapping):
                value = Mux(~flags[k], k, value)
            return value

        with m.If(load):
            m.d.sync += [
                r_valid.eq(1),
                r_left.eq(q["length"]),
                r_last.eq(q["single"]),
                r_more.eq(~q["single"]),
                *(row.eq(start) for row in rows),
                *(strides[k].eq(q[f"stride{k}"]) for k in range(n)),
                sel.eq(lowest_not_last([q[f"d{k}_last_data_init"] for k in wrapping])),
            ]
            for d in dims:
                d.load(m, q)
        with m.Elif(self.o.ready & r_last):
            m.d.sync += [r_valid.eq(0), r_last.eq(0)]
        # `advance` and `load` exclude each other (R is not free while it has beats to
        # give), so the per-beat updates need no term of the load decision.
        with m.If(advance):
            m.d.sync += [r_left.eq(r_left - 1), r_last.eq(r_left == 2), r_more.eq(r_left != 2)]
            with m.If(is_data):
                # Row k takes the new address when the step's level is k or above; only
                # candidates k.. can be it, so its multiplexer narrows with k.
                m.d.sync += address.eq(chosen(0))
                for k in range(1, n):
                    with m.If(sel >= k):
                        m.d.sync += rows[k].eq(chosen(k))
            ripple: Value = Const(1)
            next_last: list[Value] = []
            for d in dims:
                with m.If(ripple):
                    d.step(m)
                next_last.append(Mux(ripple, d.next_last_data(), d.flag["last_data"]))
                ripple = ripple & d.flag["wrap"]
            m.d.sync += sel.eq(lowest_not_last(next_last))
        return m


class _Slots:
    """The prepare slots: a valid bit each, registers by name, and their handshake.

    Slot 0 holds the BD as accepted (:attr:`bd`); slots 1 and 2 hold what
    :meth:`stage` puts in them. A BD moves on whenever the next slot is empty or
    empties in the same cycle; the last slot empties on ``leave``.
    """

    def __init__(self, m: Module, i: stream.Interface, leave: Value) -> None:
        self.m = m
        self.valid = [Signal(name=f"slot{s}_valid") for s in range(_SLOTS)]
        self.regs: list[dict[str, Signal]] = [{} for _ in range(_SLOTS)]
        ready = [Signal(name=f"slot{s}_ready") for s in range(_SLOTS)]
        m.d.comb += ready[-1].eq(~self.valid[-1] | leave)
        for s in reversed(range(_SLOTS - 1)):
            m.d.comb += ready[s].eq(~self.valid[s] | ready[s + 1])
        m.d.comb += i.ready.eq(ready[0])
        # moves[s]: a BD enters slot s at this edge.
        self.moves = [i.valid & ready[0]] + [self.valid[s] & ready[s + 1]
                                            for s in range(_SLOTS - 1)]
        for s in range(_SLOTS):
            leaves = leave if s == _SLOTS - 1 else self.moves[s + 1]
            with m.If(self.moves[s]):
                m.d.sync += self.valid[s].eq(1)
            with m.Elif(leaves):
                m.d.sync += self.valid[s].eq(0)
        self.bd = Signal.like(i.payload, name="slot0_bd")
        with m.If(self.moves[0]):
            m.d.sync += self.bd.eq(i.payload)
        self.last_empty = self.reg(_SLOTS - 1, "empty", 1)

    def reg(self, s: int, name: str, shape: Shape | int) -> Signal:
        """Slot ``s``'s register ``name`` (made on first use)."""
        if name not in self.regs[s]:
            self.regs[s][name] = Signal(shape, name=f"slot{s}_{name}")
        return self.regs[s][name]

    def stage(self, s: int, name: str, value: Value, shape: Shape | None = None) -> Signal:
        """Register ``value`` into slot ``s`` (``shape`` or the value's) as a BD enters."""
        value = Value.cast(value)
        reg = self.reg(s, name, shape if shape is not None else value.shape())
        with self.m.If(self.moves[s]):
            self.m.d.sync += reg.eq(value)
        return reg

    def carry(self, s: int, name: str) -> Signal:
        """Pass slot ``s - 1``'s register ``name`` on into slot ``s``."""
        previous = self.regs[s - 1][name]
        return self.stage(s, name, previous, previous.shape())


class _Dimension:
    """One wrapping dimension: the flags of the current beat and of the next position.

    Three down-counters hold, at position ``x``, ``before - x``, ``before + wrap - x``
    and ``before + wrap + after - x``; the next position is the first data position,
    the last data position or the end of the span when they equal 1, 2 and 2. The
    ``*_soon`` flags are those facts, registered; a step computes the next ones from
    the counters (equal to 2, 3 and 3), a comparison with a constant.
    """

    FLAGS = ("data", "last_data", "wrap", "enter_soon", "last_soon", "wrap_soon")

    def __init__(self, k: int, count_shape: Shape) -> None:
        self.k = k
        self.counters = {name: Signal(count_shape, name=f"d{k}_to_{name}")
                         for name in ("enter", "last", "wrap")}
        self.reload = {name: Signal(count_shape, name=f"d{k}_{name}_at")
                       for name in ("enter", "last", "wrap")}
        self.never = Signal(name=f"d{k}_never_wraps")
        self.init = {name: Signal(name=f"d{k}_{name}_init") for name in self.FLAGS}
        self.flag = {name: Signal(name=f"d{k}_{name}") for name in self.FLAGS}

    def load(self, m: Module, q: dict[str, Signal]) -> None:
        """The BD's constants and the state of position 0, from the last slot ``q``."""
        k = self.k
        m.d.sync += self.never.eq(q[f"d{k}_never"])
        for name, counter in self.counters.items():
            m.d.sync += [counter.eq(q[f"d{k}_{name}_at"]),
                         self.reload[name].eq(q[f"d{k}_{name}_at"])]
        for name in self.FLAGS:
            m.d.sync += [self.init[name].eq(q[f"d{k}_{name}_init"]),
                         self.flag[name].eq(q[f"d{k}_{name}_init"])]

    def next_last_data(self) -> Value:
        """``last_data`` after :meth:`step`."""
        return Mux(self.flag["wrap"], self.init["last_data"], self.flag["last_soon"])

    def step(self, m: Module) -> None:
        """Moves to the next position, or back to position 0 at the end of the span."""
        f, count = self.flag, self.counters
        with m.If(f["wrap"]):
            m.d.sync += [count[name].eq(self.reload[name]) for name in count]
            m.d.sync += [f[name].eq(self.init[name]) for name in self.FLAGS]
        with m.Else():
            m.d.sync += [count[name].eq(count[name] - 1) for name in count]
            m.d.sync += [
                f["data"].eq(f["enter_soon"] | (f["data"] & ~f["last_data"])),
                f["last_data"].eq(f["last_soon"]),
                f["wrap"].eq(f["wrap_soon"]),
                f["enter_soon"].eq(count["enter"] == 2),
                f["last_soon"].eq(~self.never & (count["last"] == 3)),
                f["wrap_soon"].eq(~self.never & (count["wrap"] == 3)),
            ]


def _count_shape(kind: str, k: int) -> Shape:
    """Counters of dimension ``k``: one bit wider than its longest padded span, so a
    counter that has passed its event cannot equal 1, 2 or 3 again within a span."""
    index = FIELD_INDEX[kind]
    span = index[f"d{k}_wrap"].maximum
    if HAS_PADDING[kind]:
        span += index[f"d{k}_zero_before"].maximum + index[f"d{k}_zero_after"].maximum
    return unsigned(span.bit_length() + 1)


def _pair_sum(terms: list[Value], j: int, width: int) -> Value:
    """``terms[j] + terms[j + 1]`` (or ``terms[j]`` alone) modulo ``2**width``."""
    total = terms[j] + terms[j + 1] if j + 1 < len(terms) else terms[j]
    return Value.cast(total)[:width]


def _all(*flags: Value) -> Value:
    """The AND of one-bit values."""
    result = flags[0]
    for flag in flags[1:]:
        result = result & flag
    return result
