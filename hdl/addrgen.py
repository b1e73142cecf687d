"""The BD address generator: one BD in, one address beat per cycle out.

It implements docs/bd.md "Address generation", "Zero padding" and the iteration offset
for one DMA kind, under the cycle contract of :mod:`aiedma.model.cycle.contract` (latency,
ready rule, no bubble at wraps, padding runs or BD boundaries).

The structure is chosen for Fmax (the techniques of docs/style.md): no register-to-register
path holds more than one adder, and every path holds at most one carry chain and one
LUT, or two to three LUTs. o.ready (combinational, by the contract) reaches only clock
enables and ``i.ready``, never a next value:

* **Prepare slots** (:mod:`.addrgen_prepare`). A BD passes
  :data:`~.addrgen_prepare.PREPARE_SLOTS` (4) slots before it runs, and each hop does
  one level of the per-BD arithmetic: the iteration offset as an adder tree (no
  multiplier), the padded spans, the position-0 flags and the *live level* (below);
  the last slot holds ``start`` as a register. The slots move one BD per cycle, so
  BDs still follow each other without a bubble, and every slot's enable is one LUT
  from ``o.ready`` (two registers, ``room`` and ``room_or_last``, per slot).
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
* **Wrap decisions one position ahead** (StanfordAHA lake's registered flags;
  :mod:`.addrgen_dimension`). Each dimension keeps its flags for the current beat
  (``data``, ``last_data``, ``wrap``) and for the next position (``*_soon``); the
  latter come from down-counters compared with small constants, so a step only
  chooses between registers. A
  register the running BD changes on a load or on a step takes
  ``r_more ? stepped : loaded`` (``r_more``, a register, tells which can happen),
  so the handshake is only in its enable; "the next beat is the final one" is a
  registered borrow.
* **Padding as an enlarged iteration domain** (Gemmini). Each dimension's position
  runs over ``before + wrap + after``; a beat is a zero word when any dimension is
  outside its data range. Zero words do not move the address: the data words of a
  padded BD come in the same order, at the same addresses, as without padding.

Addresses wrap modulo ``2**ADDRESS_BITS[kind]`` (**decision** in
:mod:`aiedma.model.cycle.contract`). No single loop limits the clock: the critical paths
are of about equal length, each the worst on some placement: the address loop itself
(adder, one LUT), ``ahead[k]`` (a LUT, then the adder), a dimension's counter (borrow,
then the ``r_more``/wrap multiplexer), the next ``sel``/``at_live`` (the next
``last_data`` flags), the slow-path multiplexer ``other`` before the address, and
prepare-slot flags such as ``wrap_soon_init`` (a compare and an AND in one slot). abc
shares logic between cones (``is_data``, ``o.ready and r_last``), which can add a LUT
level its delay model does not see as critical; kept wires (``keep``) and registered
terms prevent it. The measured clock rates are in docs/results.md (``make fpga``).
"""

from __future__ import annotations

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd.fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle.contract import ADDRESS_BITS
from .addrgen_dimension import Dimension
from .addrgen_prepare import NEXT_IS_FINAL, PrepareSlots
from .layouts import bd_layout, beat_layout, check_kind

__all__ = ["BDAddressGenerator"]


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
            "cut": In(1),
        })

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind = self.kind
        r = _Running.create(kind)
        cut = self.cut & self.o.ready & r.valid
        m.d.comb += [
            r.go.eq(self.o.ready | ~r.valid),
            # A cut beat is its BD's final one: R steps on only without one. ``step`` is
            # read only where R's registers change (under ``go``, or with o.ready high):
            # with o.ready, ``cut`` is ``self.cut`` (``more`` implies ``valid``), and
            # while R is idle ``more`` is 0. So o.ready stays out of every next value,
            # and the cut's word reaches them through this one AND.
            r.step.eq(r.more & ~self.cut),
            # go & ~more, written as one LUT of o.ready and two registers.
            r.restart.eq(Mux(self.o.ready, ~r.step, ~r.valid)),
        ]
        slots = PrepareSlots(m, kind, self.i, r_last=r.last, o_ready=self.o.ready, cut=cut)
        dims = [Dimension(kind, k) for k in range(ADDRESS_DIMENSIONS[kind] - 1)]
        is_data = _beat(m, self.o, r, dims, padded=HAS_PADDING[kind])
        taken, held = _handshake(m, r, slots)
        # R frees its slot when its beat is taken: a BD's final beat, or a cut.
        slots.finish(self.o.ready, r.last | (self.cut & r.valid), taken, held)
        level = _Level.create(kind)
        level.update(m, r, slots.last, dims)
        _address(m, kind, self.o, r, slots.last, level, is_data, cut)
        _positions(m, self.o.ready, r, slots.last, dims)
        return m


