"""Buffer descriptors: validated values, bit-exact registers and the address stream.

A :class:`BufferDescriptor` holds the *actual* values of one BD of a kind (``"tile"``,
``"memtile"``, ``"shim"``) and is immutable. :meth:`~BufferDescriptor.encode` and
:meth:`~BufferDescriptor.decode` translate to and from the 32-bit register words of
docs/bd.md "Field layouts" (via the table in :mod:`.bd_fields`), and
:meth:`~BufferDescriptor.stream` produces the word addresses of one execution
(docs/bd.md "Address generation", "Zero padding", "Iteration").

Decisions (docs/bd.md is silent):

* **decision**: ``iteration_current`` may be at or above ``iteration_wrap`` (aie-rt
  checks it only against its field's maximum, and mlir-aie's lowering writes such BDs).
  Such a load uses the offset ``iteration_current * iteration_stepsize`` as it stands,
  and the value written back is 0: the counter restarts when ``iteration_current + 1``
  reaches *or passes* the wrap (:func:`iteration_after`). What the silicon does is not
  documented, so building or decoding such a BD gives an
  :class:`~aiedma.model.errors.UndocumentedBehaviourWarning`, never an error.
* **decision**: :meth:`BufferDescriptor.stream` returns plain integer word
  addresses, never reduced modulo the address width; whether they hit memory is
  the memory layer's check.
* **decision**: the BD's own number is not a field, so "memory-tile chains stay in
  their half" is :func:`check_chain`; it looks at ``next_bd`` only when
  ``use_next_bd`` is set (otherwise the hardware ignores it).
* **decision**: integers may be Python ``int`` or NumPy integers (stored as ``int``);
  ``bool`` and floats are rejected even when they hold a whole number.
* **decision**: ``stream(iteration_current=...)`` takes the same range as the field
  (``0 .. 63``).
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..arch.kinds import DMA_KINDS, check_kind
from ..errors import BDError, Hex, UndocumentedBehaviourWarning, field_error
from ..tiling.doubling import fill_affine
from .fields import (
    ADDRESS_DIMENSIONS,
    BD_COUNT,
    BURST_LENGTHS,
    FIELD_INDEX,
    FIELDS,
    HAS_PADDING,
    RESERVED,
    WORDS,
    Encoding,
    Field,
)

__all__ = ["PADDING_NEEDS_WRAP", "BufferDescriptor", "DecodedImage", "affine_layout", "check_chain",
           "decode_image", "iteration_after", "padded_digits", "padded_radices", "stream_addresses",
           "write_padding"]

_WORD_MASK = 0xFFFF_FFFF

# Position of each field in a BD's value tuple, per kind.
_POSITION: dict[str, dict[str, int]] = {
    kind: {f.name: i for i, f in enumerate(table)} for kind, table in FIELDS.items()
}

# Per kind, each field with its default and allowed values (a range or the burst
# lengths), taken once from the field table: a BD is built many times a second.
_RANGES: dict[str, tuple[tuple[Field, int, range | tuple[int, ...]], ...]] = {
    kind: tuple((f, f.default, BURST_LENGTHS if f.encoding is Encoding.BURST_LENGTH
                 else range(f.minimum, f.maximum + 1)) for f in table)
    for kind, table in FIELDS.items()
}

# Per kind, the value positions of the stream pattern's fields (None: no padding field).
_PATTERN_POSITIONS: dict[str, dict[str, list[int | None]]] = {
    kind: {"steps": [p[f"d{k}_stepsize"] for k in range(ADDRESS_DIMENSIONS[kind])],
           **{name: [p.get(f"d{k}_{field}") for k in range(ADDRESS_DIMENSIONS[kind] - 1)]
              for name, field in (("wraps", "wrap"), ("before", "zero_before"),
                                  ("after", "zero_after"))}}
    for kind, p in _POSITION.items()
}

PADDING_NEEDS_WRAP: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("d0_wrap", ("d0_zero_after", "d1_zero_before", "d1_zero_after",
                 "d2_zero_before", "d2_zero_after")),
    ("d1_wrap", ("d1_zero_after", "d2_zero_before", "d2_zero_after")),
    ("d2_wrap", ("d2_zero_after",)),
)
"""Padding legality (aie-rt): padding at a level needs the dimensions it is counted in
to wrap. Each entry: the wrap that may not be 0, and the fields it then forbids (the
memory tile; the formal harnesses assume the same rule of the BDs they try)."""


def _as_int(name: str, value: object) -> int:
    """``value`` as an int; bool and float are refused, not coerced."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise field_error(BDError, name, value, "must be an integer")
    return int(value)


