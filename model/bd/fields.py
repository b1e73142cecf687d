"""The buffer-descriptor register table: the one place the BD format is written down.

Every other layer derives from this table: :mod:`.bd` encodes and decodes BDs with
it, the Amaranth RTL builds its payload layouts from it (name, width of the actual
value, signedness), and ``docs/bd_registers.md`` is rendered from it
(``python -m aiedma.model.bd.fields``), so the register format cannot drift.

The layouts are those of docs/bd.md "Field layouts"; the per-kind resources are those of
docs/bd.md "Resources". A field is a name, one or more register slices and an encoding;
its range of *actual* values and its default follow from the slices and the
encoding. Reserved bits are every bit no slice covers, computed, never hand-written.

Decisions (docs/bd.md is silent):

* **decision**: a field split over several slices (the shim ``base_address``) lists
  its slices least significant first: ``w1[31:2]`` holds word-address bits 29:0 and
  ``w2[15:0]`` holds bits 45:30.
* **decision**: ``base_address`` is checked against its register width only (14, 19
  and 46 bits of word address). Whether an address hits mapped memory (for example
  the memory tile's 19-bit field reaches past the east neighbour) is the memory
  layer's business, as it is for every address a BD generates.
* **decision**: two fields are narrower than their registers because the hardware
  has fewer resources than the bits can name: memory-tile lock IDs are 0..191
  (west, own, east; 8-bit fields) and memory-tile ``next_bd`` is 0..47 (6-bit field).
* **decision**: an encoded ``burst_length`` of 3 has no meaning in docs/bd.md; it is not
  a value of the field, so decoding it is an error.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from ..arch.kinds import BD_REGISTER_STRIDE, DMA_KINDS, KINDS

__all__ = [
    "ADDRESS_DIMENSIONS",
    "BD_COUNT",
    "BD_REGISTER_BASE",
    "BD_REGISTER_STRIDE",
    "BURST_LENGTHS",
    "FIELDS",
    "FIELD_INDEX",
    "HAS_PADDING",
    "KINDS",
    "KIND_TITLES",
    "LOCK_IDS",
    "MEMTILE_BD_HALF",
    "RESERVED",
    "WORDS",
    "Encoding",
    "Field",
    "Kind",
    "Slice",
    "render_markdown",
]

Kind = Literal["tile", "memtile", "shim"]

# --- Resources: read from the one description of the kinds (model/arch/kinds.py) ---
# These names are kept because many modules import them from here; each is a view of
# DMA_KINDS (KINDS and BD_REGISTER_STRIDE are the arch module's own objects).

KIND_TITLES: dict[str, str] = {name: k.title for name, k in DMA_KINDS.items()}

BD_COUNT: dict[str, int] = {name: k.bd_count for name, k in DMA_KINDS.items()}
"""Buffer descriptors per DMA."""

MEMTILE_BD_HALF = len(DMA_KINDS["memtile"].bd_half(0))
"""Memory-tile BDs 0-23 serve channels 0/2/4, BDs 24-47 channels 1/3/5
(the rule itself: :meth:`~aiedma.model.arch.kinds.DmaKind.channel_bds`)."""

LOCK_IDS: dict[str, range] = {name: k.lock_ids for name, k in DMA_KINDS.items()}
"""Lock IDs a BD may name (memory tile: 0-63 west, 64-127 own, 128-191 east)."""

ADDRESS_DIMENSIONS: dict[str, int] = {name: k.address_dimensions for name, k in DMA_KINDS.items()}
"""Address dimensions (D0..D2 or D0..D3), not counting the iteration dimension."""

HAS_PADDING: dict[str, bool] = {name: k.has_padding for name, k in DMA_KINDS.items()}
"""Only the memory tile has zero-padding fields (used by MM2S only)."""

BD_REGISTER_BASE: dict[str, int] = {name: k.bd_register_base for name, k in DMA_KINDS.items()}
"""BD ``n`` of a kind starts at ``BD_REGISTER_BASE[kind] + BD_REGISTER_STRIDE * n``."""

WORDS: dict[str, int] = {name: k.words for name, k in DMA_KINDS.items()}
"""32-bit words per BD."""

BURST_LENGTHS: tuple[int, ...] = (64, 128, 256)
"""Shim AXI burst lengths in bytes; the register holds their index (0, 1, 2)."""


# --- The table's building blocks ----------------------------------------------------


class Encoding(enum.Enum):
    """How a field's actual value is stored in its register bits."""

    PLAIN = "plain"
    """Stored as it is: ``0 .. 2**bits - 1``."""
    MINUS_ONE = "minus one"
    """Stored minus one: actual ``1 .. 2**bits`` (step sizes, iteration wrap/step)."""
    SIGNED = "signed"
    """Two's complement: ``-2**(bits-1) .. 2**(bits-1) - 1`` (lock values)."""
    BURST_LENGTH = "burst length"
    """Bytes 64/128/256 stored as 0/1/2 (shim AXI burst)."""


