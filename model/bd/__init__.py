"""The buffer-descriptor layer: registers, address streams, packets, tasks, lowering.

Owns: the one BD field table (:mod:`.fields`), ``BufferDescriptor`` (encode,
decode, validate, stream), packet headers, tasks (a channel's walk of chained
BDs) and the lowering from tilings to BDs (docs/bd.md).
May import: :mod:`aiedma.model.tiling`, :mod:`aiedma.model.arch`,
:mod:`aiedma.model.errors`.
"""

from .descriptor import BufferDescriptor, check_chain

__all__ = ["BufferDescriptor", "check_chain"]
