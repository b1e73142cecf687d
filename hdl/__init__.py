"""The Amaranth RTL of the AIE-ML DMA (imports the model for layouts and constants only)."""