@dataclass(frozen=True)
class Slice:
    """Bits ``msb:lsb`` (inclusive) of BD word ``word``."""

    word: int
    msb: int
    lsb: int

    @property
    def width(self) -> int:
        """Number of bits in the slice."""
        return self.msb - self.lsb + 1

    @property
    def mask(self) -> int:
        """The slice's bits as a mask within its 32-bit word."""
        return ((1 << self.width) - 1) << self.lsb

    def __str__(self) -> str:
        bits = str(self.msb) if self.msb == self.lsb else f"{self.msb}:{self.lsb}"
        return f"w{self.word}[{bits}]"


@dataclass(frozen=True)
class Field:
    """One BD field: its name, where its bits live and how its value is stored.

    Parameters
    ----------
    name : str
        The docs/bd.md name in snake_case, e.g. ``"d0_stepsize"``.
    slices : tuple of Slice
        The register bits, least significant slice first.
    encoding : Encoding
        How the actual value maps to the stored bits.
    limit : int or None
        A maximum actual value tighter than the register allows (resources the
        hardware does not have), or ``None``.
    note : str
        Why ``limit`` applies; quoted in range errors.
    """

    name: str
    slices: tuple[Slice, ...]
    encoding: Encoding = Encoding.PLAIN
    limit: int | None = None
    note: str = ""

    # Cached (the fields are frozen): every BD built asks for these per field.
    @cached_property
    def bits(self) -> int:
        """Number of register bits (all slices)."""
        return sum(s.width for s in self.slices)

    @cached_property
    def minimum(self) -> int:
        """Smallest actual value."""
        return {
            Encoding.PLAIN: 0,
            Encoding.MINUS_ONE: 1,
            Encoding.SIGNED: -(1 << (self.bits - 1)),
            Encoding.BURST_LENGTH: BURST_LENGTHS[0],
        }[self.encoding]

    @cached_property
    def maximum(self) -> int:
        """Largest actual value."""
        if self.limit is not None:
            return self.limit
        return {
            Encoding.PLAIN: (1 << self.bits) - 1,
            Encoding.MINUS_ONE: 1 << self.bits,
            Encoding.SIGNED: (1 << (self.bits - 1)) - 1,
            Encoding.BURST_LENGTH: BURST_LENGTHS[-1],
        }[self.encoding]

    @property
    def default(self) -> int:
        """Value of an omitted field: 1 for minus-one fields, 64 for burst length, else 0."""
        return max(self.minimum, 0)

    @property
    def signed(self) -> bool:
        """True if the actual value can be negative (two's complement in hardware)."""
        return self.encoding is Encoding.SIGNED

    @property
    def value_width(self) -> int:
        """Bits needed to hold every actual value (signed: two's complement width).

        This is the width of the field in an RTL payload that carries actual values,
        e.g. 14 for a 13-bit minus-one step size (actual up to 8192).
        """
        if self.signed:
            return self.bits
        return max(self.maximum.bit_length(), 1)

    def allows(self, value: int) -> bool:
        """True if ``value`` is an actual value of this field."""
        if self.encoding is Encoding.BURST_LENGTH:
            return value in BURST_LENGTHS
        return self.minimum <= value <= self.maximum

    def range_text(self) -> str:
        """The actual values in words, e.g. ``"1..8192"``, ``"0..2^46-1"``, ``"64, 128, 256"``."""
        if self.encoding is Encoding.BURST_LENGTH:
            return ", ".join(str(b) for b in BURST_LENGTHS)
        return f"{_number_text(self.minimum)}..{_number_text(self.maximum)}"

    def encoding_text(self) -> str:
        """The encoding in words, for documentation and error messages."""
        if self.encoding is Encoding.SIGNED:
            return f"signed {self.bits}-bit"
        if self.encoding is Encoding.BURST_LENGTH:
            return "64/128/256 B as 0/1/2"
        return self.encoding.value

    def to_register(self, value: int) -> int:
        """Stored bits of the actual ``value`` (which must satisfy :meth:`allows`)."""
        if self.encoding is Encoding.MINUS_ONE:
            return value - 1
        if self.encoding is Encoding.SIGNED:
            return value & ((1 << self.bits) - 1)
        if self.encoding is Encoding.BURST_LENGTH:
            return BURST_LENGTHS.index(value)
        return value

    def from_register(self, stored: int) -> int:
        """Actual value of the stored bits ``stored`` (``0 .. 2**bits - 1``).

        A burst-length code with no meaning (3) comes back as ``-1``, which no
        check accepts; the caller reports it.
        """
        if self.encoding is Encoding.MINUS_ONE:
            return stored + 1
        if self.encoding is Encoding.SIGNED:
            return stored - (1 << self.bits) if stored >> (self.bits - 1) else stored
        if self.encoding is Encoding.BURST_LENGTH:
            return BURST_LENGTHS[stored] if stored < len(BURST_LENGTHS) else -1
        return stored


