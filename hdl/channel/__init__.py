"""A whole DMA channel in RTL (:class:`Channel`) and the blocks it is made of.

One module per part: :mod:`.fetch` (the fetch stage), :mod:`.record` (the BDs in
flight), :mod:`.lock_requests`, :mod:`.completion`, :mod:`.release_queue`,
:mod:`.packet_stage`, and :mod:`.direction` (what differs between MM2S and S2MM);
:mod:`.channel` joins them.
"""

from .channel import Channel
from .direction import DIRECTION_PARTS, mm2s_signature, s2mm_signature
from .record import RECORDS

__all__ = ["DIRECTION_PARTS", "RECORDS", "Channel", "mm2s_signature", "s2mm_signature"]
