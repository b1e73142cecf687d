"""mlir-aie's units to the hardware's, written once (docs/mlir.md "Units").

mlir-aie writes a transfer in **elements** of the buffer's type, sizes and strides
outermost first; a BD holds **32-bit words**, dimension 0 first. :func:`access_fields`
turns an ``aie.dma_bd`` or ``aiex.npu.dma_memcpy_nd`` access into the actual values a
:class:`~aiedma.model.bd.descriptor.BufferDescriptor` takes; :func:`writebd_fields` turns
the register values of ``aiex.npu.writebd`` (steps and the iteration wrap minus one)
into the same. Neither checks a field's range: the BD's constructor does, and names the
field. What they check is what only the notation can say: a size, offset or padding
that is not a whole number of words, an innermost stride the DMA cannot do, padding
where there is none, more dimensions than the DMA has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..arch.dtypes import WORD_BITS
from ..arch.kinds import DMA_KINDS
from ..bd.fields import FIELD_INDEX
from ..errors import BDError, field_error

__all__ = ["Access", "Converted", "access_fields", "iteration_fields", "writebd_fields"]


@dataclass(frozen=True)
class Access:
    """A transfer as mlir-aie writes it, in elements.

    Attributes
    ----------
    offset : int
        First element, from the buffer's element 0.
    length : int
        Elements the BD moves, padding included (``len`` of ``aie.dma_bd``).
    sizes, strides : tuple of int
        Outermost first; empty for a linear transfer. One more dimension than the
        DMA's address dimensions is the iteration (``aie.dma_bd``) or repeat
        (``dma_memcpy_nd``) dimension.
    pads : tuple of (int, int)
        ``(const_pad_before, const_pad_after)`` outermost first, one per dimension
        of ``sizes`` from the innermost out (the last pair pads dimension 0).
    """

    offset: int
    length: int
    sizes: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    pads: tuple[tuple[int, int], ...] = ()


@dataclass
class Converted:
    """BD fields (actual values) and what the notation broke on the way.

    Attributes
    ----------
    fields : dict of str to int
    repeat : int
        Times the task runs the BD (a dimension beyond the address dimensions with
        stride 0 is a repeat, not an iteration).
    problems : list of BDError
        Each names the notation's field (``sizes[3]``, ``pads[1].const_pad_before``),
        the value and the rule.
    """

    fields: dict[str, int] = field(default_factory=dict)
    repeat: int = 1
    problems: list[BDError] = field(default_factory=list)

    def problem(self, name: str, value: object, rule: str) -> None:
        self.problems.append(field_error(BDError, name, value, rule))


def _words(out: Converted, name: str, elements: int, bits: int, what: str) -> int:
    """``elements`` of ``bits`` each, in whole words (a problem if they are not)."""
    total = elements * bits
    if total % WORD_BITS:
        out.problem(name, elements, f"{what} of {elements} x {bits}-bit elements is "
                                    f"{total} bits, not a whole number of 32-bit words")
    return total // WORD_BITS


def access_fields(kind: str, bits: int, buffer_word: int, access: Access,
                  direction: str) -> Converted:
    """The BD fields of an access in elements.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    bits : int
        Bits of one element of the buffer.
    buffer_word : int
        Word address of the buffer's element 0 (as the BD's ``base_address`` counts).
    access : Access
    direction : {"mm2s", "s2mm"}
        Padding exists on a memory tile's MM2S only.
    """
    dma = DMA_KINDS[kind]
    out = Converted()
    out.fields["base_address"] = buffer_word + _words(out, "offset", access.offset, bits,
                                                      "the offset")
    out.fields["buffer_length"] = _words(out, "len", access.length, bits, "the length")
    sizes = access.sizes[::-1]        # dimension 0 first from here on
    strides = access.strides[::-1]
    dims = dma.address_dimensions
    if len(sizes) > dims + 1:
        out.problem("sizes", list(access.sizes),
                    f"a {kind} BD has {dims} address dimensions and an iteration; "
                    f"{len(sizes)} dimensions cannot be one BD")
        return out
    if len(sizes) == dims + 1:
        _iteration(out, bits, sizes[dims], strides[dims], len(sizes))
        sizes, strides = sizes[:dims], strides[:dims]
    linear = _contiguous(sizes, strides) and not access.pads
    if not linear:
        _address_dimensions(out, kind, bits, sizes, strides)
    if access.pads:
        _padding(out, kind, bits, access, direction)
    return out


def _contiguous(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Each dimension (0 first) steps over exactly the ones inside it, dimension 0 by 1:
    the words go in address order, so the BD is linear (mlir-aie writes such a transfer
    with no wraps, whatever its sizes, and a shim's 10-bit wrap never limits it)."""
    span = 1
    for size, stride in zip(sizes, strides, strict=True):
        if size != 1 and stride != span:
            return False
        span *= size
    return True


