"""The BD address generator: one BD in, one address beat per cycle out.

It implements bd.md "Address generation", "Zero padding" and the iteration offset
for one DMA kind, under the cycle contract of :mod:`aiedma.model.cycle` (latency,
ready rule, no bubble at wraps, padding runs or BD boundaries).

How the per-beat path stays short (the techniques of style.md):

* **Relative strides, computed at BD load.** Consecutive *data* words of a BD differ
  by ``rel[k] = S[k] - sum(j < k: (W[j] - 1) * S[j])``, where ``k`` is the lowest
  dimension whose data index is not at its last value. So the running address needs
  one adder and a stride multiplexer, nothing else (Snitch SSR).
* **Registered flags.** Every dimension keeps "at the end of the padded row"
  (``wrap``), "at the last data position" (``last_data``) and "inside the data range"
  (``data``) as registers, updated from comparisons against per-BD constants that are
  also computed at load. The next-beat path is priority-encode (flags), mux (stride),
  add (StanfordAHA lake).
* **Padding as an enlarged iteration domain.** Each dimension's counter runs over
  ``before + wrap + after`` positions; a beat is a zero word when any counter is
  outside its data range (Gemmini). Zero words do not move the address: the data
  words of a padded BD come in the same order, at the same addresses, as those of
  the same BD without padding, so the address only advances on data beats.

Counters are as wide as their fields allow (``before + wrap + after`` at the fields'
maxima), the length counter as wide as ``buffer_length``, and addresses wrap modulo
``2**ADDRESS_BITS[kind]`` (**decision** in :mod:`aiedma.model.cycle`).

The BD-load path (holding slot -> multipliers -> running slot) holds the products
``(W[j] - 1) * S[j]`` of the relative strides (two, three on the memory tile), their
running sum, and ``iteration_current * iteration_stepsize``; it is the longest path of
the block. Reaching 200 MHz on ECP5 would put one pipeline register in it
(``ADDRGEN_LATENCY`` 3), leaving the per-beat path untouched.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, Value, signed, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..model.bd_fields import ADDRESS_DIMENSIONS, FIELD_INDEX, HAS_PADDING
from ..model.cycle import ADDRESS_BITS
from .layouts import bd_layout, beat_layout, check_kind

__all__ = ["BDAddressGenerator"]


class _Dimension:
    """The enlarged counter of one wrapping dimension (D0..D2) and its registered flags.

    Parameters
    ----------
    kind : str
        The DMA kind (field widths come from its table).
    k : int
        The dimension.
    padded : bool
        Whether the kind has zero padding; without it ``data`` is constant 1 and
        ``last_data`` is ``wrap``.
    """

    def __init__(self, kind: str, k: int, padded: bool) -> None:
        index = FIELD_INDEX[kind]
        self.k = k
        self.padded = padded
        wrap_max = index[f"d{k}_wrap"].maximum
        pad_max = 0
        if padded:
            pad_max = index[f"d{k}_zero_before"].maximum + index[f"d{k}_zero_after"].maximum
        width = (wrap_max + pad_max).bit_length()
        # Constants may be -1 or -2 (e.g. "before - 1" with no padding): two extra bits
        # make them signed without ever equalling a counter value by accident.
        at = signed(width + 2)

        # State: the counter and its flags (all describe the *current* beat).
        self.count = Signal(width, name=f"d{k}_count")
        self.wrap = Signal(name=f"d{k}_wrap")
        # Per-BD constants, loaded with the BD.
        self.never_wraps = Signal(name=f"d{k}_never_wraps")
        self.wrap_at = Signal(at, name=f"d{k}_wrap_at")        # count whose successor wraps
        self.wrap_init = Signal(name=f"d{k}_wrap_init")        # wrap flag at count 0
        if padded:
            self.data = Signal(name=f"d{k}_data")
            self.last_data = Signal(name=f"d{k}_last_data")
            self.enter_at = Signal(at, name=f"d{k}_enter_at")  # successor is the first data
            self.last_at = Signal(at, name=f"d{k}_last_at")    # successor is the last data
            self.data_init = Signal(name=f"d{k}_data_init")
            self.last_init = Signal(name=f"d{k}_last_init")
        else:
            self.data = Const(1)
            self.last_data = self.wrap

    def load(self, m: Module, wrap: Value, before: Value, after: Value) -> None:
        """Registers the per-BD constants and the flags of count 0 (in ``m.d.sync``)."""
        wraps = wrap != 0
        span = before + wrap + after
        wrap_init = wraps & (span == 1)
        m.d.sync += [
            self.count.eq(0),
            self.never_wraps.eq(~wraps),
            self.wrap_at.eq(span - 2),
            self.wrap_init.eq(wrap_init),
            self.wrap.eq(wrap_init),
        ]
        if self.padded:
            data_init = before == 0
            last_init = wraps & (before + wrap == 1)
            m.d.sync += [
                self.enter_at.eq(before - 1),
                self.last_at.eq(before + wrap - 2),
                self.data_init.eq(data_init),
                self.last_init.eq(last_init),
                self.data.eq(data_init),
                self.last_data.eq(last_init),
            ]

    def step(self, m: Module) -> None:
        """Advances the counter by one position (wrapping to 0 at the end of the span)."""
        with m.If(self.wrap):
            m.d.sync += [self.count.eq(0), self.wrap.eq(self.wrap_init)]
            if self.padded:
                m.d.sync += [self.data.eq(self.data_init), self.last_data.eq(self.last_init)]
        with m.Else():
            # The flags of count + 1, from comparisons of count with per-BD constants.
            m.d.sync += [
                self.count.eq(self.count + 1),
                self.wrap.eq(~self.never_wraps & (self.count == self.wrap_at)),
            ]
            if self.padded:
                m.d.sync += [
                    self.data.eq((self.count == self.enter_at) | (self.data & ~self.last_data)),
                    self.last_data.eq(~self.never_wraps & (self.count == self.last_at)),
                ]


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
        n = ADDRESS_DIMENSIONS[kind]
        width = ADDRESS_BITS[kind]
        padded = HAS_PADDING[kind]

        # --- holding slot P: one accepted BD, kept as it came ---------------------------
        p_valid = Signal()
        p = Signal(bd_layout(kind))

        # --- running slot R: the beat on o and what the next beats need ----------------
        r_valid = Signal()
        r_left = Signal(FIELD_INDEX[kind]["buffer_length"].value_width)  # beats left, >= 1
        r_last = Signal()                                                # r_left == 1
        address = Signal(width)            # address of this beat, or of the next data beat
        stride = [Signal(width, name=f"stride{k}") for k in range(n)]
        dims = [_Dimension(kind, k, padded) for k in range(n - 1)]

        # --- the handshake of model/cycle.py, literally ----------------------------------
        take = Signal()
        free = Signal()
        leave = Signal()
        load = Signal()
        m.d.comb += [
            self.o.valid.eq(r_valid),
            take.eq(r_valid & self.o.ready),
            free.eq(~r_valid | (take & r_last)),
            leave.eq(p_valid & ((p.buffer_length == 0) | free)),
            load.eq(leave & (p.buffer_length != 0)),
            self.i.ready.eq(~p_valid | leave),
        ]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [p_valid.eq(1), p.eq(self.i.payload)]
        with m.Elif(leave):
            m.d.sync += p_valid.eq(0)

        # --- per-BD values, computed from P (the BD-load path) --------------------------
        start = Signal(width)
        m.d.comb += start.eq(p.base_address + p.iteration_current * p.iteration_stepsize)
        load_stride = [Signal(width, name=f"load_stride{k}") for k in range(n)]
        # span: sum over j < k of (W[j] - 1) * S[j], the address distance from the first
        # to the last data word of one dimension-k unit (wrap 0 makes it meaningless,
        # but then no stride above that dimension is ever selected).
        span: Value = Const(0, unsigned(width))
        for k in range(n):
            m.d.comb += load_stride[k].eq(p[f"d{k}_stepsize"] - span)
            if k < n - 1:
                term = Signal(width, name=f"load_span{k}")
                m.d.comb += term.eq(span + (p[f"d{k}_wrap"] - 1) * p[f"d{k}_stepsize"])
                span = term

        # --- the beat on o ---------------------------------------------------------------
        is_data = Signal()
        m.d.comb += is_data.eq(Const(1) if not padded else
                               _all(*(d.data for d in dims)))
        m.d.comb += [
            self.o.payload.address.eq(Mux(is_data, address, 0)),
            self.o.payload.zero.eq(~is_data),
            self.o.payload.last.eq(r_last),
        ]

        # Stride to the next data word: the lowest dimension not at its last data position.
        next_stride = Signal(width)
        with m.If(~dims[0].last_data):
            m.d.comb += next_stride.eq(stride[0])
        for k in range(1, n - 1):
            with m.Elif(~dims[k].last_data):
                m.d.comb += next_stride.eq(stride[k])
        with m.Else():
            m.d.comb += next_stride.eq(stride[n - 1])

        # --- next state -------------------------------------------------------------------
        with m.If(load):
            m.d.sync += [
                r_valid.eq(1),
                r_left.eq(p.buffer_length),
                r_last.eq(p.buffer_length == 1),
                address.eq(start),
                *(stride[k].eq(load_stride[k]) for k in range(n)),
            ]
            for d in dims:
                before = p[f"d{d.k}_zero_before"] if padded else Const(0)
                after = p[f"d{d.k}_zero_after"] if padded else Const(0)
                d.load(m, p[f"d{d.k}_wrap"], before, after)
        with m.Elif(take):
            with m.If(r_last):
                m.d.sync += r_valid.eq(0)
            with m.Else():
                m.d.sync += [r_left.eq(r_left - 1), r_last.eq(r_left == 2)]
                with m.If(is_data):
                    m.d.sync += address.eq(address + next_stride)
                # Ripple over the enlarged domain: dimension k steps when every lower
                # dimension is at the end of its span (registered flags, no adder chain).
                carry: Value = Const(1)
                for d in dims:
                    with m.If(carry):
                        d.step(m)
                    carry = carry & d.wrap
        return m


def _all(*flags: Value) -> Value:
    """The AND of one-bit values."""
    result = flags[0]
    for flag in flags[1:]:
        result = result & flag
    return result
