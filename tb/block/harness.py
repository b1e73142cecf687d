"""Run the RTL on your own BDs, checked against the golden model on every cycle.

One harness per block: ``run_addrgen`` (the BD address generator), ``run_mm2s``
(an MM2S channel: generator and read datapath) and ``run_s2mm`` (an S2MM channel:
generator and write datapath) are the public entry points (also used by the tests
and by ``make sim``); ``check_addrgen`` / ``check_mm2s`` / ``check_s2mm`` return
the run's figures as well. Every run is compared cycle by cycle with the timing model by
the one scoreboard, whichever simulator runs it:

* ``"amaranth"``: Amaranth's simulator, in process (the default; pip only);
* ``"verilator"`` / ``"icarus"``: cocotb 2 on the exported Verilog.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from amaranth.sim import Simulator

from ...hdl.addrgen import BDAddressGenerator
from ...hdl.engine import MM2SEngine, S2MMEngine
from ...hdl.layouts import bd_to_payload
from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.timing import addrgen_trace, held_high, mm2s_trace, s2mm_trace
from ...model.errors import AiedmaError, field_error
from ..common.beats import expected_beats, s2mm_memory
from ..common.memory import bram_read_port, bram_write_port
from ..common.reset_sim import ResetSimulation
from ..common.scoreboard import (
    AddrgenScoreboard,
    Mismatch,
    MM2SScoreboard,
    RunSummary,
    S2MMScoreboard,
)
from ..common.simulators import SIMULATORS, check_simulator

__all__ = ["RUNS_ON", "S2MM_MEMORY_WORDS", "ReusedSimulation", "RunResult", "check_addrgen",
           "check_mm2s", "check_s2mm", "run_addrgen", "run_mm2s", "run_s2mm"]

RUNS_ON = SIMULATORS
"""The harnesses run on every simulator."""

# Cycles run past the model's last one, to check the RTL then stays quiet.
_TAIL = 2

S2MM_MEMORY_WORDS = 4096
"""Words of the memory an S2MM run writes when none is given (indexed modulo its size)."""


@dataclass(frozen=True)
class RunResult:
    """What one checked run produced.

    Attributes
    ----------
    beats : list of tuple
        ``(address, zero, last)`` per address beat, ``(data, last)`` per MM2S word,
        or ``(address, data)`` per S2MM write.
    summary : RunSummary
        BDs, words, cycles and bubbles with ready high.
    cycles_per_second : float
        Simulated cycles per second of wall time (driving and checking included).
    memory : numpy.ndarray or None
        The memory after an S2MM run's writes (None for the other blocks).
    """

    beats: list[tuple]
    summary: RunSummary
    cycles_per_second: float
    memory: np.ndarray | None = None


def _check_inputs(kind: str, bds: Sequence[BufferDescriptor], simulator: str) -> list:
    check_simulator(simulator, RUNS_ON, "the block harness")
    bds = list(bds)
    for i, bd in enumerate(bds):
        if not isinstance(bd, BufferDescriptor) or bd.kind != kind:
            raise field_error(AiedmaError, f"bds[{i}]", bd,
                              f"must be a BufferDescriptor of kind {kind!r}")
    return bds


def _stimulus(block: str, kind: str, bds: list, ready, offer, seed, memory=None) -> dict:
    return {"block": block, "kind": kind,
            "bds": [bd.to_dict(include_defaults=True) for bd in bds],
            "ready": None if ready is None else [bool(r) for r in ready],
            "offer": None if offer is None else [bool(o) for o in offer],
            "seed": seed,
            "memory": None if memory is None else [int(w) for w in memory]}


def _cocotb(top: str, simulator: str, stimulus: dict, waves: bool) -> dict:
    from .cocotb_runner import run_cocotb  # cocotb is imported only when asked for

    result = run_cocotb(top, simulator, stimulus, waves=waves)
    if result.get("mismatch"):
        raise Mismatch(f"{simulator}: {result['mismatch']}")
    return result


def check_addrgen(kind: str, bds: Sequence[BufferDescriptor],
                  ready: Sequence[bool] | None = None, simulator: str = "amaranth", *,
                  offer: Sequence[bool] | None = None, seed: int | None = None,
                  waves: str | Path | None = None, dut=None) -> RunResult:
    """Run BDs through the address generator RTL and check every cycle against the model.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    bds : sequence of BufferDescriptor
        Offered back to back (as ``offer`` allows) on the BD input.
    ready : sequence of bool, optional
        ``o.ready`` per cycle; None (or past its end): high.
    simulator : {"amaranth", "verilator", "icarus"}
    offer : sequence of bool, optional
        Whether the next BD is offered in each cycle; None: always.
    seed : int, optional
        Printed with a mismatch, to replay the stimulus that made it.
    waves : path, optional
        Write a waveform there (VCD; for cocotb, the simulator's own format in build/).
    dut : wiring.Component, optional
        The block to run on Amaranth's simulator, with the generator's ports (a mutant
        in the tests); ``BDAddressGenerator(kind)`` if omitted.

    Raises
    ------
    Mismatch
        At the first cycle where the RTL differs from the model.
    """
    bds = _check_inputs(kind, bds, simulator)
    if dut is not None and simulator != "amaranth":
        raise field_error(AiedmaError, "dut", type(dut).__name__,
                          "a block of your own runs on simulator='amaranth' only")
    trace = addrgen_trace(kind, bds, ready, offer)
    if simulator != "amaranth":
        result = _cocotb(f"aiedma_addrgen_{kind}", simulator,
                         _stimulus("addrgen", kind, bds, ready, offer, seed), waves is not None)
        return RunResult([tuple(b) for b in result["beats"]], RunSummary(**result["summary"]),
                         result["cycles_per_second"])
    board = AddrgenScoreboard(kind, bds, trace, seed)
    reused = ReusedSimulation.of("addrgen", kind) if dut is None and waves is None else None
    dut = dut if dut is not None else reused.dut if reused else BDAddressGenerator(kind)

    def check(cycle: int, bd_ready: bool, o_valid: bool, beat) -> None:
        board.check(cycle, bd_ready, o_valid, int(beat.address), bool(beat.zero),
                    bool(beat.last))

    bench = _driver(dut.i, dut.o, bds, trace.cycles + _TAIL, ready, offer, check)
    elapsed = reused.run(bench) if reused else simulate(dut, bench, waves)
    return RunResult(board.beats, board.summary(), (trace.cycles + _TAIL) / elapsed)


def check_mm2s(kind: str, bds: Sequence[BufferDescriptor], memory: np.ndarray,
               ready: Sequence[bool] | None = None, simulator: str = "amaranth", *,
               offer: Sequence[bool] | None = None, seed: int | None = None,
               waves: str | Path | None = None) -> RunResult:
    """Run BDs through the MM2S channel (address generator + datapath) over ``memory``.

    The memory is a BRAM with one cycle of read latency, indexed modulo its size;
    every cycle of the output stream is checked against the model. Parameters as
    :func:`check_addrgen`.
    """
    bds = _check_inputs(kind, bds, simulator)
    memory = np.asarray(memory, dtype=np.int64)
    trace = mm2s_trace(kind, bds, memory, ready, offer)
    if simulator != "amaranth":
        result = _cocotb(f"aiedma_mm2s_channel_{kind}", simulator,
                         _stimulus("mm2s_channel", kind, bds, ready, offer, seed, memory),
                         waves is not None)
        return RunResult([tuple(w) for w in result["words"]], RunSummary(**result["summary"]),
                         result["cycles_per_second"])
    board = MM2SScoreboard(kind, bds, trace, seed)
    reused = ReusedSimulation.of("mm2s", kind) if waves is None else None
    dut = reused.dut if reused else MM2SEngine(kind)

    def check(cycle: int, bd_ready: bool, o_valid: bool, word) -> None:
        board.check(cycle, o_valid, int(word.data), bool(word.last))

    bench = _driver(dut.bd, dut.o, bds, trace.cycles + _TAIL, ready, offer, check)
    port = bram_read_port(dut, memory, seed=seed or 0)
    elapsed = reused.run(bench, port) if reused else simulate(dut, bench, waves, port)
    return RunResult(board.words, board.summary(), (trace.cycles + _TAIL) / elapsed)


def check_s2mm(kind: str, bds: Sequence[BufferDescriptor], words: Sequence[int],
               memory: np.ndarray | None = None, valid: Sequence[bool] | None = None,
               simulator: str = "amaranth", *, offer: Sequence[bool] | None = None,
               seed: int | None = None, waves: str | Path | None = None) -> RunResult:
    """Run BDs and data words through the S2MM channel (address generator + datapath).

    The write port stores into a copy of ``memory`` (indexed modulo its size); every
    cycle of the BD input's and the data input's ``ready`` and of the write port is
    checked against the model, and the memory afterwards against the model's.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    bds : sequence of BufferDescriptor
        Without zero padding (padding exists on MM2S only).
    words : sequence of int
        The data stream, one 32-bit word per beat of ``bds``.
    memory : numpy.ndarray, optional
        The memory before the writes (default: :data:`S2MM_MEMORY_WORDS` zero words).
    valid : sequence of bool, optional
        Whether the producer offers the next word in each cycle; None: always.
    simulator, offer, seed, waves
        As :func:`check_addrgen`.

    Raises
    ------
    AiedmaError
        A BD with padding, or not one word per beat.
    Mismatch
        At the first cycle where the RTL differs from the model.
    """
    bds = _check_inputs(kind, bds, simulator)
    for i, bd in enumerate(bds):
        padded = [name for name in bd.fields() if "_zero_" in name and getattr(bd, name)]
        if padded:
            raise field_error(AiedmaError, f"bds[{i}].{padded[0]}", getattr(bd, padded[0]),
                              "zero padding exists on MM2S only; an S2MM BD has none")
    beats = sum(bd.buffer_length for bd in bds)
    words = [int(w) for w in words]
    if len(words) != beats:
        raise field_error(AiedmaError, "len(words)", len(words),
                          f"the BDs take {beats} words, one per beat")
    if any(not 0 <= w < 1 << 32 for w in words):
        bad = next(w for w in words if not 0 <= w < 1 << 32)
        raise field_error(AiedmaError, "words", bad, "a stream word is 32 bits unsigned")
    memory = (np.zeros(S2MM_MEMORY_WORDS, dtype=np.int64) if memory is None
              else np.array(memory, dtype=np.int64))
    want = s2mm_memory(expected_beats(bds), words, memory)
    trace = s2mm_trace(kind, bds, words, valid, offer)
    if simulator != "amaranth":
        stimulus = _stimulus("s2mm_channel", kind, bds, valid, offer, seed, memory)
        stimulus["words"] = words
        result = _cocotb(f"aiedma_s2mm_channel_{kind}", simulator, stimulus, waves is not None)
        written = np.array(result["memory"], dtype=np.int64)
        run = RunResult([tuple(w) for w in result["writes"]], RunSummary(**result["summary"]),
                        result["cycles_per_second"], written)
    else:
        board = S2MMScoreboard(kind, bds, trace, seed)
        reused = ReusedSimulation.of("s2mm", kind) if waves is None else None
        dut = reused.dut if reused else S2MMEngine(kind)
        written = memory.copy()
        bench = s2mm_driver(dut, bds, words, trace.cycles + _TAIL, valid, offer, board)
        port = bram_write_port(dut, written)
        elapsed = reused.run(bench, port) if reused else simulate(dut, bench, waves, port)
        run = RunResult(board.writes, board.summary(), (trace.cycles + _TAIL) / elapsed,
                        written)
    if not np.array_equal(run.memory, want):
        address = int(np.flatnonzero(run.memory != want)[0])
        raise Mismatch(f"{kind} S2MM channel: memory word {address} is "
                       f"0x{int(run.memory[address]):08X} after the run, model "
                       f"0x{int(want[address]):08X}"
                       + (f"; replay with seed={seed}" if seed is not None else ""))
    return run


def s2mm_driver(dut: S2MMEngine, bds: list, words: list[int], cycles: int, valid, offer,
                board: S2MMScoreboard):
    """The S2MM testbench: BDs on ``bd`` and words on ``i``, one cycle per loop.

    Parameters
    ----------
    dut : S2MMEngine
        The engine under test.
    bds : list of BufferDescriptor
        Offered in order on ``bd``.
    words : list of int
        Offered in order on ``i``.
    cycles : int
        How many cycles the testbench runs.
    valid, offer : pattern or None
        When a word, and a BD, are offered (:func:`~aiedma.model.cycle.timing.held_high`).
    board : S2MMScoreboard
        Checks the sampled ports of every cycle.

    Returns
    -------
    async callable
        The testbench, for :func:`simulate`.
    """
    payloads = [bd_to_payload(bd) for bd in bds]

    async def bench(ctx) -> None:
        bds_taken = words_taken = 0
        for cycle in range(cycles):
            offered = bds_taken < len(payloads) and held_high(offer, cycle)
            ctx.set(dut.bd.valid, offered)
            if offered:
                ctx.set(dut.bd.payload, payloads[bds_taken])
            sending = words_taken < len(words) and held_high(valid, cycle)
            ctx.set(dut.i.valid, sending)
            if sending:
                ctx.set(dut.i.payload, {"data": words[words_taken], "last": 0})
            _, _, bd_ready, i_ready, we, address, data = await ctx.tick().sample(
                dut.bd.ready, dut.i.ready, dut.mem_we, dut.mem_addr, dut.mem_data)
            board.check(cycle, bool(bd_ready), bool(i_ready), bool(we), int(address), int(data))
            bds_taken += offered and bool(bd_ready)
            words_taken += sending and bool(i_ready)

    return bench


def _driver(bd_port, out_port, bds: list, cycles: int, ready, offer, check):
    """A testbench driving one cycle per loop, as model/cycle/contract.py numbers cycles.

    In each cycle it offers the next BD (as ``offer`` allows), sets ``ready`` from
    its pattern, samples the ports at the edge and hands them to ``check``.
    """
    payloads = [bd_to_payload(bd) for bd in bds]

    async def bench(ctx) -> None:
        taken = 0
        for cycle in range(cycles):
            offered = taken < len(payloads) and held_high(offer, cycle)
            ctx.set(bd_port.valid, offered)
            if offered:
                ctx.set(bd_port.payload, payloads[taken])
            ctx.set(out_port.ready, held_high(ready, cycle))
            _, _, bd_ready, o_valid, payload = await ctx.tick().sample(
                bd_port.ready, out_port.valid, out_port.payload)
            check(cycle, bool(bd_ready), bool(o_valid), payload)
            taken += offered and bool(bd_ready)

    return bench


class ReusedSimulation(ResetSimulation):
    """One block of the harness (:class:`~..common.reset_sim.ResetSimulation`), elaborated
    once per process and thread and reset between runs."""

    cache: ClassVar[dict[tuple[str, str, int], ReusedSimulation]] = {}
    """By block, kind and thread (Dask shards may run as threads of one process)."""
    _MAKE: ClassVar[dict[str, tuple[Callable[[str], Any], int]]] = {
        # block -> (its class, how many memory-port processes a run adds)
        "addrgen": (BDAddressGenerator, 0), "mm2s": (MM2SEngine, 1), "s2mm": (S2MMEngine, 1)}

    def __init__(self, block: str, kind: str) -> None:
        make, processes = self._MAKE[block]
        self.key = (block, kind, threading.get_ident())
        super().__init__(make(kind), processes)

    @classmethod
    def of(cls, block: str, kind: str) -> ReusedSimulation:
        """The simulation of ``block`` (``addrgen``, ``mm2s``, ``s2mm``) of ``kind`` in this
        thread."""
        key = (block, kind, threading.get_ident())
        if key not in cls.cache:
            cls.cache[key] = cls(block, kind)
        return cls.cache[key]

    def forget(self) -> None:
        if self.cache.get(self.key) is self:
            del self.cache[self.key]


def simulate(dut, bench, waves, *processes) -> float:
    """Run one Amaranth simulation of ``dut``; its wall time in seconds.

    ``bench`` is the testbench (``add_testbench``), ``processes`` are memory ports
    (``add_process``), and ``waves`` a VCD path or None.
    """
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    for process in processes:
        sim.add_process(process)
    start = time.perf_counter()
    if waves is None:
        sim.run()
    else:
        Path(waves).parent.mkdir(parents=True, exist_ok=True)
        with sim.write_vcd(str(waves)):
            sim.run()
    return time.perf_counter() - start


def run_addrgen(kind: str, bds: Sequence[BufferDescriptor], ready: Sequence[bool] | None = None,
                simulator: str = "amaranth") -> list[tuple[int, bool, bool]]:
    """The ``(address, zero, last)`` beats the address generator RTL produced for ``bds``.

    The run is checked against the golden model on every cycle (raises
    :class:`~aiedma.tb.common.scoreboard.Mismatch`); see :func:`check_addrgen`.

    Examples
    --------
    >>> from aiedma.model import BufferDescriptor
    >>> bd = BufferDescriptor("memtile", buffer_length=6, d0_wrap=3, d0_zero_before=1,
    ...                       valid_bd=1)
    >>> beats = run_addrgen("memtile", [bd])  # a zero word, then 3 data words per row
    >>> beats[:4]
    [(0, True, False), (0, False, False), (1, False, False), (2, False, False)]
    >>> beats[4:]  # D1 never wraps: the next row starts one word on
    [(0, True, False), (1, False, True)]
    """
    return check_addrgen(kind, bds, ready, simulator).beats


def run_mm2s(kind: str, bds: Sequence[BufferDescriptor], memory: np.ndarray,
             ready: Sequence[bool] | None = None,
             simulator: str = "amaranth") -> list[tuple[int, bool]]:
    """The ``(data, last)`` words the MM2S channel RTL sent for ``bds`` over ``memory``.

    Checked against the golden model on every cycle; see :func:`check_mm2s`.
    """
    return check_mm2s(kind, bds, memory, ready, simulator).beats


def run_s2mm(kind: str, bds: Sequence[BufferDescriptor], words: Sequence[int],
             memory: np.ndarray | None = None, valid: Sequence[bool] | None = None,
             simulator: str = "amaranth") -> np.ndarray:
    """The memory after the S2MM channel RTL wrote ``words`` as ``bds`` direct.

    Checked against the golden model on every cycle; see :func:`check_s2mm`.

    Examples
    --------
    >>> from aiedma.model import BufferDescriptor
    >>> bd = BufferDescriptor("tile", buffer_length=4, d0_wrap=2, d1_stepsize=8,
    ...                       valid_bd=1)
    >>> run_s2mm("tile", [bd], [11, 12, 13, 14], memory=[0] * 12).tolist()
    [11, 12, 0, 0, 0, 0, 0, 0, 13, 14, 0, 0]
    """
    return check_s2mm(kind, bds, words, memory, valid, simulator).memory
