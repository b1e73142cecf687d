"""The AIE-ML facts every layer of the model shares: DMA kinds, directions, element types.

Owns: the vocabulary, each written once. :mod:`.kinds` says which DMA kinds exist
and what each has (BDs and their halves, channels, dimensions, padding, address
width, locks, memory, registers); :mod:`.directions` maps read/write to
MM2S/S2MM; :mod:`.dtypes` lists the adf element types and how they pack into
32-bit words.
May import: :mod:`aiedma.model.errors` and NumPy only. Every other layer reads it.
"""
