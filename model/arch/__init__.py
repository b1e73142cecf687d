"""The AIE-ML facts every layer of the model shares: DMA kinds, directions, element types.

Owns: the vocabulary (which DMA kinds exist and what each has, the two transfer
directions, the adf element types and how they pack into 32-bit words).
May import: :mod:`aiedma.model.errors` only. Every other layer reads it.
"""
