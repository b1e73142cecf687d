"""Element types of the adf graph API and how they pack into 32-bit DMA words."""

from __future__ import annotations

from ..errors import TilingError, field_error

__all__ = ["ELEMENT_BITS", "WORD_BITS", "element_bits", "elements_per_word"]

WORD_BITS = 32
"""The DMA moves whole 32-bit words."""

ELEMENT_BITS: dict[str, int] = {
    "int4": 4, "uint4": 4,
    "int8": 8, "uint8": 8,
    "int16": 16, "uint16": 16, "bfloat16": 16,
    "int32": 32, "uint32": 32, "float": 32, "cint16": 32,
    "int64": 64, "uint64": 64, "cint32": 64, "cfloat": 64,
}  # fmt: skip
"""Bits per element for each adf type name (``float`` is 32-bit, as in adf)."""


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
        return ELEMENT_BITS[dtype]
    except (KeyError, TypeError):
        names = ", ".join(ELEMENT_BITS)
        raise field_error(TilingError, "dtype", dtype, f"must be one of {names}") from None


def elements_per_word(dtype: str) -> int:
    """Elements of ``dtype`` per 32-bit word (0 for 64-bit types, which take two words)."""
    return WORD_BITS // element_bits(dtype)
