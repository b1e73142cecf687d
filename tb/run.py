"""Run the RTL on your own BDs, checked against the golden model on every cycle.

``run_addrgen`` and ``run_mm2s`` are the public entry points (also used by the
tests and by ``make sim``); ``check_addrgen`` / ``check_mm2s`` return the run's
figures as well. Every run is compared cycle by cycle with the timing model by
the one scoreboard, whichever simulator runs it:

* ``"amaranth"``: Amaranth's simulator, in process (the default; pip only);
* ``"verilator"`` / ``"icarus"``: cocotb 2 on the exported Verilog.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from amaranth.sim import Simulator

from ..hdl.addrgen import BDAddressGenerator
from ..hdl.channel import MM2SChannel
from ..hdl.layouts import bd_to_payload
from ..model.bd.descriptor import BufferDescriptor
from ..model.cycle.timing import addrgen_trace, held_high, mm2s_trace
from ..model.errors import AiedmaError, field_error
from .memory import bram_read_port
from .scoreboard import AddrgenScoreboard, Mismatch, MM2SScoreboard, RunSummary

__all__ = ["SIMULATORS", "RunResult", "check_addrgen", "check_mm2s", "run_addrgen", "run_mm2s"]

SIMULATORS = ("amaranth", "verilator", "icarus")

# Cycles run past the model's last one, to check the RTL then stays quiet.
_TAIL = 2


@dataclass(frozen=True)
class RunResult:
    """What one checked run produced.

    Attributes
    ----------
    beats : list of tuple
        ``(address, zero, last)`` per address beat, or ``(data, last)`` per MM2S word.
    summary : RunSummary
        BDs, words, cycles and bubbles with ready high.
    cycles_per_second : float
        Simulated cycles per second of wall time (driving and checking included).
    """

    beats: list[tuple]
    summary: RunSummary
    cycles_per_second: float


def _check_inputs(kind: str, bds: Sequence[BufferDescriptor], simulator: str) -> list:
    if simulator not in SIMULATORS:
        raise field_error(AiedmaError, "simulator", simulator,
                          f"must be one of {', '.join(SIMULATORS)}")
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
                  waves: str | Path | None = None) -> RunResult:
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

    Raises
    ------
    Mismatch
        At the first cycle where the RTL differs from the model.
    """
    bds = _check_inputs(kind, bds, simulator)
    trace = addrgen_trace(kind, bds, ready, offer)
    if simulator != "amaranth":
        result = _cocotb(f"aiedma_addrgen_{kind}", simulator,
                         _stimulus("addrgen", kind, bds, ready, offer, seed), waves is not None)
        return RunResult([tuple(b) for b in result["beats"]], RunSummary(**result["summary"]),
                         result["cycles_per_second"])
    board = AddrgenScoreboard(kind, bds, trace, seed)
    dut = BDAddressGenerator(kind)

    def check(cycle: int, bd_ready: bool, o_valid: bool, beat) -> None:
        board.check(cycle, bd_ready, o_valid, int(beat.address), bool(beat.zero),
                    bool(beat.last))

    bench = _driver(dut.i, dut.o, bds, trace.cycles + _TAIL, ready, offer, check)
    elapsed = _simulate(dut, bench, waves)
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
    dut = MM2SChannel(kind)

    def check(cycle: int, bd_ready: bool, o_valid: bool, word) -> None:
        board.check(cycle, o_valid, int(word.data), bool(word.last))

    bench = _driver(dut.bd, dut.o, bds, trace.cycles + _TAIL, ready, offer, check)
    elapsed = _simulate(dut, bench, waves, bram_read_port(dut, memory, seed=seed or 0))
    return RunResult(board.words, board.summary(), (trace.cycles + _TAIL) / elapsed)


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


def _simulate(dut, bench, waves, *processes) -> float:
    """Run one Amaranth simulation (with a VCD if ``waves``); returns its wall time."""
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
    :class:`~aiedma.tb.scoreboard.Mismatch`); see :func:`check_addrgen`.

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