@dataclass(frozen=True)
class _Running:
    """R, the running slot: its handshake registers and the decisions made of them."""

    valid: Signal
    last: Signal        # R shows its BD's final beat
    more: Signal        # R shows a beat that is not the final one
    step: Signal        # more, and the word is not cut: R steps on (read under go)
    left: Signal        # beats left, the current one included
    next_final: Signal  # left <= NEXT_IS_FINAL: the next beat (if any) is the final one
    loadable: Signal    # the last slot holds a BD of length > 0
    load_single: Signal  # ... and of length 1
    go: Signal          # R's registers may change: load, advance, or idle
    restart: Signal     # go without a beat to advance to: R (re)loads

    @classmethod
    def create(cls, kind: str) -> _Running:
        length = unsigned(FIELD_INDEX[kind]["buffer_length"].value_width)
        return cls(valid=Signal(name="r_valid"), last=Signal(name="r_last"),
                   more=Signal(name="r_more"), step=Signal(name="r_step"),
                   left=Signal(length, name="r_left"),
                   next_final=Signal(name="r_next_final"), loadable=Signal(),
                   load_single=Signal(), go=Signal(), restart=Signal())


def _beat(m: Module, o: stream.Interface, r: _Running, dims: list[Dimension], *,
          padded: bool) -> Value:
    """Drive the output beat from R's registers; returns ``is_data`` (not a zero word)."""
    is_data = Signal()
    m.d.comb += [
        is_data.eq(Cat(*(d.flag["data"] for d in dims)).all() if padded else 1),
        o.valid.eq(r.valid),
        o.payload.zero.eq(~is_data),
        o.payload.last.eq(r.last),
    ]
    return is_data


def _handshake(m: Module, r: _Running, slots: PrepareSlots) -> tuple[tuple, tuple]:
    """R's handshake and beat count; returns R's ``(r_last, idle)`` after the edge,
    for a cycle in which its beat is taken (o.ready high) and for one in which it is
    not, each from registers and the cut's word.

    R's registers change on a load (R free, so ``more`` is 0) or when a beat is taken
    with more to come (``more`` is 1): ``more`` picks the next value and o.ready
    reaches only the clock enables. ``next_final``'s next value on a step, ``left - 1
    <= NEXT_IS_FINAL``, is a borrow: one carry chain, no LUT tree. While R has more
    beats, ``left > NEXT_IS_FINAL - 1``, so ``next_final`` means ``left ==
    NEXT_IS_FINAL``.
    """
    q = slots.last
    with m.If(slots.enter_last):
        m.d.sync += [r.loadable.eq(~slots.before_last.length.empty),
                     r.load_single.eq(slots.before_last.length.single)]
    with m.Elif(slots.leave):
        m.d.sync += [r.loadable.eq(0), r.load_single.eq(0)]
    last_next = Mux(r.step, r.next_final, r.load_single)
    with m.If(r.go):
        m.d.sync += [
            r.valid.eq(r.step | r.loadable),
            r.last.eq(last_next),
            r.more.eq(Mux(r.step, ~r.next_final, r.loadable & ~r.load_single)),
            r.left.eq(Mux(r.step, r.left - 1, q.length.length)),
            r.next_final.eq(Mux(r.step, (r.left - (NEXT_IS_FINAL + 2))[-1], q.length.short)),
        ]
    # Not taken: an idle R loads (``more`` is 0, so no step), a busy one holds.
    return ((last_next, ~(r.step | r.loadable)),
            (Mux(r.valid, r.last, r.load_single), ~(r.valid | r.loadable)))


@dataclass(frozen=True)
class _Level:
    """The step's level ``sel`` (the lowest dimension not at its last data index),
    registered one beat ahead, with ``at_live`` (``sel == live``) and ``at_least[k]``
    (``sel >= k``) registered beside it, so that each is one register in the cones of
    the address and the rows; ``live`` is the BD's live level."""

    sel: Signal
    at_live: Signal
    at_least: list[Signal]
    live: Signal

    @classmethod
    def create(cls, kind: str) -> _Level:
        n = ADDRESS_DIMENSIONS[kind]
        return cls(sel=Signal(range(n), name="sel"), at_live=Signal(name="at_live"),
                   at_least=[Signal(name=f"sel_ge{k}") for k in range(n)],
                   live=Signal(range(n), name="live_level"))

    def update(self, m: Module, r: _Running, q, dims: list[Dimension]) -> None:
        """On ``go``: the level of position 0 (a load) or of the position after the
        step (the dimensions below the step's level wrap)."""
        ripple: Value = Const(1)
        after_step: list[Value] = []
        for d in dims:
            after_step.append(Mux(ripple, d.next_last_data(), d.flag["last_data"]))
            ripple = ripple & d.flag["wrap"]
        at_load = [q.dim[f"d{d.k}"].init.last_data for d in dims]
        value = Mux(r.step, self._lowest_not_last(after_step), self._lowest_not_last(at_load))
        live = Mux(r.step, self.live, q.live)
        with m.If(r.go):
            m.d.sync += [self.sel.eq(value), self.at_live.eq(value == live),
                         *(self.at_least[k].eq(value >= k)
                           for k in range(1, len(self.at_least)))]
        with m.If(r.restart):
            m.d.sync += self.live.eq(q.live)

    def _lowest_not_last(self, last: list[Value]) -> Value:
        value: Value = Const(len(self.at_least) - 1, range(len(self.at_least)))
        for k in reversed(range(len(last))):
            value = Mux(~last[k], k, value)
        return value


