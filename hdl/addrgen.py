"""The BD address generator: one BD in, one address beat per cycle out.

It implements docs/bd.md "Address generation", "Zero padding" and the iteration offset
for one DMA kind, under the cycle contract of :mod:`aiedma.model.cycle.contract` (latency,
ready rule, no bubble at wraps, padding runs or BD boundaries).

The structure is chosen for Fmax (the techniques of docs/style.md): no register-to-register
path holds more than one adder, and every path holds at most one carry chain and one
LUT, or two to three LUTs. o.ready (combinational, by the contract) reaches only clock
enables and ``i.ready``, never a next value:

* **Prepare slots.** A BD passes ``ADDRGEN_PREPARE_SLOTS`` (4) slots before it runs,
  and each hop does one level of the per-BD arithmetic. The iteration offset
  ``iteration_current * iteration_stepsize`` is the sum of one shifted copy of the
  step per set bit of ``iteration_current``, added pairwise, one tree level per hop,
  so no multiplier is inferred; the last slot holds ``start`` as a register. The
  padded spans, the position-0 flags and the *live level* (below) are prepared the
  same way. The slots move one BD per cycle, so BDs still follow each other without a
  bubble. ``room[s]`` ("some slot from ``s`` on is empty, the last one holds a BD of
  length 0, or R is idle") and ``room[s] | r_last`` are registers computed from next
  values, and a slot's registers take the slot before's values whenever the slot is
  ready (the valid bit says whether a BD came), so their many enables are one LUT,
  ``o.ready ? room_or_last[s] : room[s]``.
* **Rows instead of relative strides.** The next data word's address is
  ``row[k] + S[k]``, where ``k`` (``sel``, registered one beat ahead) is the lowest
  dimension whose data index is not at its last value and ``row[k]`` is the address
  of the current word with every index below ``k`` at zero; after the step, the rows
  up to ``k`` take the new address. No ``(W - 1) * S`` product is needed.
* **A fast step and registered slow candidates.** Dimensions of wrap 1 always sit at
  their last (only) data index, so ``sel`` is never below the *live level* ``L``, the
  lowest dimension whose wrap is not 1. A step at ``L`` is ``address + S[L]`` (both
  registers: the adder, then one LUT ``fast ? sum : other``, into the address
  register). A step at ``k > L`` takes ``ahead[k] = row[k] + S[k]`` registered in the
  previous cycle: row ``k`` has not changed since, because two data steps in a row at
  levels ``j >= k > L`` would need dimension ``L`` to wrap right after its index went
  to 0 (wrap 1), and the first data step of a BD is at ``L``. Only the address takes
  the sum. The rows take the address one cycle late (``row_due[k]``, a register, is
  their enable), and ``ahead[k]`` adds the stride to the address while row ``k`` is
  due, so it is still ``row[k] + S[k]`` of the previous cycle.
* **Wrap decisions one position ahead** (StanfordAHA lake's registered flags). Each
  dimension keeps its flags for the current beat (``data``, ``last_data``, ``wrap``)
  and for the next position (``*_soon``); the latter come from down-counters
  compared with small constants, so a step only chooses between registers. A
  register the running BD changes on a load or on a step takes
  ``r_more ? stepped : loaded`` (``r_more``, a register, tells which can happen),
  so the handshake is only in its enable; ``r_left == 2`` is a registered borrow.
* **Padding as an enlarged iteration domain** (Gemmini). Each dimension's position
  runs over ``before + wrap + after``; a beat is a zero word when any dimension is
  outside its data range. Zero words do not move the address: the data words of a
  padded BD come in the same order, at the same addresses, as without padding.

Addresses wrap modulo ``2**ADDRESS_BITS[kind]`` (**decision** in
:mod:`aiedma.model.cycle.contract`). Measured (ECP5 LFE5U-85F speed 6, nextpnr seeds 1-4, the
memory tile): 196-210 MHz. What limits it is no longer one loop but a spread of paths
of 4.8-5.2 ns, each the worst on some placement: the address loop itself (adder, one
LUT), ``ahead[k]`` (a LUT, then the adder), a dimension's counter (borrow, then the
``r_more``/wrap multiplexer), the next ``sel``/``at_live`` (the next ``last_data``
flags), the slow-path multiplexer ``other`` before the address, and prepare-slot
flags such as ``wrap_soon_init`` (a compare and an AND in one slot). abc shares logic
between cones (``is_data``, ``o.ready and r_last``), which can add a LUT level its
delay model does not see as critical; kept wires (``keep``) and registered terms
prevent it where it mattered.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Shape, Signal, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle.contract import ADDRESS_BITS, ADDRGEN_PREPARE_SLOTS
from .layouts import bd_layout, beat_layout, check_kind

__all__ = ["BDAddressGenerator"]

_SLOTS = 4
"""The prepare slots this implementation has (raw BD, first sums, second sums, start)."""

if ADDRGEN_PREPARE_SLOTS != _SLOTS:
    raise AssertionError(f"the contract has {ADDRGEN_PREPARE_SLOTS} prepare slots, "
                         f"the address generator {_SLOTS}")


class BDAddressGenerator(wiring.Component):
    """Generates the word addresses of BDs, one beat per cycle, for one DMA kind.

    Implements docs/bd.md "Address generation" (3 dimensions on tile and shim, 4 on the
    memory tile; wrap 0 never wraps; the outermost dimension is unbounded;
    ``buffer_length`` alone ends a BD), "Zero padding" (memory tile) and the iteration
    offset ``iteration_current * iteration_stepsize`` (the write-back of
    ``iteration_current`` is not this block's job). The cycle contract (latency, ready
    rule, BD boundaries, BDs of length 0) is stated in :mod:`aiedma.model.cycle.contract`.

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

        # --- R's handshake state, and the decisions of model/cycle/contract.py ------------------
        r_valid = Signal()
        r_last = Signal()          # R shows its BD's final beat
        r_more = Signal()          # R shows a beat that is not the final one
        r_left = Signal(length_shape)
        loadable = Signal()        # the last slot holds a BD of length > 0
        load_single = Signal()     # ... and of length 1
        go = Signal()              # R's registers may change: load, advance, or idle
        restart = Signal()         # go without a beat to advance to: R (re)loads
        r_valid_next = Mux(self.o.ready | ~r_valid, r_more | loadable, r_valid)
        slots = _Slots(m, self.i, ~r_valid, ~r_valid_next, r_last, self.o.ready)
        leave = slots.leave
        m.d.comb += [
            self.o.valid.eq(r_valid),
            go.eq(self.o.ready | ~r_valid),
            # go & ~r_more, written as one LUT of o.ready and two registers.
            restart.eq(Mux(self.o.ready, ~r_more, ~r_valid)),
        ]

        # --- slot 0 holds the BD as it came; slot 1: first sums, zero-free flags --------
        p = slots.bd
        ic, step = p.iteration_current, p.iteration_stepsize
        terms = [p.base_address] + [Mux(ic[b], step << b, 0) for b in range(len(ic))]
        level = [slots.stage(1, f"start{j}", _pair_sum(terms, j, width))
                 for j in range(0, len(terms), 2)]
        slots.stage(1, "length", p.buffer_length)
        slots.stage(1, "empty", p.buffer_length == 0)
        slots.stage(1, "single", p.buffer_length == 1)
        slots.stage(1, "below3", p.buffer_length < 3)
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
            slots.stage(1, f"d{k}_one", wrap == 1)
            # The flags of position 0, and "position 1 is the first data".
            slots.stage(1, f"d{k}_data_init", before == 0)
            slots.stage(1, f"d{k}_last_data_init", wraps & (before == 0) & (wrap == 1))
            slots.stage(1, f"d{k}_wrap_init", wraps & (before == 0) & (wrap == 1) & (after == 0))
            slots.stage(1, f"d{k}_enter_soon_init", before == 1)

        # --- slot 2: second sums, the flags that need the first ones ----------------------
        level = [slots.stage(2, f"start{j}", _pair_sum(level, j, width))
                 for j in range(0, len(level), 2)]
        for name in ("length", "empty", "single", "below3",
                     *(f"stride{k}" for k in range(n))):
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
        # The live level: the lowest dimension whose wrap is not 1 (a dimension of one
        # data index is always at its last one), and its stride.
        live: Value = Const(n - 1, range(n))
        live_stride: Value = s1[f"stride{n - 1}"]
        for k in reversed(wrapping):
            live = Mux(s1[f"d{k}_one"], live, k)
            live_stride = Mux(s1[f"d{k}_one"], live_stride, s1[f"stride{k}"])
        slots.stage(2, "live", live, unsigned(len(Value.cast(live))))
        slots.stage(2, "live_stride", live_stride, unsigned(width))

        # --- slot 3: the start address --------------------------------------------------------
        s2 = slots.regs[2]
        for name in list(s2):
            if not name.startswith("start"):
                slots.carry(3, name)
        level = [slots.stage(3, f"start{j}", _pair_sum(level, j, width))
                 for j in range(0, len(level), 2)]
        if len(level) > 1:
            raise AssertionError("the iteration offset needs more prepare slots")
        with m.If(slots.moves[_SLOTS - 1]):
            m.d.sync += [loadable.eq(~s2["empty"]), load_single.eq(s2["single"])]
        with m.Elif(leave):
            m.d.sync += [loadable.eq(0), load_single.eq(0)]

        # --- R: the running BD ---------------------------------------------------------------
        q = slots.regs[_SLOTS - 1]
        start = q["start0"]
        rows = [Signal(width, name="address")] + [Signal(width, name=f"row{k}")
                                                  for k in range(1, n)]
        address = rows[0]
        strides = [Signal(width, name=f"stride{k}") for k in range(n)]
        live_level = Signal(range(n))
        live_stride_r = Signal(width, name="live_stride")
        dims = [_Dimension(k, count_shape[k]) for k in wrapping]

        is_data = Signal()
        m.d.comb += [
            is_data.eq(_all(*(d.flag["data"] for d in dims)) if padded else 1),
            self.o.payload.address.eq(Mux(is_data, address, 0)),
            self.o.payload.zero.eq(~is_data),
            self.o.payload.last.eq(r_last),
        ]

        # `sel`, registered one beat ahead, names the lowest dimension not at its last
        # data position (the step's level). A step at the live level is `address +
        # stride`; a step at a level k above it takes `row[k] + S[k]` as registered
        # from the rows of the previous cycle, which row k still holds (see module doc).
        sel = Signal(range(n))
        ahead = [Signal(width, name=f"ahead{k}") for k in range(n)]
        # Row k takes the address one cycle late, on `row_due[k]` (registered: "the
        # last edge was a restart or a data step at level k or above"); until then the
        # address is row k's value, so ahead[k] adds the stride to it.
        row_due = [Signal(name=f"row{k}_due") for k in range(n)]
        m.d.sync += [ahead[k].eq(Mux(row_due[k], address, rows[k]) + strides[k])
                     for k in range(1, n)]
        m.d.comb += ahead[0].eq(ahead[n - 1])  # never chosen: the live level is fast
        slow: Value = ahead[n - 1]
        for j in reversed(range(1, n - 1)):
            slow = Mux(sel == j, ahead[j], slow)
        # `at_live` is `sel == live_level`, and `sel_ge[k]` is `sel >= k`, registered
        # with `sel` so that each is one register in the address's and rows' cones.
        at_live = Signal()
        sel_ge = [Signal(name=f"sel_ge{k}") for k in range(n)]
        # The address and the rows may change on every `go`; on a zero beat (and, for
        # row k, on a step below level k) they take their own value. `fast` and `other`
        # are kept apart (``keep``) so that the adder's output passes one LUT,
        # `fast ? sum : other`, before the address register.
        fast = Signal(attrs={"keep": 1})
        other = Signal(width, attrs={"keep": 1})
        m.d.comb += [
            fast.eq(r_more & at_live & is_data),
            other.eq(Mux(r_more, Mux(is_data, slow, address), start)),
        ]
        with m.If(go):
            m.d.sync += address.eq(Mux(fast, address + live_stride_r, other))
        # Row k takes the address after a restart or a data step at level k or above,
        # one cycle late, so the adder's output drives the address register alone and
        # a row's enable is a register.
        for k in range(1, n):
            m.d.sync += row_due[k].eq(Mux(self.o.ready, ~r_more | (is_data & sel_ge[k]),
                                          ~r_valid))
            with m.If(row_due[k]):
                m.d.sync += rows[k].eq(address)

        def enable(step: Value, name: str) -> Value:
            """``restart | (o.ready & r_more & step)`` for a register-only ``step``: one
            LUT of o.ready, r_valid and ``~r_more | step`` (a LUT kept on its own), so
            that an enable is two LUTs deep."""
            when_ready = Signal(name=f"{name}_when_ready", attrs={"keep": 1})
            m.d.comb += when_ready.eq(~r_more | step)
            return Mux(self.o.ready, when_ready, ~r_valid)

        def set_sel(value: Value, live: Value) -> list:
            return [sel.eq(value), at_live.eq(value == live),
                    *(sel_ge[k].eq(value >= k) for k in range(1, n))]

        def lowest_not_last(flags: list[Value]) -> Value:
            value: Value = Const(n - 1, range(n))
            for k in reversed(wrapping):
                value = Mux(~flags[k], k, value)
            return value

        def lowest_not_last_after_step() -> Value:
            """``sel`` after a step: the dimensions below the step's level wrap."""
            ripple: Value = Const(1)
            next_last: list[Value] = []
            for d in dims:
                next_last.append(Mux(ripple, d.next_last_data(), d.flag["last_data"]))
                ripple = ripple & d.flag["wrap"]
            return lowest_not_last(next_last)

        # R's registers change on a load (R free, so `r_more` is 0) or when a beat is
        # taken with more to come (`r_more` is 1): `r_more` picks the next value and
        # o.ready reaches only the clock enables. Without `r_more`, R takes the last
        # slot's values on every `go` (`restart`), whether the slot holds a BD or not:
        # what R holds while it is not valid is never used, and a load overwrites it.
        # `lt3` is r_left < 3, a register; its next value on a step, r_left < 4, is a
        # borrow: one carry chain, no LUT tree. While R has more beats, r_left >= 2, so
        # r_left == 2 (the next beat is the final one) is r_left < 3.
        lt3 = Signal()
        r_last_next = Mux(go, Mux(r_more, lt3, load_single), r_last)
        slots.finish(r_last_next)
        with m.If(go):
            m.d.sync += [
                r_valid.eq(r_more | loadable),
                r_last.eq(Mux(r_more, lt3, load_single)),
                r_more.eq(Mux(r_more, ~lt3, loadable & ~load_single)),
            ]
        with m.If(go):
            m.d.sync += [
                r_left.eq(Mux(r_more, r_left - 1, q["length"])),
                lt3.eq(Mux(r_more, (r_left - 4)[-1], q["below3"])),
                *set_sel(Mux(r_more, lowest_not_last_after_step(),
                             lowest_not_last([q[f"d{k}_last_data_init"] for k in wrapping])),
                         Mux(r_more, live_level, q["live"])),
            ]
        with m.If(restart):
            m.d.sync += [
                *(strides[k].eq(q[f"stride{k}"]) for k in range(n)),
                live_level.eq(q["live"]),
                live_stride_r.eq(q["live_stride"]),
            ]
        # A dimension steps when the ones below it wrap (`ripple`). Above dimension 1,
        # that AND is a register of its own, from the wrap flags' next values, so that
        # the enables do not share a LUT tree.
        ripple: Value = Const(1)
        wrap_next: list[Value] = []
        for d in dims:
            if d.k >= 2:
                both = Signal(name=f"d{d.k}_ripple")
                m.d.sync += both.eq(_all(*wrap_next))
                ripple = both
            wrap_next.append(d.update(m, q, restart, enable(ripple, f"d{d.k}"), r_more))
            ripple = ripple & d.flag["wrap"]
        return m