def _number_text(n: int) -> str:
    """Large powers of two (and one less) as ``2^k`` / ``2^k-1``: easier to check by eye."""
    if n >= 1 << 20:
        if n & (n + 1) == 0:
            return f"2^{(n + 1).bit_length() - 1}-1"
        if n & (n - 1) == 0:
            return f"2^{n.bit_length() - 1}"
    return str(n)


def _field(name: str, *slices: tuple[int, int, int], encoding: Encoding = Encoding.PLAIN,
          limit: int | None = None, note: str = "") -> Field:
    """Shorthand for the table: ``_field("d0_wrap", (3, 20, 13))``."""
    return Field(name, tuple(Slice(*s) for s in slices), encoding, limit, note)


_M1 = Encoding.MINUS_ONE
_S = Encoding.SIGNED

_MEMTILE_LOCK_NOTE = DMA_KINDS["memtile"].lock_ids_text()
_MEMTILE_NEXT_NOTE = f"the memory tile has {BD_COUNT['memtile']} BDs"


def _lock_fields(w: int, *, id_bits: int, kind_limit: int | None = None,
                 note: str = "") -> tuple[Field, ...]:
    """Lock fields: tile and shim share one layout; the memory tile widens the IDs."""
    if id_bits == 4:
        return (
            _field("lock_rel_value", (w, 24, 18), encoding=_S),
            _field("lock_rel_id", (w, 16, 13)),
            _field("lock_acq_enable", (w, 12, 12)),
            _field("lock_acq_value", (w, 11, 5), encoding=_S),
            _field("lock_acq_id", (w, 3, 0)),
        )
    return (
        _field("lock_rel_value", (w, 30, 24), encoding=_S),
        _field("lock_rel_id", (w, 23, 16), limit=kind_limit, note=note),
        _field("lock_acq_enable", (w, 15, 15)),
        _field("lock_acq_value", (w, 14, 8), encoding=_S),
        _field("lock_acq_id", (w, 7, 0), limit=kind_limit, note=note),
    )


_TILE: tuple[Field, ...] = (
    _field("base_address", (0, 27, 14)),
    _field("buffer_length", (0, 13, 0)),
    _field("enable_compression", (1, 31, 31)),
    _field("enable_packet", (1, 30, 30)),
    _field("out_of_order_bd_id", (1, 29, 24)),
    _field("packet_id", (1, 23, 19)),
    _field("packet_type", (1, 18, 16)),
    _field("d1_stepsize", (2, 25, 13), encoding=_M1),
    _field("d0_stepsize", (2, 12, 0), encoding=_M1),
    _field("d1_wrap", (3, 28, 21)),
    _field("d0_wrap", (3, 20, 13)),
    _field("d2_stepsize", (3, 12, 0), encoding=_M1),
    _field("iteration_current", (4, 24, 19)),
    _field("iteration_wrap", (4, 18, 13), encoding=_M1),
    _field("iteration_stepsize", (4, 12, 0), encoding=_M1),
    _field("tlast_suppress", (5, 31, 31)),
    _field("next_bd", (5, 30, 27)),
    _field("use_next_bd", (5, 26, 26)),
    _field("valid_bd", (5, 25, 25)),
    *_lock_fields(5, id_bits=4),
)

