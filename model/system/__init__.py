"""The system simulator: memories, locks, DMA channels, streams, kernels, graphs.

Owns: the tile / memory / lock / DMA system stepped cycle by cycle by one
scheduler, and the adf-style graph API compiled onto it through the lowering.
May import: every other layer of the model.
"""
