"""RTL inside the system model: channel engines in the loop (:mod:`.loop`, on Amaranth or
Verilator), the whole RTL DMA (:mod:`.dma_block`, checked by :mod:`.dma_check`), and the
random graphs and task programs they run (:mod:`.random_programs`)."""