def _check_range(kind: str, f: Field, value: int) -> None:
    if f.allows(value):
        return
    where = f"a {kind} BD"
    if f.encoding is Encoding.BURST_LENGTH:
        rule = f"must be 64, 128 or 256 (bytes) in {where}"
    elif f.encoding is Encoding.MINUS_ONE and value < 1:
        rule = f"must be at least 1 (stored minus one; range {f.range_text()} in {where})"
    else:
        rule = f"must be in {f.range_text()} in {where} ({f.bits}-bit {f.encoding_text()})"
    if f.note:
        rule += f"; {f.note}"
    raise field_error(BDError, f.name, value, rule)


def _unknown_field(kind: str, name: str, value: object) -> BDError:
    rule = f"not a field of a {kind} BD"
    if "_zero_" in name and not HAS_PADDING[kind]:
        rule += " (zero padding exists only on the memory tile)"
    else:
        close = difflib.get_close_matches(name, FIELD_INDEX[kind], n=1)
        if close:
            rule += f" (did you mean {close[0]}?)"
    return field_error(BDError, name, value, rule)


def _check_rules(kind: str, v: Mapping[str, int]) -> None:
    """The rules that tie fields together (ranges are checked one by one before)."""
    problems = _rule_problems(kind, v)
    if problems:
        raise problems[0]


def _rule_problems(kind: str, v: Mapping[str, int]) -> list[BDError]:
    """Every broken rule that ties fields together, in table order (none: a legal BD)."""
    problems = []
    if HAS_PADDING[kind]:
        for wrap, forbidden in PADDING_NEEDS_WRAP:
            if v[wrap] == 0:
                for name in forbidden:
                    if v[name]:
                        problems.append(field_error(
                            BDError, name, v[name],
                            f"must be 0 when {wrap} is 0 (padding around a dimension "
                            f"that never wraps is illegal)"))
    if v["enable_packet"] and v["buffer_length"] == 0:
        problems.append(field_error(BDError, "enable_packet", v["enable_packet"],
                                    "needs buffer_length >= 1 (a packet BD must carry data)"))
    return problems


def _undocumented(v: Mapping[str, int]) -> list[str]:
    """What a legal BD asks of the hardware that AMD does not document (the model's
    choice named), as ``"<field>=<value>: ..."`` lines; empty for most BDs."""
    current, wrap = v["iteration_current"], v["iteration_wrap"]
    if current < wrap:
        return []
    return [f"iteration_current={current}: not below iteration_wrap={wrap}; the hardware's "
            f"counter is undocumented there: the model applies offset {current} x "
            f"iteration_stepsize at the next load and writes back 0 (docs/decisions.md)"]


def _warn_undocumented(v: Mapping[str, int], stacklevel: int) -> None:
    for note in _undocumented(v):
        warnings.warn(UndocumentedBehaviourWarning(note), stacklevel=stacklevel + 1)


def iteration_after(current: int, wrap: int, loads: int = 1) -> int:
    """``iteration_current`` after ``loads`` loads of a BD (docs/bd.md "Iteration").

    Each load adds one and returns to 0 when the value reaches ``wrap``; a value
    already at or past ``wrap`` (undocumented, see the module's decisions) returns to 0
    at its first load, as the RTL's comparator does (``current + 1 >= wrap``).

    Parameters
    ----------
    current : int
        ``iteration_current`` before the first of the loads (0..63).
    wrap : int
        ``iteration_wrap`` (actual value, 1..64).
    loads : int
        Loads taken (0 leaves ``current``).

    Returns
    -------
    int
    """
    if loads <= 0:
        return current
    if current >= wrap:
        current, loads = 0, loads - 1
    return (current + loads) % wrap