def _address(m: Module, kind: str, o: stream.Interface, r: _Running, q, level: _Level,
             is_data: Value, cut: Value) -> None:
    """The address of the current data word, and the rows it steps from.

    ``sel``, registered one beat ahead, names the lowest dimension not at its last
    data position (the step's level). A step at the live level is ``address +
    stride``; a step at a level k above it takes ``ahead[k] = row[k] + S[k]`` as
    registered from the rows of the previous cycle, which row k still holds (see the
    module doc). Row k takes the address one cycle late, on ``row_due[k]``
    (registered: "the last edge was a restart or a data step at level k or above"),
    so the adder's output drives the address register alone and a row's enable is a
    register; until then the address is row k's value, so ``ahead[k]`` adds the
    stride to it.
    """


    n = ADDRESS_DIMENSIONS[kind]
    width = ADDRESS_BITS[kind]
    rows = [Signal(width, name="address")] + [Signal(width, name=f"row{k}")
                                              for k in range(1, n)]
    address = rows[0]
    m.d.comb += o.payload.address.eq(Mux(is_data, address, 0))
    strides = [Signal(width, name=f"stride{k}") for k in range(n)]
    live_stride = Signal(width, name="live_stride")
    # The strides load on every cycle R shows no beat with a step to come, a superset of
    # ``restart`` whose clock enable is registers alone (and a cut), not o.ready: while R
    # shows its final beat nothing reads them (no step), and they keep loading up to
    # the restart, so they hold the last slot's strides from then on, as at a restart.
    with m.If(~r.valid | ~r.more | cut):
        m.d.sync += [*(strides[k].eq(q.stride[k]) for k in range(n)),
                     live_stride.eq(q.live_stride)]

    # Level 0 never needs these: a step there is at the live level, the fast one.
    ahead = {k: Signal(width, name=f"ahead{k}") for k in range(1, n)}
    row_due = {k: Signal(name=f"row{k}_due") for k in range(1, n)}
    m.d.sync += [ahead[k].eq(Mux(row_due[k], address, rows[k]) + strides[k])
                 for k in range(1, n)]
    slow: Value = ahead[n - 1]
    for j in reversed(range(1, n - 1)):
        slow = Mux(level.sel == j, ahead[j], slow)
    # The address and the rows may change on every `go`; on a zero beat (and, for
    # row k, on a step below level k) they keep their value. `fast` and `other` are
    # kept apart (``keep``) so that the adder's output passes one LUT, `fast ? sum :
    # other`, before the address register.
    fast = Signal(attrs={"keep": 1})
    other = Signal(width, attrs={"keep": 1})
    m.d.comb += [
        fast.eq(r.step & level.at_live & is_data),
        other.eq(Mux(r.step, Mux(is_data, slow, address), q.sums[0])),
    ]
    with m.If(r.go):
        m.d.sync += address.eq(Mux(fast, address + live_stride, other))
    for k in range(1, n):
        m.d.sync += row_due[k].eq(Mux(o.ready, ~r.step | (is_data & level.at_least[k]),
                                      ~r.valid))
        with m.If(row_due[k]):
            m.d.sync += rows[k].eq(address)


def _positions(m: Module, o_ready: Value, r: _Running, q, dims: list[Dimension]) -> None:
    """Move the dimensions: each steps when the ones below it wrap (``ripple``).

    Above dimension 1 that AND is a register of its own, from the wrap flags' next
    values, so that the enables do not share a LUT tree. An enable is
    ``restart | (o.ready & more & ripple)``, written as one LUT of o.ready, R's
    valid and ``~more | ripple`` (a LUT kept on its own), so it is two LUTs deep.
    The AND's next value is worked out for o.ready high (each dimension moves on
    ``when_ready``) and low (they move only while R is idle), o.ready choosing, so
    it is one LUT from o.ready, not an enable, a flag's choice and the AND.
    """
    ripple: Value = Const(1)
    moved, whens = [], []    # each wrap flag after a move; its enable with o.ready high
    for d in dims:
        if d.k >= 2:
            both = Signal(name=f"d{d.k}_ripple")
            below = list(zip(whens, moved, dims[:d.k], strict=True))
            taken = Cat(*(Mux(w, f, e.flag["wrap"]) for w, f, e in below)).all()
            held = Cat(*(Mux(~r.valid, f, e.flag["wrap"]) for _, f, e in below)).all()
            m.d.sync += both.eq(Mux(o_ready, taken, held))
            ripple = both
        when_ready = Signal(name=f"d{d.k}_when_ready", attrs={"keep": 1})
        m.d.comb += when_ready.eq(~r.step | ripple)
        enable = Mux(o_ready, when_ready, ~r.valid)
        moved.append(d.update(m, q.dim[f"d{d.k}"], r.restart, enable, r.step))
        whens.append(when_ready)
        ripple = ripple & d.flag["wrap"]
