"""Errors raised by the golden model.

Every error is a :class:`ValueError` whose message names the field, the value
that was given and the rule it breaks, so a user can fix the input without
reading the source.
"""

from __future__ import annotations

__all__ = [
    "AiedmaError",
    "AiedmaWarning",
    "BDError",
    "Hex",
    "NotModelledWarning",
    "PacketError",
    "TilingError",
    "UndocumentedBehaviourWarning",
    "field_error",
]


class AiedmaError(ValueError):
    """Base class of every input error the project raises."""


class TilingError(AiedmaError):
    """A ``tiling_parameters`` entry or port program breaks a rule of the tiling layer."""


class BDError(AiedmaError):
    """A buffer descriptor breaks a register or hardware rule."""


class PacketError(AiedmaError):
    """A packet header is malformed (bad field or parity)."""


class AiedmaWarning(UserWarning):
    """Base class of the warnings the model gives on input it runs but cannot vouch for."""


class UndocumentedBehaviourWarning(AiedmaWarning):
    """The hardware accepts the input, but what it does with it is not documented.

    The model runs it with a behaviour it chose (docs/decisions.md) and says so, rather
    than refusing what a driver writes.
    """


class NotModelledWarning(AiedmaWarning):
    """The hardware does something with the input that the model does not model yet; the
    model runs on as if it were not set, and says so rather than ignore it silently."""


class Hex(int):
    """An int shown as a 32-bit hex word in messages (register words read better so)."""

    def __str__(self) -> str:
        return f"0x{int(self):08X}"

    __repr__ = __str__


def field_error(cls: type[AiedmaError], field: str, value: object, rule: str) -> AiedmaError:
    """Build an error of class ``cls`` in the project's one message format.

    The format is ``"<field>=<value>: <rule>"``, for example
    ``"tiling_dimension[1]=0: sizes must be at least 1"``.
    """
    return cls(f"{field}={_show(value)}: {rule}")


def _show(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)