@dataclass(frozen=True)
class DecodedImage:
    """Every field of a BD register image, legal or not (:func:`decode_image`).

    Attributes
    ----------
    kind : str
    words : tuple of int
    values : dict of str to int
        Each field's actual value in table order; a stored value with no meaning
        (a burst-length code of 3) is kept as stored.
    problems : list of BDError
        Every broken rule, in table order: set reserved bits, values out of a field's
        range, broken rules between fields. Empty for a legal BD.
    notes : list of str
        What the BD asks that the hardware does not document (``iteration_current``
        at or past its wrap), each naming the field and the model's choice; not a
        problem: such a BD is built and run, with a warning.
    """

    kind: str
    words: tuple[int, ...]
    values: dict[str, int]
    problems: list[BDError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def problems_of(self, name: str) -> list[BDError]:
        """The problems that name field ``name`` (or ``words[i]``) first."""
        return [p for p in self.problems if str(p).split("=", 1)[0] == name]


def decode_image(kind: str, words: Sequence[int]) -> DecodedImage:
    """Decode a register image field by field, collecting every broken rule.

    Unlike :meth:`BufferDescriptor.decode` this never refuses an image with the right
    number of 32-bit words: a dump from a hung device (padding on a dimension that
    never wraps, a reserved bit set) shows every field and every rule it breaks, and
    ``notes`` what it asks that the hardware does not document.

    Raises
    ------
    BDError
        Only for a wrong word count or a word that is not a 32-bit unsigned integer.
    """
    kind = check_kind(kind, BDError)
    words = list(words)
    if len(words) != WORDS[kind]:
        raise field_error(BDError, "len(words)", len(words),
                          f"a {kind} BD has exactly {WORDS[kind]} words")
    problems: list[BDError] = []
    for i, w in enumerate(words):
        w = _as_int(f"words[{i}]", w)
        if not 0 <= w <= _WORD_MASK:
            raise field_error(BDError, f"words[{i}]", w,
                              "must be a 32-bit unsigned integer (0..0xFFFFFFFF)")
        words[i] = w
        bad = w & RESERVED[kind][i]
        if bad:
            bits = ", ".join(str(b) for b in range(31, -1, -1) if bad >> b & 1)
            problems.append(field_error(BDError, f"words[{i}]", Hex(w),
                                        f"reserved bit(s) {bits} of word {i} are set; they "
                                        f"must be 0 in a {kind} BD"))
    values: dict[str, int] = {}
    for f in FIELDS[kind]:
        stored, shift = 0, 0
        for sl in f.slices:
            stored |= (words[sl.word] >> sl.lsb & ((1 << sl.width) - 1)) << shift
            shift += sl.width
        value = f.from_register(stored)
        if f.encoding is Encoding.BURST_LENGTH and value < 0:
            problems.append(field_error(BDError, f.name, stored,
                                        "encoded value must be 0, 1 or 2 (64, 128, 256 "
                                        f"bytes); {stored} has no meaning"))
            value = stored
        else:
            try:
                _check_range(kind, f, value)
            except BDError as error:
                problems.append(error)
        values[f.name] = value
    problems += _rule_problems(kind, values)
    return DecodedImage(kind, tuple(words), values, problems, _undocumented(values))


_STORED_FIELDS = ("lock_acq_id=", "lock_rel_id=", "next_bd=")
"""The fields whose range problems :meth:`BufferDescriptor.decode_stored` keeps: the
memory tile's 8-bit lock IDs past its 192 locks and its 6-bit ``next_bd`` past BD 47."""


def _rebuild(kind: str, values: dict[str, int]) -> BufferDescriptor:
    """Pickle/copy support: frozen objects are rebuilt through the constructor."""
    return BufferDescriptor(kind, **values)


class BufferDescriptor:
    """One buffer descriptor of a DMA kind, holding actual values; immutable.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        Core-tile, memory-tile or shim DMA.
    **fields : int
        Field values by their docs/bd.md names in snake_case (see ``docs/bd_registers.md``);
        omitted fields take their default: 1 for step sizes, ``iteration_wrap`` and
        ``iteration_stepsize``, 64 for ``burst_length``, 0 for everything else
        (``valid_bd`` included).

    Raises
    ------
    BDError
        For an unknown kind or field, a non-integer, a value outside the field's
        range for this kind, or a broken cross-field rule (padding legality,
        ``enable_packet`` with ``buffer_length`` 0). The message names the field,
        the value and the rule.

    Warns
    -----
    UndocumentedBehaviourWarning
        For ``iteration_current`` at or past ``iteration_wrap``: built, run as the
        module's decision says.

    Examples
    --------
    >>> bd = BufferDescriptor("memtile", buffer_length=16, d0_wrap=13,
    ...                       d0_zero_before=2, d0_zero_after=1, valid_bd=1)
    >>> bd.stream().tolist()
    [-1, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, -1]
    >>> BufferDescriptor.decode("memtile", bd.encode()) == bd
    True
    """

    __slots__ = ("_kind", "_values")
    _kind: str
    _values: tuple[int, ...]

    def __init__(self, kind: str, **fields: Any) -> None:
        kind = check_kind(kind, BDError)
        index = FIELD_INDEX[kind]
        for name, value in fields.items():
            if name not in index:
                raise _unknown_field(kind, name, value)
        values: dict[str, int] = {}
        for f, default, allowed in _RANGES[kind]:
            value = _as_int(f.name, fields[f.name]) if f.name in fields else default
            if value not in allowed:
                _check_range(kind, f, value)   # raises, naming the field and its range
            values[f.name] = value
        _check_rules(kind, values)
        if values["iteration_current"] >= values["iteration_wrap"]:
            _warn_undocumented(values, 2)
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_values", tuple(values.values()))

    @classmethod
    def from_checked(cls, kind: str, values: tuple[int, ...]) -> BufferDescriptor:
        """A BD from values in table order that a caller has already checked.

        For :meth:`~.batch.BDBatch.bds`, whose batch applied the constructor's rules
        to every BD at once; ``values`` must be plain ints.
        """
        bd = object.__new__(cls)
        object.__setattr__(bd, "_kind", kind)
        object.__setattr__(bd, "_values", values)
        return bd

    # --- value access --------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"tile"``, ``"memtile"`` or ``"shim"``."""
        return self._kind

    def __getattr__(self, name: str) -> int:
        # Only reached when normal lookup fails: every field is a class property
        # (_field_property), so this is a name the kind has no field for.
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"a {self._kind} BD has no field {name!r}")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"BufferDescriptor is immutable; use replace({name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("BufferDescriptor is immutable")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *FIELD_INDEX[self._kind]})

    def fields(self, include_defaults: bool = True) -> dict[str, int]:
        """Field values by name, in register order.

        Parameters
        ----------
        include_defaults : bool
            If false, only the fields whose value differs from the default.
        """
        return {
            f.name: v for f, v in zip(FIELDS[self._kind], self._values, strict=True)
            if include_defaults or v != f.default
        }

    def to_dict(self, include_defaults: bool = False) -> dict[str, Any]:
        """JSON-ready form: ``{"kind": ..., **fields}`` (non-default fields unless asked)."""
        return {"kind": self._kind, **self.fields(include_defaults)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BufferDescriptor:
        """Inverse of :meth:`to_dict` (also reads the BDs of ``tests/data/hardware.json``)."""
        d = dict(d)
        if "kind" not in d:
            raise field_error(BDError, "kind", None, "a BD dictionary needs a kind")
        return cls(d.pop("kind"), **d)

    def replace(self, **changes: Any) -> BufferDescriptor:
        """A copy with some fields changed (validated like the constructor)."""
        return BufferDescriptor(self._kind, **{**self.fields(), **changes})

    # --- identity --------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BufferDescriptor):
            return NotImplemented
        return self._kind == other._kind and self._values == other._values

    def __hash__(self) -> int:
        return hash((self._kind, self._values))

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.fields(include_defaults=False).items())
        return f"BufferDescriptor({self._kind!r}{', ' if shown else ''}{shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._kind, self.fields()))

    # --- registers -------------------------------------------------------------------

    def encode(self) -> list[int]:
        """The BD's register words (6 for a core tile, 8 otherwise), bit-exact with docs/bd.md.

        Reserved bits are 0. A field split over several slices fills them least
        significant first.
        """
        words = [0] * WORDS[self._kind]
        for f, value in zip(FIELDS[self._kind], self._values, strict=True):
            stored = f.to_register(value)
            for s in f.slices:
                words[s.word] |= (stored & ((1 << s.width) - 1)) << s.lsb
                stored >>= s.width
        return words

    @classmethod
    def decode(cls, kind: str, words: Sequence[int]) -> BufferDescriptor:
        """The BD whose register words are ``words``.

        Parameters
        ----------
        kind : {"tile", "memtile", "shim"}
        words : sequence of int
            Exactly 6 (tile) or 8 words, each ``0 .. 2**32 - 1``.

        Raises
        ------
        BDError
            For a wrong word count, a word that is not a 32-bit unsigned integer, a
            set reserved bit (the message names the word, the bits and the kind), or
            decoded values that break a field rule (the first of
            :func:`decode_image`'s problems).
        """
        image = decode_image(kind, words)
        if image.problems:
            raise image.problems[0]
        return cls(image.kind, **image.values)

    @classmethod
    def decode_stored(cls, kind: str, words: Sequence[int]) -> BufferDescriptor:
        """The BD the hardware's table holds after ``words`` are written to it: as
        :meth:`decode`, except that a lock ID past the kind's locks (the memory tile's
        192-255, which its 8-bit fields hold) and a memory-tile ``next_bd`` past BD 47
        (48-63, which its 6 bits hold) are kept. A channel that loads such a BD flags it
        (``error_lock_access_to_unavailable``; ``error_bd_unavailable`` where the chain
        would load the next BD: :mod:`aiedma.model.system.channel`); the BD's
        constructor, the Python API, refuses it.

        Raises
        ------
        BDError
            As :meth:`decode`, for every other broken rule.
        """
        image = decode_image(kind, words)
        kept = tuple(p for p in image.problems if str(p).startswith(_STORED_FIELDS))
        if len(kept) < len(image.problems):
            raise next(p for p in image.problems if p not in kept)
        if not kept:
            return cls(image.kind, **image.values)
        values = tuple(image.values[f.name] for f in FIELDS[image.kind])
        return cls.from_checked(image.kind, values)

    def stored_with(self, **raw: int) -> BufferDescriptor:
        """This BD with ``raw`` field values put straight into its register words (each
        field's raw bits, lowest slice first), read back as :meth:`decode_stored` reads
        a table: how a test or a random program writes what the constructor refuses, a
        memory tile's ``next_bd`` of 48-63 or a lock ID of 192-255.

        Raises
        ------
        BDError
            For a field the kind has not or a value its bits do not hold (the field, the
            value, the rule); otherwise as :meth:`decode_stored`.

        Examples
        --------
        >>> bd = BufferDescriptor("memtile", valid_bd=1, use_next_bd=1)
        >>> bd.stored_with(next_bd=50).next_bd
        50
        """
        words = list(self.encode())
        for name, value in raw.items():
            field = FIELD_INDEX[self._kind].get(name)
            if field is None:
                raise field_error(BDError, "field", name, f"a {self._kind} BD has no such field")
            top = (1 << field.bits) - 1
            if not 0 <= value <= top:
                raise field_error(BDError, name, value,
                                  f"raw bits of a {field.bits}-bit field: 0 to {top}")
            for part in field.slices:
                kept = words[part.word] & ~part.mask
                words[part.word] = kept | (value & (1 << part.width) - 1) << part.lsb
                value >>= part.width
        return type(self).decode_stored(self._kind, words)

    # --- behaviour ---------------------------------------------------------------------

    def next_iteration(self) -> BufferDescriptor:
        """The BD as the hardware writes it back after a load.

        ``iteration_current`` advances by one and returns to 0 at ``iteration_wrap``
        (docs/bd.md "Iteration"; a value at or past the wrap returns to 0:
        :func:`iteration_after`).
        """
        current = iteration_after(self.iteration_current, self.iteration_wrap)
        if current == self.iteration_current:   # iteration off: the BD is written back as is
            return self
        # Only iteration_current changes, to a value below the wrap: every rule still
        # holds, so the constructor's checks (most of a task walk's cost) are skipped.
        values = list(self._values)
        values[_POSITION[self._kind]["iteration_current"]] = current
        return BufferDescriptor.from_checked(self._kind, tuple(values))

    def stream(self, iteration_current: int | None = None, *, shift: int = 0,
               out: np.ndarray | None = None) -> np.ndarray:
        """Word addresses of one execution of the BD, ``-1`` for a zero (padding) word.

        Parameters
        ----------
        iteration_current : int, optional
            The iteration index of this load; defaults to the BD's own
            ``iteration_current``. The start address is
            ``base_address + iteration_current * iteration_stepsize``.
        shift : int, optional
            Added to every data address (not to zero words): a task's stream relative
            to a buffer is produced without a second pass.
        out : numpy.ndarray, optional
            Contiguous int64 array of ``buffer_length`` to write into.

        Returns
        -------
        numpy.ndarray
            ``buffer_length`` int64 addresses in stream order (docs/bd.md "Address
            generation" and, on the memory tile, "Zero padding").
        """
        if iteration_current is None:
            current = self.iteration_current
        elif (type(iteration_current) is int
              and 0 <= iteration_current <= FIELD_INDEX[self._kind]["iteration_current"].maximum):
            current = iteration_current
        else:   # the constructor's checks give the error
            current = self.replace(iteration_current=iteration_current).iteration_current
        start = self.base_address + current * self.iteration_stepsize + shift
        return stream_addresses(start=start, length=self.buffer_length, **self.pattern(),
                                out=out)

    def dimension_counters(self, positions: np.ndarray | None = None) -> list[np.ndarray]:
        """Per dimension, the counter of each stream position, as the hardware counts.

        Counters run over each dimension's padded range (``before + wrap + after``):
        a counter below ``before`` or at ``before + wrap`` and past is in padding. The
        first dimension that never wraps (or the outermost) takes the rest of the
        count, so the list stops there (:func:`padded_digits`).

        Parameters
        ----------
        positions : numpy.ndarray, optional
            Stream positions (default: every position, ``0 .. buffer_length - 1``).

        Returns
        -------
        list of numpy.ndarray
            ``counters[k][j]``: the counter of dimension ``k`` at ``positions[j]``.
        """
        if positions is None:
            positions = np.arange(self.buffer_length, dtype=np.int64)
        pattern = self.pattern()
        return padded_digits(np.asarray(positions, dtype=np.int64), pattern["wraps"],
                             pattern["before"], pattern["after"])

    def pattern(self) -> dict[str, list[int]]:
        """Steps, wraps and padding per dimension (the arguments of :func:`stream_addresses`).

        Returns
        -------
        dict
            ``steps`` (every dimension, outermost last), ``wraps``, ``before`` and
            ``after`` (every dimension but the outermost; padding 0 where the kind
            has none).
        """
        v = self._values
        return {name: [v[i] if i is not None else 0 for i in positions]
                for name, positions in _PATTERN_POSITIONS[self._kind].items()}



