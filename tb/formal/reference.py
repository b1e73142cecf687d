"""Formal harness: the address generator against a plain reference generator, for every BD.

Two BDs ``A`` and ``B`` are free constants (``AnyConst``), limited to small sizes by
assumptions (:class:`Bounds`) and to legal ones by the model's rules (padding needs
the dimensions it is counted in to wrap; ``iteration_current < iteration_wrap``). The
harness offers ``A`` then ``B`` back to back from cycle 0 and runs a *reference
generator* beside the RTL: nested counters written from the contract (docs/cycle.md,
docs/bd.md "Address generation" and "Zero padding"), the simplest correct thing and
nothing like the RTL's precomputed strides. Per dimension a digit counts its padded
range ``before + wrap + after``; the first dimension that never wraps (wrap 0, or the
outermost) counts on without wrapping; a beat is a zero word when a digit is in
padding, else its address is ``base + iteration_current * iteration_stepsize + sum of
(digit - before) * step``, modulo the kind's address width.

Properties, each a separate task of ``make formal`` (:func:`reference_tasks`):

* ``equivalence`` (``o.ready`` free): every beat that moves equals the reference's next
  beat (address, zero, last), and no beat is shown once both BDs are done;
* ``no bubble`` (``o.ready`` high, both BDs non-empty): no beat before cycle
  ``ADDRGEN_LATENCY``, then a beat in every cycle until the last beat of ``B``:
  across wraps, padding runs and the BD boundary;
* ``bounds`` (``o.ready`` free): every data beat's address lies in its BD's reach,
  ``start .. start + sum((wrap - 1) * step) + (length - 1) * step_open``;
* ``cover``: every padding edge (a beat in the before and in the after padding of
  each dimension), a dimension that never wraps, BDs of length 0 and 1, and the
  last beat of ``A`` followed in the next cycle by the first of ``B``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import (
    Assert,
    Assume,
    Cat,
    Const,
    Cover,
    Module,
    Mux,
    ResetSignal,
    Signal,
    Value,
)
from amaranth.lib import data, wiring

from ...hdl.addrgen import BDAddressGenerator
from ...hdl.layouts import bd_layout
from ...model.bd.descriptor import PADDING_NEEDS_WRAP, BufferDescriptor
from ...model.bd.fields import ADDRESS_DIMENSIONS, HAS_PADDING
from ...model.cycle.contract import ADDRESS_BITS, ADDRGEN_LATENCY, address_generation_fields
from ..block.harness import check_addrgen

__all__ = ["PROPERTIES", "AddrgenReferenceFormal", "Bounds", "counterexample",
           "replay_counterexample", "write_counterexample"]

PROPERTIES = ("equivalence", "no bubble", "bounds", "cover")
"""What :class:`AddrgenReferenceFormal` checks, one per task."""


@dataclass(frozen=True)
class Bounds:
    """How large the BDs a proof tries may be.

    Attributes
    ----------
    wrap : int
        Largest ``dK_wrap`` (0, never wrapping, is always allowed).
    padding : int
        Largest ``dK_zero_before`` / ``dK_zero_after`` (memory tile).
    length : int
        Largest ``buffer_length`` of each BD.
    iteration_wrap : int
        Largest ``iteration_wrap``.
    step : int or None
        Largest ``dK_stepsize`` and ``iteration_stepsize``; None leaves them free.
        Bit-level solvers prove sums of free 14- to 40-bit steps against the RTL's
        precomputed strides only slowly, so the default bounds them too.
    """

    wrap: int = 3
    padding: int = 3
    length: int = 8
    iteration_wrap: int = 3
    step: int | None = 8


class AddrgenReferenceFormal(wiring.Component):
    """The address generator of ``kind`` beside a reference generator, checking ``prop``.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    prop : str
        One of :data:`PROPERTIES`.
    bounds : Bounds, optional
    dut : wiring.Component, optional
        The block under proof (a mutant in the tests); ``BDAddressGenerator(kind)``
        if omitted.
    stalls : bool
        ``o.ready`` free in every cycle (True) or held high (False, and always for
        ``"no bubble"``). Held high, the solver need not weigh every stall pattern and
        reaches deeper.
    """

    def __init__(self, kind: str, prop: str, bounds: Bounds | None = None,
                 dut: wiring.Component | None = None, *, stalls: bool = True) -> None:
        if prop not in PROPERTIES:
            self._MustUse__silence = True   # refused, so never elaborated: no warning
            raise ValueError(f"prop={prop!r}: must be one of {', '.join(PROPERTIES)}")
        self.kind, self.prop = kind, prop
        self.stalls = stalls and prop != "no bubble"
        self.bounds = bounds or Bounds()
        self.dut = dut if dut is not None else BDAddressGenerator(kind)
        super().__init__({})

    # -- the BDs --

    def _constrain(self, m: Module, bd: data.View) -> None:
        """Assume ``bd`` legal and within the bounds."""
        kind, b = self.kind, self.bounds
        n = ADDRESS_DIMENSIONS[kind]
        for field in address_generation_fields(kind):   # the model's range of each field
            value = getattr(bd, field.name)
            m.d.comb += Assume((value >= field.minimum) & (value <= field.maximum))
        m.d.comb += Assume(bd.buffer_length <= b.length)
        m.d.comb += Assume(bd.iteration_wrap <= b.iteration_wrap)
        m.d.comb += Assume(bd.iteration_current < bd.iteration_wrap)
        for k in range(n - 1):
            m.d.comb += Assume(getattr(bd, f"d{k}_wrap") <= b.wrap)
        if b.step is not None:
            for name in (*(f"d{k}_stepsize" for k in range(n)), "iteration_stepsize"):
                m.d.comb += Assume(getattr(bd, name) <= b.step)
        if HAS_PADDING[kind]:
            for k in range(n - 1):
                for side in ("before", "after"):
                    m.d.comb += Assume(getattr(bd, f"d{k}_zero_{side}") <= b.padding)
            for wrap, forbidden in PADDING_NEEDS_WRAP:
                if hasattr(bd, wrap):
                    for name in forbidden:
                        m.d.comb += Assume((getattr(bd, wrap) != 0) | (getattr(bd, name) == 0))

    def _padding(self, bd: data.View, k: int, side: str):
        if HAS_PADDING[self.kind] and k < ADDRESS_DIMENSIONS[self.kind] - 1:
            return getattr(bd, f"d{k}_zero_{side}")
        return Const(0, 1)

    # -- the harness --

    def elaborate(self, platform: object) -> Module:
        m = Module()
        kind, prop = self.kind, self.prop
        n = ADDRESS_DIMENSIONS[kind]
        m.submodules.dut = dut = self.dut
        layout = bd_layout(kind)
        # Named, so a counterexample's VCD shows them (see :func:`counterexample`).
        bd_a = data.View(layout, Signal(layout.size, name="bd_a"))
        bd_b = data.View(layout, Signal(layout.size, name="bd_b"))
        m.d.comb += [bd_a.as_value().eq(AnyConst(layout.size)),
                     bd_b.as_value().eq(AnyConst(layout.size)),
                     Assume(~ResetSignal())]  # registers start at their init values
        for bd in (bd_a, bd_b):
            self._constrain(m, bd)
            if prop == "no bubble":
                m.d.comb += Assume(bd.buffer_length >= 1)

        # Offer A, then B, back to back from cycle 0.
        offered = Signal(2)
        m.d.comb += [dut.i.valid.eq(offered < 2),
                     dut.i.payload.eq(Mux(offered == 0, bd_a.as_value(), bd_b.as_value()))]
        with m.If(dut.i.valid & dut.i.ready):
            m.d.sync += offered.eq(offered + 1)
        ready = Signal(name="ready")
        m.d.comb += [ready.eq(AnySeq(1) if self.stalls else 1), dut.o.ready.eq(ready)]

        # The reference: which BD (0 A, 1 B, 2 done), the beat position, the digits.
        which = Signal(2)
        cur = Signal(2)   # which, past the empty BDs
        m.d.comb += cur.eq(which)
        with m.If((which == 0) & (bd_a.buffer_length == 0)):
            m.d.comb += cur.eq(Mux(bd_b.buffer_length == 0, 2, 1))
        with m.Elif((which == 1) & (bd_b.buffer_length == 0)):
            m.d.comb += cur.eq(2)
        bd = data.View(layout, Signal(layout.size))
        m.d.comb += bd.as_value().eq(Mux(cur == 0, bd_a.as_value(), bd_b.as_value()))
        width = max(self.bounds.length, 1).bit_length() + 1
        position = Signal(width)
        digits = [Signal(width, name=f"digit{k}") for k in range(n)]
        # Addresses wrap modulo the kind's address width, so every sum is taken at that
        # width (a negative padding offset is its two's complement): narrow words keep
        # the solver fast.
        wide = ADDRESS_BITS[kind]
        running = [Signal(wide, name=f"running{k}") for k in range(n)]

        # Dimension k wraps when every dimension up to it has a wrap that is not 0;
        # the first that does not is the open one (it counts on).
        wraps = []
        for k in range(n - 1):
            wraps.append(getattr(bd, f"d{k}_wrap") != 0
                         if not wraps else wraps[-1] & (getattr(bd, f"d{k}_wrap") != 0))
        wraps.append(Const(0, 1))   # the outermost never wraps
        opened = [Const(1, 1)] + [wraps[k - 1] for k in range(1, n)]  # it moves at all

        # Running offsets instead of digit * step products (adds only: the solver bit-blasts
        # every multiplier): offset[k] is (digit - before) * step of dimension k.
        offsets = [Signal(wide, name=f"offset{k}") for k in range(n)]
        zero = Signal()
        address = Signal(wide)
        reach = Signal(wide)
        start = Signal(wide)
        limit = max(self.bounds.wrap, self.bounds.padding, self.bounds.iteration_wrap,
                    self.bounds.length)
        pad_terms, reach_terms, first_offsets = [], [], []
        for k in range(n):
            before = self._padding(bd, k, "before")
            step = getattr(bd, f"d{k}_stepsize")
            d = digits[k]
            in_data = d >= before
            if k < n - 1:
                wrap = getattr(bd, f"d{k}_wrap")
                in_data = in_data & (~wraps[k] | (d < before + wrap))
                reach_terms.append(Mux(wraps[k], _times(wrap - 1, step, self.bounds.wrap), 0))
            # The open dimension reaches as far as the BD's length allows.
            is_open = opened[k] & ~wraps[k]
            reach_terms.append(Mux(is_open, _times(bd.buffer_length - 1, step,
                                                   self.bounds.length), 0))
            pad_terms.append(~in_data & opened[k])
            first_offsets.append(-_times(before, step, self.bounds.padding))
        m.d.comb += [
            zero.eq(Cat(*pad_terms).any()),
            start.eq(bd.base_address
                     + _times(bd.iteration_current, bd.iteration_stepsize, limit)),
            address.eq(start + sum(offsets)),
            reach.eq(sum(reach_terms)),
        ]
        last = position == bd.buffer_length - 1
        beat = dut.o.payload
        moved = dut.o.valid & dut.o.ready
        # A BD's first beat has every digit 0: offsets -before * step. ``fresh`` marks the
        # cycles before its first beat moved, when the offsets are taken from the BD.
        fresh = Signal(init=1)
        for k in range(n):
            with m.If(fresh):
                m.d.comb += offsets[k].eq(first_offsets[k])
            with m.Else():
                m.d.comb += offsets[k].eq(running[k])
        with m.If(moved & (cur < 2)):
            with m.If(last):
                m.d.sync += [which.eq(cur + 1), position.eq(0), fresh.eq(1),
                             *(d.eq(0) for d in digits)]
            with m.Else():
                m.d.sync += [position.eq(position + 1), fresh.eq(0)]
                carry = Const(1, 1)
                for k in range(n):
                    radix = (self._padding(bd, k, "before") + self._padding(bd, k, "after")
                             + (getattr(bd, f"d{k}_wrap") if k < n - 1 else 0))
                    wrap_here = wraps[k] & (digits[k] + 1 == radix)
                    step = getattr(bd, f"d{k}_stepsize")
                    with m.If(carry):
                        m.d.sync += [digits[k].eq(Mux(wrap_here, 0, digits[k] + 1)),
                                     running[k].eq(Mux(wrap_here, first_offsets[k],
                                                       offsets[k] + step))]
                    with m.Else():
                        m.d.sync += running[k].eq(offsets[k])
                    carry = carry & wrap_here

        bits = ADDRESS_BITS[kind]
        want = Mux(zero, 0, address[:bits])
        if prop == "equivalence":
            m.d.comb += Assert(~dut.o.valid | (cur < 2))   # no beat past the last BD's
            with m.If(moved):
                m.d.comb += [Assert(beat.zero == zero), Assert(beat.last == last),
                             Assert(beat.address == want)]
        elif prop == "bounds":
            with m.If(moved & (cur < 2) & ~beat.zero):
                m.d.comb += Assert((beat.address - start[:bits])[:bits] <= reach)
        elif prop == "no bubble":
            cycle = Signal(range(ADDRGEN_LATENCY + 1))
            with m.If(cycle < ADDRGEN_LATENCY):
                m.d.sync += cycle.eq(cycle + 1)
                m.d.comb += Assert(~dut.o.valid)
            with m.Elif(cur < 2):
                m.d.comb += Assert(dut.o.valid)
        else:
            self._covers(m, bd_a, bd_b, moved, cur, last, zero, digits, n)
        return m

    def _covers(self, m: Module, bd_a, bd_b, moved, cur, last, zero, digits, n) -> None:
        """Cover each case the proofs must not miss, so they are not vacuous."""
        bd = data.View(bd_layout(self.kind), Signal(bd_layout(self.kind).size))
        m.d.comb += bd.as_value().eq(Mux(cur == 0, bd_a.as_value(), bd_b.as_value()))
        if HAS_PADDING[self.kind]:
            for k in range(n - 1):
                before, after = self._padding(bd, k, "before"), self._padding(bd, k, "after")
                wrap = getattr(bd, f"d{k}_wrap")
                m.d.comb += Cover(moved & zero & (digits[k] < before))
                m.d.comb += Cover(moved & zero & (wrap != 0) & (digits[k] >= before + wrap)
                                  & (after != 0))
        m.d.comb += Cover(moved & ~zero & (bd.d0_wrap == 0) & (digits[0] >= 2))
        m.d.comb += Cover(moved & (cur == 1) & (bd_a.buffer_length == 0))
        m.d.comb += Cover(moved & last & (cur == 0) & (bd_a.buffer_length == 1))
        ended_a = Signal()
        m.d.sync += ended_a.eq(moved & last & (cur == 0))
        m.d.comb += Cover(ended_a & moved & (cur == 1))


def _times(count: Value, step: Value, largest: int) -> Value:
    """``count * step`` for a count of at most ``largest``, as a choice of sums (no multiplier)."""
    result = Const(0, 1)
    for i in range(largest, 0, -1):
        result = Mux(count == i, step * i, result)
    return result


# -- counterexamples --

def _vcd_values(path: Path, names: Sequence[str]) -> dict[str, list[int]]:
    """Each named top-level signal's value in every step of a sby trace (a small VCD reader).

    yosys-smtbmc writes its step number as the VCD variable ``smt_step``; entry ``t``
    of a list is the signal's value in step (cycle) ``t``.
    """
    ids: dict[str, str] = {}
    step_id = None
    depth = 0
    lines = path.read_text().splitlines()
    header_end = next((i for i, line in enumerate(lines) if line.startswith("$enddefinitions")),
                      len(lines))
    for line in lines[:header_end]:
        words = line.split()
        if not words:
            continue
        if words[0] == "$scope":
            depth += 1
        elif words[0] == "$upscope":
            depth -= 1
        elif words[0] == "$var" and words[4] == "smt_step":
            step_id = words[3]
        elif words[0] == "$var" and depth == 1 and words[4] in names:
            ids.setdefault(words[3], words[4])
    missing = set(names) - set(ids.values())
    if missing or step_id is None:
        raise ValueError(f"{path}: no {', '.join(sorted(missing) or ['smt_step'])} in the trace")
    current = dict.fromkeys(names, 0)
    values: dict[str, list[int]] = {name: [] for name in names}
    step = -1
    for line in lines[header_end + 1:]:
        if line.startswith("b"):
            bits, ident = line[1:].split()
            value = int(bits.replace("x", "0").replace("z", "0"), 2)
        elif line[:1] in ("0", "1") and len(line) > 1:
            value, ident = int(line[0]), line[1:]
        else:
            continue
        if ident == step_id and value != step:
            if step >= 0:
                for name in names:
                    values[name].append(current[name])
            step = value
        elif ident in ids:
            current[ids[ident]] = value
    for name in names:
        values[name].append(current[name])
    return values


def counterexample(vcd: Path, kind: str) -> dict:
    """The BDs and ``o.ready`` of a failed proof's trace, as a replayable JSON document.

    Returns
    -------
    dict
        ``{"kind", "bds": [A, B] (BD dictionaries, :meth:`BufferDescriptor.to_dict`),
        "ready": [0/1 per cycle]}``; :func:`replay_counterexample` runs it on a simulator.
    """
    layout = bd_layout(kind)
    values = _vcd_values(vcd, ("bd_a", "bd_b", "ready"))
    bds = []
    for name in ("bd_a", "bd_b"):
        raw = values[name][0]
        fields = {}
        for field_name, member in layout:
            width = member.width
            value = (raw >> member.offset) & ((1 << width) - 1)
            if member.shape.signed and value >> (width - 1):
                value -= 1 << width
            fields[field_name] = value
        bds.append({"kind": kind, **fields})
    return {"kind": kind, "bds": bds, "ready": values["ready"]}


def write_counterexample(vcd: Path, kind: str, path: Path) -> dict:
    """Write :func:`counterexample` of ``vcd`` to ``path`` as JSON; returns it."""
    found = counterexample(vcd, kind)
    path.write_text(json.dumps(found, indent=1) + "\n")
    return found


def replay_counterexample(path: Path, simulator: str = "amaranth", dut=None):
    """Run a counterexample's BDs through the address generator, checked every cycle.

    ``o.ready`` follows the trace's pattern, then stays high. Raises the scoreboard's
    :class:`~aiedma.tb.common.scoreboard.Mismatch` if the RTL and the model disagree; returns
    the run's :class:`~aiedma.tb.block.harness.RunResult` otherwise. ``dut`` runs a block of your
    own (the failing mutant, say) on Amaranth's simulator instead of the generator.
    """
    found = json.loads(Path(path).read_text())
    bds = [BufferDescriptor.from_dict(bd) for bd in found["bds"]]
    ready = [bool(r) for r in found["ready"]] or [True]
    return check_addrgen(found["kind"], bds, ready=ready, simulator=simulator, dut=dut)
