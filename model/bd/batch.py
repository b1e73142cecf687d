"""Many BDs of one kind as NumPy columns: checked, encoded and streamed without a loop per BD.

A regression of 10^5 random BDs spends most of its time building
:class:`~.descriptor.BufferDescriptor` objects one by one and asking each for its
stream. A :class:`BDBatch` holds the same values as one int64 column per field and
does the same work over all BDs at once:

* :meth:`BDBatch.check` applies the constructor's rules (every field's range, the
  padding rules of :data:`~.descriptor.PADDING_NEEDS_WRAP`, ``enable_packet`` with
  data) to every BD; a broken one is reported with the constructor's own message and
  the BD's index, and ``iteration_current`` at or past ``iteration_wrap`` gives the
  constructor's warning once for the batch;
* :meth:`BDBatch.encode` gives every BD's register words (as
  :meth:`~.descriptor.BufferDescriptor.encode` does);
* :meth:`BDBatch.streams` gives every BD's word addresses (as
  :meth:`~.descriptor.BufferDescriptor.stream` does), concatenated;
* :meth:`BDBatch.bds` gives the objects, for callers that need them.

The tests check each against the per-BD methods.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from ..arch.kinds import check_kind
from ..errors import BDError, UndocumentedBehaviourWarning, field_error
from .descriptor import PADDING_NEEDS_WRAP, BufferDescriptor
from .fields import ADDRESS_DIMENSIONS, BURST_LENGTHS, FIELDS, HAS_PADDING, WORDS, Encoding

__all__ = ["BDBatch"]


class BDBatch:
    """BDs of one kind, one int64 NumPy column of actual values per field.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    columns : mapping of str to array_like
        Field values by name, one entry per BD; omitted fields take their default
        (as in :class:`~.descriptor.BufferDescriptor`). Every column must have the
        same length.
    count : int, optional
        The number of BDs, needed only when ``columns`` is empty.

    Raises
    ------
    BDError
        For an unknown kind or field, columns of different lengths, or a BD that
        the constructor of :class:`~.descriptor.BufferDescriptor` would refuse
        (:meth:`check`).

    Notes
    -----
    The columns are read-only: the streams are computed once and kept.
    """

    __slots__ = ("_columns", "_kind", "_streams")

    def __init__(self, kind: str, columns: Mapping[str, object], *,
                 count: int | None = None) -> None:
        kind = check_kind(kind, BDError)
        table = {f.name: f for f in FIELDS[kind]}
        given: dict[str, np.ndarray] = {}
        for name, column in columns.items():
            if name not in table:
                # The constructor's message names the field and suggests a spelling.
                BufferDescriptor(kind, **{name: 0})
            array = np.asarray(column)
            if array.ndim != 1 or not (array.size == 0 or np.issubdtype(array.dtype,
                                                                        np.integer)):
                raise field_error(BDError, name, f"array of {array.dtype} {array.shape}",
                                  "a batch column must be a one-dimensional integer array")
            given[name] = array.astype(np.int64)
        sizes = {a.size for a in given.values()} | ({count} if count is not None else set())
        if len(sizes) > 1:
            raise field_error(BDError, "columns", sorted(sizes),
                              "every column of a batch must have the same length")
        size = sizes.pop() if sizes else 0
        self._kind = kind
        self._columns = {}
        for f in FIELDS[kind]:
            column = given[f.name] if f.name in given else np.full(size, f.default, np.int64)
            column.setflags(write=False)
            self._columns[f.name] = column
        self._streams: tuple[np.ndarray, np.ndarray] | None = None
        self.check()

    @classmethod
    def from_bds(cls, kind: str, bds: Sequence[BufferDescriptor]) -> BDBatch:
        """The batch holding ``bds`` (each of ``kind``), in order."""
        kind = check_kind(kind, BDError)
        for i, bd in enumerate(bds):
            if bd.kind != kind:
                raise field_error(BDError, f"bds[{i}].kind", bd.kind, f"must be {kind!r}")
        names = [f.name for f in FIELDS[kind]]
        values = np.array([bd._values for bd in bds], dtype=np.int64).reshape(-1, len(names))
        return cls(kind, {name: values[:, i] for i, name in enumerate(names)},
                   count=len(bds))

    # --- access ----------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"tile"``, ``"memtile"`` or ``"shim"``."""
        return self._kind

    def __len__(self) -> int:
        return self._columns["buffer_length"].size

    def __getitem__(self, name: str) -> np.ndarray:
        """The column of field ``name`` (read-only int64)."""
        return self._columns[name]

    @property
    def lengths(self) -> np.ndarray:
        """Every BD's ``buffer_length`` (words of its stream)."""
        return self._columns["buffer_length"]

    def bd(self, index: int) -> BufferDescriptor:
        """BD ``index`` as an object (validated by its constructor)."""
        return BufferDescriptor(self._kind, **{name: int(c[index])
                                               for name, c in self._columns.items()})

    def bds(self) -> list[BufferDescriptor]:
        """Every BD as an object, in order.

        The batch was checked with the constructor's rules when it was made, so the
        objects are built from the checked values without checking each again (a
        regression asks for 10^5 of them).
        """
        rows = np.stack(list(self._columns.values()), axis=1).tolist() if len(self) else []
        return [BufferDescriptor.from_checked(self._kind, tuple(row)) for row in rows]

    # --- rules -----------------------------------------------------------------------

    def check(self) -> None:
        """Raise the constructor's error for the first BD that breaks a rule.

        Raises
        ------
        BDError
            ``"BD <i> of the batch: <the constructor's message>"`` for the first
            BD ``i`` with a field out of range or a broken cross-field rule.
        """
        bad = np.zeros(len(self), dtype=bool)
        c = self._columns
        for f in FIELDS[self._kind]:
            if f.encoding is Encoding.BURST_LENGTH:
                bad |= ~np.isin(c[f.name], BURST_LENGTHS)
            else:
                bad |= (c[f.name] < f.minimum) | (c[f.name] > f.maximum)
        if HAS_PADDING[self._kind]:
            for wrap, forbidden in PADDING_NEEDS_WRAP:
                for name in forbidden:
                    bad |= (c[wrap] == 0) & (c[name] != 0)
        bad |= (c["enable_packet"] != 0) & (c["buffer_length"] == 0)
        past = np.flatnonzero(c["iteration_current"] >= c["iteration_wrap"])
        if bad.any():
            index = int(np.flatnonzero(bad)[0])
            try:
                self.bd(index)
            except BDError as error:
                raise BDError(f"BD {index} of the batch: {error}") from None
            raise AssertionError(f"BD {index} of the batch: the vectorised check refuses "
                                 "what the constructor accepts")
        if past.size:
            warnings.warn(UndocumentedBehaviourWarning(
                f"{past.size} BD(s) of the batch, the first BD {int(past[0])}: "
                f"iteration_current at or past iteration_wrap; the hardware's counter is "
                f"undocumented there (the model writes back 0 after the load; "
                f"docs/decisions.md)"), stacklevel=2)

    # --- registers -------------------------------------------------------------------

    def encode(self) -> np.ndarray:
        """Every BD's register words, as :meth:`~.descriptor.BufferDescriptor.encode`.

        Returns
        -------
        numpy.ndarray
            uint32, shape ``(len(self), WORDS[kind])``; reserved bits 0.
        """
        words = np.zeros((len(self), WORDS[self._kind]), dtype=np.uint64)
        for f in FIELDS[self._kind]:
            value = self._columns[f.name]
            if f.encoding is Encoding.MINUS_ONE:
                stored = value - 1
            elif f.encoding is Encoding.BURST_LENGTH:
                stored = np.searchsorted(np.array(BURST_LENGTHS), value)
            else:   # plain, or signed stored as two's complement in its bits
                stored = value & ((1 << f.bits) - 1)
            stored = stored.astype(np.uint64)
            for s in f.slices:
                words[:, s.word] |= (stored & np.uint64((1 << s.width) - 1)) << np.uint64(s.lsb)
                stored = stored >> np.uint64(s.width)
        return words.astype(np.uint32)

    # --- streams ---------------------------------------------------------------------

    def streams(self) -> tuple[np.ndarray, np.ndarray]:
        """Every BD's word addresses, concatenated in BD order (computed once).

        BD ``i``'s stream is ``addresses[offsets[i]:offsets[i + 1]]``, equal to
        ``self.bd(i).stream()``: ``-1`` for a zero word, addresses not reduced.

        Returns
        -------
        addresses : numpy.ndarray
            int64, ``lengths.sum()`` entries (read-only).
        offsets : numpy.ndarray
            int64, ``len(self) + 1`` entries: where each BD's stream starts.

        Notes
        -----
        Each position is split into its padded digits as
        :func:`~.descriptor.padded_digits` does, one ``divmod`` per dimension over
        every beat of every BD, with each beat's radix taken from its own BD; a
        digit in padding makes the word a zero word. Dimensions above a BD's open
        one (the first that never wraps) never move.
        """
        if self._streams is None:
            self._streams = self._compute_streams()
        return self._streams

    def first_radices(self) -> np.ndarray:
        """Per BD, D0's padded range ``before + wrap + after``; 0 where D0 never wraps.

        A stream position ``p`` of the BD has D0 counter ``p % radix`` (see
        :func:`~.descriptor.padded_radices`); with radix 0, D0 is the open dimension.
        """
        wrap = self._columns["d0_wrap"]
        return np.where(wrap > 0, wrap + self._pad(0, "before") + self._pad(0, "after"), 0)

    def _pad(self, k: int, side: str) -> np.ndarray | int:
        name = f"d{k}_zero_{side}"
        return self._columns[name] if name in self._columns else 0

    def _compute_streams(self) -> tuple[np.ndarray, np.ndarray]:
        c = self._columns
        lengths = c["buffer_length"]
        offsets = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        owner = np.repeat(np.arange(len(self)), lengths)   # the BD of each beat
        rest = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[:-1][owner]
        start = c["base_address"] + c["iteration_current"] * c["iteration_stepsize"]
        address = start[owner]
        zero = np.zeros(rest.size, dtype=bool)
        n = ADDRESS_DIMENSIONS[self._kind]
        # still[b]: BD b's dimensions so far all wrap, so dimension k has a radix.
        still = np.ones(len(self), dtype=bool)
        for k in range(n):
            step = c[f"d{k}_stepsize"]
            if k == n - 1:   # the outermost dimension: no wrap, no padding
                address += np.where(still[owner], rest * step[owner], 0)
                break
            wrap, before = c[f"d{k}_wrap"], self._pad(k, "before")
            wraps = still & (wrap > 0)
            # Where dimension k never wraps it is the open one: it takes the rest of
            # the count (its "before" padding still applies) and the loop ends there.
            here, wrapping = still[owner], wraps[owner]
            radix = np.where(wraps, wrap + before + self._pad(k, "after"), 1)
            quotient, remainder = np.divmod(rest, radix[owner])
            data = np.where(wrapping, remainder, rest) - np.broadcast_to(before,
                                                                        len(self))[owner]
            zero |= here & ((data < 0) | (wrapping & (data >= wrap[owner])))
            address += np.where(here, data * step[owner], 0)
            rest = np.where(wrapping, quotient, rest)
            still = wraps
        address[zero] = -1
        address.setflags(write=False)
        offsets.setflags(write=False)
        return address, offsets