_MEMTILE: tuple[Field, ...] = (
    _field("enable_packet", (0, 31, 31)),
    _field("packet_type", (0, 30, 28)),
    _field("packet_id", (0, 27, 23)),
    _field("out_of_order_bd_id", (0, 22, 17)),
    _field("buffer_length", (0, 16, 0)),
    _field("d0_zero_before", (1, 31, 26)),
    _field("next_bd", (1, 25, 20), limit=BD_COUNT["memtile"] - 1, note=_MEMTILE_NEXT_NOTE),
    _field("use_next_bd", (1, 19, 19)),
    _field("base_address", (1, 18, 0)),
    _field("tlast_suppress", (2, 31, 31)),
    _field("d0_wrap", (2, 26, 17)),
    _field("d0_stepsize", (2, 16, 0), encoding=_M1),
    _field("d1_zero_before", (3, 31, 27)),
    _field("d1_wrap", (3, 26, 17)),
    _field("d1_stepsize", (3, 16, 0), encoding=_M1),
    _field("enable_compression", (4, 31, 31)),
    _field("d2_zero_before", (4, 30, 27)),
    _field("d2_wrap", (4, 26, 17)),
    _field("d2_stepsize", (4, 16, 0), encoding=_M1),
    _field("d2_zero_after", (5, 31, 28)),
    _field("d1_zero_after", (5, 27, 23)),
    _field("d0_zero_after", (5, 22, 17)),
    _field("d3_stepsize", (5, 16, 0), encoding=_M1),
    _field("iteration_current", (6, 28, 23)),
    _field("iteration_wrap", (6, 22, 17), encoding=_M1),
    _field("iteration_stepsize", (6, 16, 0), encoding=_M1),
    _field("valid_bd", (7, 31, 31)),
    *_lock_fields(7, id_bits=8, kind_limit=LOCK_IDS["memtile"][-1], note=_MEMTILE_LOCK_NOTE),
)

_SHIM: tuple[Field, ...] = (
    _field("buffer_length", (0, 31, 0)),
    # Word address bits 29:0 are byte-address bits 31:2, bits 45:30 are byte bits 47:32.
    _field("base_address", (1, 31, 2), (2, 15, 0)),
    _field("enable_packet", (2, 30, 30)),
    _field("out_of_order_bd_id", (2, 29, 24)),
    _field("packet_id", (2, 23, 19)),
    _field("packet_type", (2, 18, 16)),
    _field("secure_access", (3, 30, 30)),
    _field("d0_wrap", (3, 29, 20)),
    _field("d0_stepsize", (3, 19, 0), encoding=_M1),
    _field("burst_length", (4, 31, 30), encoding=Encoding.BURST_LENGTH),
    _field("d1_wrap", (4, 29, 20)),
    _field("d1_stepsize", (4, 19, 0), encoding=_M1),
    _field("smid", (5, 31, 28)),
    _field("axcache", (5, 27, 24)),
    _field("axqos", (5, 23, 20)),
    _field("d2_stepsize", (5, 19, 0), encoding=_M1),
    _field("iteration_current", (6, 31, 26)),
    _field("iteration_wrap", (6, 25, 20), encoding=_M1),
    _field("iteration_stepsize", (6, 19, 0), encoding=_M1),
    _field("tlast_suppress", (7, 31, 31)),
    _field("next_bd", (7, 30, 27)),
    _field("use_next_bd", (7, 26, 26)),
    _field("valid_bd", (7, 25, 25)),
    *_lock_fields(7, id_bits=4),
)

FIELDS: dict[str, tuple[Field, ...]] = {"tile": _TILE, "memtile": _MEMTILE, "shim": _SHIM}
"""The field table of each kind, in register order (word, then bit, high first)."""

FIELD_INDEX: dict[str, dict[str, Field]] = {
    kind: {f.name: f for f in table} for kind, table in FIELDS.items()
}
"""``FIELD_INDEX[kind][name]``: a kind's fields by name."""


def _check_resources(kind: str) -> None:
    """The table must hold what the kind's description says: raises where they differ."""
    k, index = DMA_KINDS[kind], FIELD_INDEX[kind]
    have = {
        "address bits": index["base_address"].bits,
        "address dimensions": sum(f"d{d}_stepsize" in index for d in range(8)),
        "padded dimensions": sum(f"d{d}_zero_before" in index for d in range(8)),
        "BDs next_bd can name": index["next_bd"].maximum + 1,
        "lock IDs a BD can name": index["lock_acq_id"].maximum + 1,
    }
    want = {
        "address bits": k.address_bits,
        "address dimensions": k.address_dimensions,
        "padded dimensions": k.padded_dimensions,
        "BDs next_bd can name": k.bd_count,
        "lock IDs a BD can name": len(k.lock_ids),
    }
    for what, value in have.items():
        if value != want[what]:
            raise AssertionError(f"{kind} field table: {what} {value}, but model/arch/kinds.py "
                                 f"says {want[what]}")