def _field_property(name: str) -> property:
    """The property that reads field ``name`` of a BD of any kind.

    A field read through ``__getattr__`` first fails the normal lookup, which costs
    Python an ``AttributeError`` each time; the system model reads BD fields in every
    cycle, so each field is a class property. On a kind without the field the getter
    raises, and ``__getattr__`` gives the message naming the kind.
    """
    positions = {kind: index.get(name) for kind, index in _POSITION.items()}

    def value(self: BufferDescriptor) -> int:
        position = positions[self._kind]
        if position is None:
            raise AttributeError(name)
        return self._values[position]

    return property(value, doc=f"The ``{name}`` field.")


for _name in dict.fromkeys(name for index in _POSITION.values() for name in index):
    setattr(BufferDescriptor, _name, _field_property(_name))


def stream_addresses(start: int, length: int, steps: Sequence[int], wraps: Sequence[int],
                     before: Sequence[int], after: Sequence[int], *,
                     out: np.ndarray | None = None) -> np.ndarray:
    """The address stream of a BD pattern, built by doubling copies of its first units.

    Parameters
    ----------
    start : int
        Address of the first data word (base plus iteration offset).
    length : int
        Stream words to produce (zero words included).
    steps : sequence of int
        Actual step of every dimension, outermost last (it has no wrap).
    wraps : sequence of int
        Wrap of every dimension but the outermost; 0 = never wraps.
    before, after : sequence of int
        Zero padding of every dimension but the outermost, in that dimension's unit
        (words for D0, padded D0 rows for D1, padded D1 blocks for D2).
    out : numpy.ndarray, optional
        A contiguous int64 array of ``length`` to write into (a task writes each
        load into its place in the task's stream, without a copy).

    Returns
    -------
    numpy.ndarray
        int64 word addresses, -1 for zero words (``out`` when given).

    Notes
    -----
    A stream position is a number in the mixed radix of :func:`padded_radices` (its
    digits are :func:`padded_digits`: ``S_k`` words per digit of dimension ``k``,
    ``S_0 = 1``), and every word, padding or not, is first given the address that
    is affine in the digits: ``start + sum((digit_k - before_k) * step_k)``. Digit
    ``d`` of dimension ``k`` is then digit 0 plus ``d * step_k``, so each dimension's
    first unit is built from the one below by doubling: words ``n S_k .. 2n S_k`` are
    words ``0 .. n S_k`` plus ``n * step_k`` (:func:`~aiedma.model.tiling.doubling.fill_affine`,
    shared with the tiling walk). Every NumPy call is a contiguous add, about
    ``log2`` of each radix of them, and a unit is never built past ``length``: a
    memory-tile period can hold about 10**9 words while a BD is at most 2**17 long.

    Padding is written last: the words whose digit ``k`` is in ``before_k`` or
    ``after_k`` form two column ranges of the stream seen as rows of ``S_(k+1)``
    words, one strided write each (:func:`_zero_columns`), and the open dimension's
    ``before`` is the stream's head. Padding legality guarantees the open dimension
    has no "after" padding.
    """
    if out is None:
        out = np.empty(max(length, 0), dtype=np.int64)
    if length <= 0:
        return out
    # Every word first gets its affine address; the open dimension runs to the end.
    fill_affine(out[:length], *affine_layout(start, steps, wraps, before, after))
    write_padding(out[:length], wraps, before, after)
    return out