def iteration_fields(out: Converted, bits: int, size: int, stride: int, current: int) -> None:
    """A BD's ``iteration = #aie.bd_iteration<size, stride, current>`` (its stride in
    elements) as the iteration fields, into ``out``."""
    if size > 1:
        out.fields["iteration_wrap"] = size
        out.fields["iteration_stepsize"] = _words(out, "iteration.stride", stride, bits,
                                                  "the iteration stride")
    if current:
        out.fields["iteration_current"] = current


def _notation_index(count: int, k: int) -> int:
    """Position (outermost first, as written) of dimension ``k`` of ``count``."""
    return count - 1 - k


def _iteration(out: Converted, bits: int, size: int, stride: int, count: int) -> None:
    at = _notation_index(count, count - 1)
    if size < 1:
        out.problem(f"sizes[{at}]", size, "the iteration size must be at least 1")
    elif size > 1 and stride == 0:
        out.repeat = size     # mlir-aie: a zero outermost stride repeats the task
    elif size > 1:
        out.fields["iteration_wrap"] = size
        out.fields["iteration_stepsize"] = _words(out, f"strides[{at}]", stride, bits,
                                                  "the iteration stride")


def _address_dimensions(out: Converted, kind: str, bits: int, sizes: Sequence[int],
                        strides: Sequence[int]) -> None:
    count = len(sizes)
    dims = DMA_KINDS[kind].address_dimensions
    for k, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        at = _notation_index(count, k)
        if size < 1:
            out.problem(f"sizes[{at}]", size, "sizes must be at least 1")
            continue
        if k == 0:
            out.fields["d0_wrap"] = _words(out, f"sizes[{at}]", size, bits,
                                           "the innermost size")
            if bits == WORD_BITS:
                out.fields["d0_stepsize"] = stride
            elif stride != 1 and size > 1:
                out.problem(f"strides[{at}]", stride,
                            f"the innermost stride of {bits}-bit elements must be 1: the "
                            "DMA moves whole 32-bit words, so it cannot skip "
                            + ("parts of a word" if bits < WORD_BITS
                               else "within a 64-bit element"))
            continue
        if k < dims - 1:
            out.fields[f"d{k}_wrap"] = size
        if size > 1:
            out.fields[f"d{k}_stepsize"] = _words(out, f"strides[{at}]", stride, bits,
                                                  f"stride {at}")


def _padding(out: Converted, kind: str, bits: int, access: Access, direction: str) -> None:
    dma = DMA_KINDS[kind]
    if not dma.has_padding or direction != "mm2s":
        out.problem("pads", [list(p) for p in access.pads],
                    "zero padding exists only on a memory tile's MM2S channels, not on "
                    f"a {kind} {direction.upper()} channel")
        return
    count = len(access.pads)
    if count > len(access.sizes):
        out.problem("pads", count, f"more padded dimensions than the {len(access.sizes)} "
                                   "sizes and strides they pad")
        return
    for k in range(count):
        at = _notation_index(count, k)
        before, after = access.pads[at]
        if k >= dma.padded_dimensions:
            if before or after:
                out.problem(f"pads[{at}]", [before, after],
                            f"only dimensions 0-{dma.padded_dimensions - 1} can be padded")
            continue
        if k == 0:      # dimension 0 pads count words; outer ones count rows and planes
            before = _words(out, f"pads[{at}].const_pad_before", before, bits,
                            "innermost padding")
            after = _words(out, f"pads[{at}].const_pad_after", after, bits,
                           "innermost padding")
        out.fields[f"d{k}_zero_before"] = before
        out.fields[f"d{k}_zero_after"] = after