class _Slots:
    """The prepare slots: a valid bit each, registers by name, and their handshake.

    Slot 0 holds the BD as accepted (:attr:`bd`); slots 1 .. S-1 hold what
    :meth:`stage` puts in them. A BD moves on whenever the next slot is empty or
    empties in the same cycle; the last slot empties on ``leave``.
    """

    def __init__(self, m: Module, i: stream.Interface, idle: Value, idle_next: Value,
                 r_last: Value, o_ready: Value) -> None:
        self.m = m
        self.valid = [Signal(name=f"slot{s}_valid") for s in range(_SLOTS)]
        self.regs: list[dict[str, Signal]] = [{} for _ in range(_SLOTS)]
        self.last_empty = self.reg(_SLOTS - 1, "empty", 1)
        # ready[s] = not valid[s] or ready[s + 1], and the last slot is ready when it is
        # empty or leaves: when its BD is of length 0, R is idle (`idle`), or R's final
        # beat is taken. Flattened, ready[s] is `room[s] or (o_ready and r_last)`, where
        # room[s] is an OR of registers: it is kept as a register of its own (computed
        # from the next values of those registers), so that every ready and every move,
        # the enables of the slots' many registers, is one LUT from o.ready.
        ready = [Signal(name=f"slot{s}_ready") for s in range(_SLOTS)]
        room = [Signal(name=f"slot{s}_room", init=1) for s in range(_SLOTS)]
        m.d.comb += [ready[s].eq(room[s] | (o_ready & r_last)) for s in range(_SLOTS)]
        m.d.comb += i.ready.eq(ready[0])
        self.leave = Signal()
        m.d.comb += self.leave.eq(self.valid[-1] & ready[-1])
        # moves[s]: a BD enters slot s at this edge. The registers of slot s take the
        # slot before's values whenever slot s is ready, a BD coming or not (the valid
        # bit says which): their many enables are `o_ready ? room_or_last[s] :
        # room[s]`, one LUT of o_ready and two registers of this slot's own.
        self.moves = [i.valid & ready[0]] + [self.valid[s - 1] & ready[s]
                                            for s in range(1, _SLOTS)]
        room_or_last = [Signal(name=f"slot{s}_room_or_last", init=1) for s in range(_SLOTS)]
        self.capture = [Mux(o_ready, room_or_last[s], room[s]) for s in range(_SLOTS)]
        self._room_or_last = room_or_last
        valid_next = []
        for s in range(_SLOTS):
            leaves = self.leave if s == _SLOTS - 1 else self.moves[s + 1]
            valid_next.append(self.moves[s] | (self.valid[s] & ~leaves))
            m.d.sync += self.valid[s].eq(valid_next[s])
        self._room = (room, valid_next, idle_next)
        self.bd = Signal.like(i.payload, name="slot0_bd")
        with m.If(self.capture[0]):
            m.d.sync += self.bd.eq(i.payload)

    def finish(self, r_last_next: Value) -> None:
        """Registers room[s] and room[s] | r_last from the next values of what they are
        made of (call once the last slot's ``empty`` is staged and R's ``r_last`` is
        known)."""
        room, valid_next, idle_next = self._room
        s2_empty = self.regs[_SLOTS - 2]["empty"]
        last_empty_next = Mux(self.capture[-1], s2_empty, self.last_empty)
        room_next = [_any(*(~v for v in valid_next[s:]), last_empty_next, idle_next)
                     for s in range(_SLOTS)]
        self.m.d.sync += [room[s].eq(room_next[s]) for s in range(_SLOTS)]
        self.m.d.sync += [self._room_or_last[s].eq(room_next[s] | r_last_next)
                          for s in range(_SLOTS)]

    def reg(self, s: int, name: str, shape: Shape | int) -> Signal:
        """Slot ``s``'s register ``name`` (made on first use)."""
        if name not in self.regs[s]:
            self.regs[s][name] = Signal(shape, name=f"slot{s}_{name}")
        return self.regs[s][name]

    def stage(self, s: int, name: str, value: Value, shape: Shape | None = None) -> Signal:
        """Register ``value`` into slot ``s`` (``shape`` or the value's) as a BD enters."""
        value = Value.cast(value)
        reg = self.reg(s, name, shape if shape is not None else value.shape())
        with self.m.If(self.capture[s]):
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

    def update(self, m: Module, q: dict[str, Signal], load: Value, enable: Value,
               stepping: Value) -> Value:
        """On ``load``, takes the BD's constants from the last slot ``q``. On ``enable``,
        takes position 0 of the BD in ``q`` (``stepping`` low: R loads) or moves to the
        next position, or back to 0 at the end of the span (``stepping`` high: a step).

        ``stepping`` is a register (R's ``r_more``), so the next value does not depend
        on the handshake; the enable does. Returns the ``wrap`` flag's next value.
        """
        k, f, count = self.k, self.flag, self.counters
        with m.If(load):
            m.d.sync += self.never.eq(q[f"d{k}_never"])
            m.d.sync += [self.reload[name].eq(q[f"d{k}_{name}_at"]) for name in count]
            m.d.sync += [self.init[name].eq(q[f"d{k}_{name}_init"]) for name in self.FLAGS]
        wrap = f["wrap"]
        stepped = {
            "data": f["enter_soon"] | (f["data"] & ~f["last_data"]),
            "last_data": f["last_soon"],
            "wrap": f["wrap_soon"],
            "enter_soon": count["enter"] == 2,
            "last_soon": ~self.never & (count["last"] == 3),
            "wrap_soon": ~self.never & (count["wrap"] == 3),
        }
        with m.If(enable):
            m.d.sync += [
                counter.eq(Mux(stepping, Mux(wrap, self.reload[name], counter - 1),
                               q[f"d{k}_{name}_at"]))
                for name, counter in count.items()]
        following = {name: Mux(stepping, Mux(wrap, self.init[name], stepped[name]),
                               q[f"d{k}_{name}_init"])
                     for name in self.FLAGS}
        with m.If(enable):
            m.d.sync += [f[name].eq(following[name]) for name in self.FLAGS]
        return Mux(enable, following["wrap"], wrap)

    def next_last_data(self) -> Value:
        """``last_data`` after a step."""
        return Mux(self.flag["wrap"], self.init["last_data"], self.flag["last_soon"])


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


def _any(*flags: Value) -> Value:
    """The OR of one-bit values."""
    result = flags[0]
    for flag in flags[1:]:
        result = result | flag
    return result


def _all(*flags: Value) -> Value:
    """The AND of one-bit values."""
    result = flags[0]
    for flag in flags[1:]:
        result = result & flag
    return result