def affine_layout(start: int, steps: Sequence[int], wraps: Sequence[int],
                  before: Sequence[int], after: Sequence[int]) -> tuple[int, list[int], list[int]]:
    """The affine part of a BD pattern's stream: the arguments of
    :func:`~aiedma.model.tiling.doubling.fill_affine` after ``out``.

    Every word of the stream, padding or not, first holds ``first + sum(digit_k *
    step_k)`` over the digits of :func:`padded_digits`; the padding's digits count
    from the padded unit's start, so ``first`` is ``start`` less the leading padding
    of every dimension up to the open one.

    Parameters
    ----------
    start, steps, wraps, before, after
        As :func:`stream_addresses`.

    Returns
    -------
    first : int
        The affine address of word 0.
    steps : list of int
        The steps of the dimensions up to the open one.
    radices : list of int
        :func:`padded_radices`.
    """
    radices = padded_radices(wraps, before, after)
    open_dim = len(radices)
    skip = before[open_dim] if open_dim < len(wraps) else 0
    first = start - sum(before[k] * steps[k] for k in range(open_dim)) - skip * steps[open_dim]
    return first, list(steps[: open_dim + 1]), radices


def write_padding(out: np.ndarray, wraps: Sequence[int], before: Sequence[int],
                  after: Sequence[int]) -> np.ndarray:
    """Set -1 at the zero words of a BD pattern's stream ``out`` (its whole length).

    The zero words depend on the pattern's wraps and padding alone, not on its steps
    or start: a stream built from another of the same pattern (moved by a start
    difference, as a task's consecutive loads are) gets its zeros back from this.
    See :func:`stream_addresses` for where they are.

    Parameters
    ----------
    out : numpy.ndarray
        Contiguous int64 stream, written in place.
    wraps, before, after : sequence of int
        As :func:`stream_addresses`.

    Returns
    -------
    numpy.ndarray
        ``out``.
    """
    radices = padded_radices(wraps, before, after)
    open_dim = len(radices)
    skip = before[open_dim] if open_dim < len(wraps) else 0
    for k in range(open_dim):
        if before[k] or after[k]:
            per_digit = _digits_below(radices, k)
            _zero_columns(out, per_digit * radices[k], before[k] * per_digit,
                          (before[k] + wraps[k]) * per_digit)
    out[: skip * _digits_below(radices, open_dim)] = -1
    return out


