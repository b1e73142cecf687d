"""What the cocotb benches of the AXI tops share (:mod:`.axi_lite_bench`, :mod:`.axi_dma_bench`)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

from cocotb.triggers import RisingEdge

__all__ = ["pause_master", "pauses", "reset_top"]


def pauses(seed: int, probability: float) -> Iterator[bool]:
    """A cocotbext-axi pause generator: a pause in each cycle with ``probability``."""
    rng = random.Random(seed)
    return (rng.random() < probability for _ in itertools.count())


def pause_master(master: object, rng: random.Random, probability: float) -> None:
    """A random pause generator on each of an ``AxiLiteMaster``'s five channels (AW, W
    and AR pause their ``valid``, B and R their ``ready``; 0: none)."""
    write, read = master.write_if, master.read_if
    for channel in (write.aw_channel, write.w_channel, write.b_channel,
                    read.ar_channel, read.r_channel):
        if probability:
            channel.set_pause_generator(pauses(rng.getrandbits(32), probability))
        else:
            channel.clear_pause_generator()


async def reset_top(dut: object, cycles: int = 4) -> None:
    """``aresetn`` low for ``cycles`` cycles of ``aclk``, then one cycle out of reset."""
    dut.aresetn.value = 0
    for _ in range(cycles):
        await RisingEdge(dut.aclk)
    dut.aresetn.value = 1
    await RisingEdge(dut.aclk)
