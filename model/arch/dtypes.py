"""Element types of the adf graph API and how they pack into 32-bit DMA words.

:data:`ELEMENT_TYPES` is the one table: each adf type name with its width and, where
the graph model can carry it, its NumPy type. Every other name here is read from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TilingError, field_error

__all__ = [
    "ELEMENT_BITS",
    "ELEMENT_TYPES",
    "GRAPH_DTYPES",
    "WORD_BITS",
    "ElementType",
    "element_bits",
    "elements_per_word",
]

WORD_BITS = 32
"""The DMA moves whole 32-bit words."""


@dataclass(frozen=True)
class ElementType:
    """One adf element type.

    Parameters
    ----------
    name : str
        The adf name, e.g. ``"int16"`` or ``"cint16"``.
    bits : int
        Bits of one element (``float`` is 32-bit, as in adf).
    numpy_type : type or None
        The NumPy type the graph model (:mod:`aiedma.model.system.kernel`) carries it
        as; None for the types it does not carry (4- and 64-bit, complex, bfloat16).
    """

    name: str
    bits: int
    numpy_type: type | None = None


ELEMENT_TYPES: dict[str, ElementType] = {t.name: t for t in (
    ElementType("int4", 4), ElementType("uint4", 4),
    ElementType("int8", 8, np.int8), ElementType("uint8", 8, np.uint8),
    ElementType("int16", 16, np.int16), ElementType("uint16", 16, np.uint16),
    ElementType("bfloat16", 16),
    ElementType("int32", 32, np.int32), ElementType("uint32", 32, np.uint32),
    ElementType("float", 32, np.float32), ElementType("cint16", 32),
    ElementType("int64", 64), ElementType("uint64", 64),
    ElementType("cint32", 64), ElementType("cfloat", 64),
)}  # fmt: skip
"""Every adf element type by name, narrowest first."""

ELEMENT_BITS: dict[str, int] = {name: t.bits for name, t in ELEMENT_TYPES.items()}
"""Bits per element for each adf type name (read from :data:`ELEMENT_TYPES`)."""

GRAPH_DTYPES: dict[str, type] = {
    t.name: t.numpy_type
    for t in sorted(ELEMENT_TYPES.values(), key=lambda t: -t.bits)
    if t.numpy_type is not None
}
"""The types the graph model carries and their NumPy types, widest first: 32-bit ones
one to a word, 16-bit two, 8-bit four (read from :data:`ELEMENT_TYPES`)."""


def element_bits(dtype: str) -> int:
    """Bits of one element of the adf type ``dtype``.

    Parameters
    ----------
    dtype : str
        An adf type name, e.g. ``"int16"`` or ``"cint16"``.

    Raises
    ------
    TilingError
        If ``dtype`` is not an adf type name.
    """
    try:
        return ELEMENT_TYPES[dtype].bits
    except (KeyError, TypeError):
        names = ", ".join(ELEMENT_TYPES)
        raise field_error(TilingError, "dtype", dtype, f"must be one of {names}") from None


def elements_per_word(dtype: str) -> int:
    """Elements of ``dtype`` per 32-bit word (0 for 64-bit types, which take two words).

    Examples
    --------
    >>> [elements_per_word(t) for t in ("int32", "int16", "uint8", "int4", "cfloat")]
    [1, 2, 4, 8, 0]
    """
    return WORD_BITS // element_bits(dtype)