def _digits_below(radices: Sequence[int], k: int) -> int:
    """Words per digit of dimension ``k``: the product of the radices below it."""
    words = 1
    for radix in radices[:k]:
        words *= radix
    return words


def _zero_columns(out: np.ndarray, row: int, head: int, data_end: int) -> None:
    """-1 over columns ``0 .. head - 1`` and ``data_end .. row - 1`` of ``out`` seen as
    rows of ``row`` words (the last one maybe partial).

    The "after" columns of a row and the "before" columns of the next touch across
    the row boundary, so with both they are written as one run per boundary: one
    strided write instead of two.
    """
    full = out.size // row
    rows = out[: full * row].reshape(full, row)
    tail = out[full * row :]
    if head and data_end < row and full > 1:
        out[:head] = -1
        boundaries = out[data_end : data_end + (full - 1) * row].reshape(full - 1, row)
        boundaries[:, : row - data_end + head] = -1
        rows[-1, data_end:] = -1
    else:
        rows[:, :head] = -1
        rows[:, data_end:] = -1
    tail[:head] = -1
    tail[data_end:] = -1


def padded_radices(wraps: Sequence[int], before: Sequence[int],
                   after: Sequence[int]) -> list[int]:
    """The radix of every dimension below the open one: ``before + wrap + after``.

    The one rule for splitting a BD's stream position into dimension counters (see
    :func:`padded_digits`): a padded unit of dimension ``k`` holds ``before[k] +
    wraps[k] + after[k]`` units of dimension ``k - 1``, and the first dimension with
    wrap 0 (or the outermost) is the *open* one, which never wraps and has no radix;
    the list stops below it.
    """
    open_dim = next((k for k, w in enumerate(wraps) if w == 0), len(wraps))
    return [before[k] + wraps[k] + after[k] for k in range(open_dim)]