# --- aiex.npu.writebd ----------------------------------------------------------------------

_WRITEBD_AS_IS = {
    "buffer_length": "buffer_length", "d0_size": "d0_wrap", "d1_size": "d1_wrap",
    "d2_size": "d2_wrap", "iteration_current": "iteration_current",
    "next_bd": "next_bd", "use_next_bd": "use_next_bd", "valid_bd": "valid_bd",
    "lock_rel_val": "lock_rel_value", "lock_rel_id": "lock_rel_id",
    "lock_acq_enable": "lock_acq_enable", "lock_acq_val": "lock_acq_value",
    "lock_acq_id": "lock_acq_id", "enable_packet": "enable_packet",
    "out_of_order_id": "out_of_order_bd_id", "packet_id": "packet_id",
    "packet_type": "packet_type",
    **{f"d{k}_zero_{side}": f"d{k}_zero_{side}" for k in range(3)
       for side in ("before", "after")},
}
"""writebd attributes whose register value is the actual value."""

_WRITEBD_MINUS_ONE = {
    "d0_stride": "d0_stepsize", "d1_stride": "d1_stepsize", "d2_stride": "d2_stepsize",
    "iteration_size": "iteration_wrap", "iteration_stride": "iteration_stepsize",
}
"""writebd attributes stored minus one (docs/bd.md "Units and encodings")."""

_WRITEBD_SIGNED = ("lock_acq_val", "lock_rel_val")
"""writebd attributes that are a signed register field (7 bits, two's complement)."""

WRITEBD_PLACE = ("bd_id", "column", "row", "buffer_offset", "burst_length", "ddr_id")
"""writebd attributes that place the BD or its address rather than being a field
(``ddr_id``, older mlir-aie's: the host argument a shim BD's ``buffer_offset`` is in,
as ``address_patch``'s ``arg_idx``)."""


def writebd_fields(kind: str, attributes: Mapping[str, int]) -> Converted:
    """The BD fields of ``aiex.npu.writebd``'s register values.

    ``buffer_offset`` is a byte address (the shim's address patch adds the host
    buffer's address to it); ``burst_length`` 0 means the default. A size or padding
    given for a dimension the kind does not have is a problem when it is not 0.
    """
    out = Converted()
    for name, value in attributes.items():
        if name in _WRITEBD_SIGNED and 1 << 6 <= value < 1 << 7:
            value -= 1 << 7      # the register's 7 bits, as mlir-aie writes -1: 127
        if name in _WRITEBD_AS_IS:
            out.fields[_WRITEBD_AS_IS[name]] = value
        elif name in _WRITEBD_MINUS_ONE:
            out.fields[_WRITEBD_MINUS_ONE[name]] = value + 1
        elif name not in WRITEBD_PLACE:
            out.problem(name, value, "not an attribute of aiex.npu.writebd")
    offset = attributes.get("buffer_offset", 0)
    if offset % 4:
        out.problem("buffer_offset", offset, "a byte address must be a multiple of 4")
    out.fields["base_address"] = offset // 4
    burst = attributes.get("burst_length", 0)
    if kind == "shim" and burst:
        out.fields["burst_length"] = burst
    for name in list(out.fields):
        if out.fields[name] == 0 and name not in FIELD_INDEX[kind]:
            del out.fields[name]     # a register the kind lacks: 0 claims nothing
    return out
