"""An Amaranth simulation elaborated once and reset between runs.

Elaborating a design for Amaranth's simulator costs from half a second (a channel's
engine) to over ten (a memory tile's whole DMA), where a run of a test or a random
program costs as long or less; the harness and the whole-DMA checks run one design
hundreds of times. ``Simulator.reset`` puts every signal and memory back to its initial
value and restarts the testbench and the processes, which call whatever the next run set.
"""

from __future__ import annotations

import time
from typing import Any

from amaranth.sim import Simulator

__all__ = ["ResetSimulation"]


class ResetSimulation:
    """One design on Amaranth's simulator, with a testbench and ``processes`` processes
    whose bodies each :meth:`run` sets.

    Parameters
    ----------
    dut : Elaboratable
    processes : int
        Processes a run adds (``add_process``: memory ports) beside its testbench.
    """

    def __init__(self, dut: Any, processes: int = 0) -> None:
        self.dut = dut
        self.sim = Simulator(dut)
        self.sim.add_clock(1e-8)
        self._bench: Any = None
        self._processes: list[Any] = [None] * processes
        self._used = False

        async def bench(ctx: Any) -> None:
            await self._bench(ctx)

        self.sim.add_testbench(bench)
        for index in range(processes):
            async def process(ctx: Any, index: int = index) -> None:
                await self._processes[index](ctx)

            self.sim.add_process(process)

    def run(self, bench: Any, *processes: Any) -> float:
        """Run ``bench`` and ``processes`` (async functions of the simulator context) from
        reset; the wall time in seconds. A run that raises leaves the simulator mid-step:
        :meth:`forget` is called, and the caller builds a fresh one next."""
        if self._used:
            self.sim.reset()
        self._used, self._bench, self._processes[:] = True, bench, processes
        start = time.perf_counter()
        try:
            self.sim.run()
        except BaseException:
            self.forget()
            raise
        return time.perf_counter() - start

    def forget(self) -> None:
        """Drop this simulation from whatever cache holds it (nothing here)."""