def padded_digits(positions: np.ndarray, wraps: Sequence[int], before: Sequence[int],
                  after: Sequence[int]) -> list[np.ndarray]:
    """Stream positions as mixed-radix digits, one per dimension: the padded counters.

    The one decomposition of a BD's stream position into dimension counters, read by
    the mismatch reports (which name a beat's counters) and the coverage bins; the
    address stream walks the same digits by doubling units (:func:`stream_addresses`).
    The radices are :func:`padded_radices`. The open dimension never wraps, so it
    takes the whole quotient and the dimensions above it never move; the list ends
    with it.

    Parameters
    ----------
    positions : numpy.ndarray
        int64 stream positions (zero words included).
    wraps, before, after : sequence of int
        Per dimension below the outermost: wrap (0 = never) and zero padding.

    Returns
    -------
    list of numpy.ndarray
        ``digits[k]``: the counter of dimension ``k`` (padding included) per position.
    """
    digits, rest = [], positions
    for radix in padded_radices(wraps, before, after):
        rest, digit = np.divmod(rest, radix)
        digits.append(digit)
    digits.append(rest)
    return digits


def check_chain(kind: str, bd_id: int, bd: BufferDescriptor) -> None:
    """Check a BD in its slot: the BD number exists and a chain stays legal.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
        The DMA the BD is written to (must match ``bd.kind``).
    bd_id : int
        The BD's own number (not a field of the BD).
    bd : BufferDescriptor

    Raises
    ------
    BDError
        If ``bd_id`` is out of range for the kind, or a memory-tile BD with
        ``use_next_bd`` names a ``next_bd`` in the other half (0-23 serve channels
        0/2/4, 24-47 channels 1/3/5; a chain stays in its half).
    """
    kind = check_kind(kind, BDError)
    if bd.kind != kind:
        raise field_error(BDError, "bd.kind", bd.kind, f"must be {kind!r} for a {kind} DMA")
    bd_id = _as_int("bd_id", bd_id)
    if not 0 <= bd_id < BD_COUNT[kind]:
        raise field_error(BDError, "bd_id", bd_id,
                          f"must be in 0..{BD_COUNT[kind] - 1} for a {kind} DMA")
    if bd.use_next_bd:
        dma = DMA_KINDS[kind]
        half = dma.bd_half(bd_id)
        if bd.next_bd not in half:   # the message is built only for an error (a task
            # walk checks every load)
            dma.check_bd_in_half(BDError, "next_bd", bd.next_bd, half,
                                 f"a {dma.adjective} chain stays in its half: BD {bd_id} is in")