for _kind in KINDS:  # at import, so the table and the kinds cannot drift apart
    _check_resources(_kind)


def _used_masks(kind: str) -> tuple[int, ...]:
    """Per word, the bits some field occupies; raises if two slices overlap."""
    used = [0] * WORDS[kind]
    for f in FIELDS[kind]:
        for s in f.slices:
            if not (0 <= s.word < WORDS[kind] and 0 <= s.lsb <= s.msb < 32):
                raise AssertionError(f"{kind} field {f.name}: slice {s} outside the BD")
            if used[s.word] & s.mask:
                raise AssertionError(f"{kind} field {f.name}: slice {s} overlaps another field")
            used[s.word] |= s.mask
    return tuple(used)


# Computed at import so an edit that makes two fields overlap fails at once.
RESERVED: dict[str, tuple[int, ...]] = {
    kind: tuple(~m & 0xFFFF_FFFF for m in _used_masks(kind)) for kind in KINDS
}
"""Per kind, per word: the mask of reserved bits (encode writes 0, decode rejects 1)."""


# --- Documentation ------------------------------------------------------------------


def _bit_runs(mask: int) -> list[tuple[int, int]]:
    """Runs of set bits in a 32-bit mask as ``(msb, lsb)``, high first."""
    runs: list[tuple[int, int]] = []
    bit = 31
    while bit >= 0:
        if mask >> bit & 1:
            msb = bit
            while bit >= 0 and mask >> bit & 1:
                bit -= 1
            runs.append((msb, bit + 1))
        else:
            bit -= 1
    return runs


def _bits_text(msb: int, lsb: int) -> str:
    return str(msb) if msb == lsb else f"{msb}:{lsb}"


def _kind_rows(kind: str) -> list[tuple[int, int, str]]:
    """(word, msb, row text) for every slice and reserved run of a kind."""
    rows: list[tuple[int, int, str]] = []
    for f in FIELDS[kind]:
        shift = 0
        for s in f.slices:
            name = f"`{f.name}`"
            if len(f.slices) > 1:
                name += f" (value bits {_bits_text(shift + s.width - 1, shift)})"
            shift += s.width
            rows.append((s.word, s.msb, f"| {s.word} | {_bits_text(s.msb, s.lsb)} | {name} | "
                         f"{f.encoding_text()} | {f.range_text()} | {f.default} |"))
    for word, mask in enumerate(RESERVED[kind]):
        for msb, lsb in _bit_runs(mask):
            rows.append((word, msb, f"| {word} | {_bits_text(msb, lsb)} | reserved | | 0 | 0 |"))
    rows.sort(key=lambda r: (r[0], -r[1]))
    return rows


def render_markdown() -> str:
    """The BD register tables of every kind as Markdown (the text of docs/bd_registers.md).

    Returns
    -------
    str
        One table per kind with columns word, bits, field, encoding, actual range
        and default, reserved bits included.
    """
    lines = [
        "# Buffer-descriptor registers",
        "",
        "Generated by `python -m aiedma.model.bd.fields` from `model/bd/fields.py`;",
        "do not edit (a test regenerates it and compares).",
        "Values are actual values: \"minus one\" fields store the value minus one,",
        "\"signed\" fields are two's complement. Addresses, lengths, steps and wraps",
        "are in 32-bit words; a wrap of 0 means \"never wraps\".",
    ]
    for kind in KINDS:
        lines += [
            "",
            f"## {KIND_TITLES[kind]} (`{kind}`)",
            "",
            f"{WORDS[kind]} words; BD n at 0x{BD_REGISTER_BASE[kind]:X} + "
            f"0x{BD_REGISTER_STRIDE:X} n; {BD_COUNT[kind]} BDs; lock IDs "
            f"{LOCK_IDS[kind][0]}..{LOCK_IDS[kind][-1]}; "
            f"{ADDRESS_DIMENSIONS[kind]} address dimensions; "
            f"zero padding: {'yes (MM2S)' if HAS_PADDING[kind] else 'no'}.",
            "",
            "| word | bits | field | encoding | actual range | default |",
            "|---|---|---|---|---|---|",
        ]
        lines += [text for _, _, text in _kind_rows(kind)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
