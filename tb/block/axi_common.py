"""What the cocotb benches of the AXI tops share (:mod:`.axi_lite_bench`, :mod:`.axi_dma_bench`)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from cocotb.triggers import RisingEdge

__all__ = ["pauses", "reset_top"]


def pauses(seed: int, probability: float) -> Iterator[bool]:
    """A cocotbext-axi pause generator: a pause in each cycle with ``probability``."""
    rng = random.Random(seed)
    return (rng.random() < probability for _ in itertools.count())


async def reset_top(dut: object, cycles: int = 4) -> None:
    """``aresetn`` low for ``cycles`` cycles of ``aclk``, then one cycle out of reset."""
    dut.aresetn.value = 0
    for _ in range(cycles):
        await RisingEdge(dut.aclk)
    dut.aresetn.value = 1
    await RisingEdge(dut.aclk)
