"""Payload layouts of the RTL's streams, built from the model's BD field table.

The BD payload has one member per address-generation field (in table order) holding
the field's *actual* value, as wide as :attr:`~aiedma.model.bd.fields.Field.value_width`
says: a 13-bit minus-one step size is a 14-bit member (1..8192). No width is written
here by hand, so the RTL cannot drift from the register format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amaranth.hdl import Shape, signed, unsigned
from amaranth.lib import data

# The model's one kind check (an AiedmaError, a ValueError), named here too because the
# RTL blocks import it from this module.
from ..model.arch.kinds import check_kind
from ..model.bd.fields import Field
from ..model.cycle.contract import ADDRESS_BITS, DATA_BITS, address_generation_fields

if TYPE_CHECKING:  # the RTL takes only layouts and constants from the model
    from ..model.bd.descriptor import BufferDescriptor

__all__ = [
    "bd_layout",
    "bd_to_payload",
    "beat_layout",
    "check_kind",
    "data_beat_layout",
    "field_shape",
]


def field_shape(field: Field) -> Shape:
    """The Amaranth shape of a field's actual value."""
    return signed(field.value_width) if field.signed else unsigned(field.value_width)


def bd_layout(kind: str) -> data.StructLayout:
    """Layout of a BD as the address generator takes it: actual values of its fields.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Returns
    -------
    amaranth.lib.data.StructLayout
        One member per field of
        :func:`~aiedma.model.cycle.contract.address_generation_fields`, in table order.
    """
    return data.StructLayout({f.name: field_shape(f) for f in address_generation_fields(kind)})


def beat_layout(kind: str) -> data.StructLayout:
    """Layout of one address beat: ``address`` (word, modulo the width), ``zero``, ``last``.

    ``zero`` marks a padding word (its ``address`` is 0); ``last`` marks a BD's final beat.
    """
    return data.StructLayout({
        "address": unsigned(ADDRESS_BITS[kind]),
        "zero": 1,
        "last": 1,
    })


def data_beat_layout() -> data.StructLayout:
    """Layout of one stream word: ``data`` (32 bits) and ``last``."""
    return data.StructLayout({"data": unsigned(DATA_BITS), "last": 1})


def bd_to_payload(bd: BufferDescriptor) -> dict[str, int]:
    """The BD payload of a model BD, as a dict for ``ctx.set(stream.payload, ...)``."""
    return {f.name: getattr(bd, f.name) for f in address_generation_fields(bd.kind)}
