"""The cocotb test module: the exported Verilog, checked cycle by cycle by the one scoreboard.

:func:`aiedma.tb.block.cocotb_runner.run_cocotb` starts a simulator on one exported top
with this module as its cocotb test module, naming two files in the environment:
``AIEDMA_STIMULUS`` (JSON, read here) and ``AIEDMA_RESULT`` (JSON, written here).

The stimulus::

    {"block": "addrgen" | "mm2s_channel" | "s2mm_channel", "kind": ...,
     "bds": [BufferDescriptor.to_dict(include_defaults=True), ...],
     "ready": [bool, ...] | null, "offer": [bool, ...] | null,
     "seed": int | null, "memory": [int, ...] | null,
     "words": [int, ...] (s2mm_channel),
     "expected_bds": [...] | null | absent}

For ``s2mm_channel`` the ``ready`` pattern is the data producer's ``i.valid``.

``expected_bds`` (default: ``bds``) are the BDs the model trace is computed
from while ``bds`` are driven: a test gives different ones to prove that a
wrong expectation is reported.

The result::

    {"beats": [[address, zero, last], ...]}  (addrgen) or
    {"words": [[data, last], ...]}           (mm2s_channel) or
    {"writes": [[address, data], ...], "memory": [...]}  (s2mm_channel), and
    "summary": {"bds", "words", "cycles", "bubbles"},
    "mismatch": null | the scoreboard's message,
    "cycles_per_second": simulated cycles / wall time of the drive loop

Sampling follows :mod:`aiedma.model.cycle.contract`: cycle ``t`` ends with rising edge
``t``, cycle 0 is the first cycle after reset. Right after edge ``t - 1`` the
bench writes the inputs of cycle ``t``, waits for ``ReadOnly`` (every
combinational path, ``i.ready`` from ``o.ready`` included, has settled, and no
edge has happened yet), samples, and only then awaits edge ``t``. So what it
samples is exactly "the settled value just before edge ``t``" of the contract.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cocotb
import numpy as np
from amaranth.hdl import Shape
from amaranth.lib.data import StructLayout
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from ...hdl.layouts import bd_layout, bd_to_payload, beat_layout, data_beat_layout
from ...model.bd.descriptor import BufferDescriptor
from ...model.cycle.timing import addrgen_trace, held_high, mm2s_trace, s2mm_trace
from ..common.scoreboard import AddrgenScoreboard, Mismatch, MM2SScoreboard, S2MMScoreboard

STIMULUS_ENV = "AIEDMA_STIMULUS"
"""Environment variable naming the stimulus JSON file."""

RESULT_ENV = "AIEDMA_RESULT"
"""Environment variable naming the result JSON file the bench writes."""

RESET_CYCLES = 2
"""Cycles the synchronous reset is held before cycle 0."""

TAIL_CYCLES = 2
"""Cycles checked after the model's last one (``o.valid`` must stay low)."""


class _Input:
    """An input port, written only when its value changes (a VPI write per cycle and
    port would cost more than the design's whole evaluation); 0 until first set."""

    def __init__(self, handle: Any, value: int = 0) -> None:
        self.handle, self.value = handle, value
        handle.value = value

    def set(self, value: int) -> None:
        if value != self.value:
            self.handle.value = self.value = value


def unpacker(layout: StructLayout, *names: str) -> Callable[[int], tuple[int, ...]]:
    """A decoder of ``layout``'s bits into the values of members ``names``, in that order.

    The same answer as ``layout.from_bits(bits)`` member by member (the offsets and
    widths are the layout's own), at a twentieth of the cost: Amaranth builds a
    ``data.Const`` per call, which would halve the simulated cycles per second.
    Members must be unsigned (the beat layouts' are).
    """
    members = dict(layout)
    if any(Shape.cast(members[n].shape).signed for n in names):
        raise ValueError(f"{layout!r} has a signed member: decode it with from_bits")
    fields = [(members[n].offset, (1 << members[n].width) - 1) for n in names]
    return lambda bits: tuple((bits >> offset) & mask for offset, mask in fields)


def _bit(handle: Any) -> bool:
    """A 1-bit output's value (cocotb gives a ``Logic`` for a scalar net)."""
    return bool(handle.value)


async def _reset(dut: Any) -> None:
    """Start the clock and hold reset; returns right after the last reset edge, so
    the inputs written next are those of cycle 0."""
    dut.rst.value = 1
    Clock(dut.clk, 10, unit="ns").start()
    for _ in range(RESET_CYCLES):
        await RisingEdge(dut.clk)
    dut.rst.value = 0


async def _drive(dut: Any, bd_valid: Any, bd_payload: Any, payloads: list[int], cycles: int,
                 ready, offer, check, prepare=None) -> tuple[str | None, int, float]:
    """Drive one cycle per loop, as model/cycle/contract.py numbers cycles.

    Inputs for cycle ``t`` are set after edge ``t - 1`` (the next BD as ``offer``
    allows, ``o.ready`` from its pattern, then ``prepare``), sampled once settled
    (``ReadOnly``) by ``check``, which feeds the scoreboard and returns the BD
    input's ``ready``. Returns the mismatch (or None), the cycles run and the
    wall time of the loop.
    """
    valid, payload, o_ready = _Input(bd_valid), _Input(bd_payload), _Input(dut.o__ready)
    taken, mismatch, cycle = 0, None, -1
    start = time.perf_counter()
    try:
        for cycle in range(cycles):
            offered = taken < len(payloads) and held_high(offer, cycle)
            valid.set(int(offered))
            if offered:
                payload.set(payloads[taken])
            o_ready.set(int(held_high(ready, cycle)))
            if prepare is not None:
                prepare(cycle)
            await ReadOnly()
            got_ready = check(cycle)  # every cycle, offered or not
            taken += offered and got_ready
            await RisingEdge(dut.clk)
    except Mismatch as error:
        mismatch = str(error)
    return mismatch, cycle + 1, time.perf_counter() - start


async def _addrgen(dut: Any, stimulus: dict, bds: list[BufferDescriptor],
                   expected: list[BufferDescriptor]) -> dict:
    kind, seed = stimulus["kind"], stimulus.get("seed")
    ready, offer = stimulus.get("ready"), stimulus.get("offer")
    trace = addrgen_trace(kind, expected, ready, offer)
    board = AddrgenScoreboard(kind, expected, trace, seed)
    layout, beat = bd_layout(kind), unpacker(beat_layout(kind), "address", "zero", "last")
    payloads = [layout.const(bd_to_payload(bd)).as_bits() for bd in bds]
    _Input(dut.cut)   # held 0: no beat ends its BD early (finish on TLAST is the channel's)
    await _reset(dut)

    def check(cycle: int) -> bool:
        got_ready, got_valid = _bit(dut.i__ready), _bit(dut.o__valid)
        address = zero = last = 0
        if got_valid:  # the payload is only defined (and compared) while valid
            address, zero, last = beat(dut.o__payload.value.to_unsigned())
        board.check(cycle, got_ready, got_valid, address, bool(zero), bool(last))
        return got_ready

    mismatch, cycles, elapsed = await _drive(
        dut, dut.i__valid, dut.i__payload, payloads, trace.cycles + TAIL_CYCLES, ready, offer,
        check)
    return _result("beats", [list(b) for b in board.beats], board.summary(), mismatch,
                   cycles, elapsed)


async def _mm2s_channel(dut: Any, stimulus: dict, bds: list[BufferDescriptor],
                        expected: list[BufferDescriptor]) -> dict:
    kind, seed = stimulus["kind"], stimulus.get("seed")
    ready, offer = stimulus.get("ready"), stimulus.get("offer")
    if not stimulus.get("memory"):
        raise ValueError("an mm2s_channel stimulus needs a non-empty 'memory' image")
    memory = np.array(stimulus["memory"], dtype=np.int64)
    trace = mm2s_trace(kind, expected, memory, ready, offer)
    board = MM2SScoreboard(kind, expected, trace, seed)
    layout, word = bd_layout(kind), unpacker(data_beat_layout(), "data", "last")
    payloads = [layout.const(bd_to_payload(bd)).as_bits() for bd in bds]
    # Outside the one cycle a read is valid, mem_data carries noise, so a datapath
    # that uses a stale word fails (as the Amaranth BRAM model does, seeded alike).
    noise = random.Random(seed or 0)
    mem_data = _Input(dut.mem_data)
    dut.lock_grant.value = 1  # no locks: the gate is a wire
    await _reset(dut)
    read: int | None = None  # the address read in the previous cycle, if any

    def prepare(cycle: int) -> None:
        # One cycle of read latency: the word read in cycle t - 1 is on mem_data in t.
        mem_data.set(int(memory[read % memory.size]) if read is not None
                     else noise.getrandbits(32))

    def check(cycle: int) -> bool:
        nonlocal read
        got_ready, got_valid = _bit(dut.bd__ready), _bit(dut.o__valid)
        data = last = 0
        if got_valid:
            data, last = word(dut.o__payload.value.to_unsigned())
        read = dut.mem_addr.value.to_unsigned() if _bit(dut.mem_en) else None
        board.check(cycle, got_valid, data, bool(last))
        return got_ready

    mismatch, cycles, elapsed = await _drive(
        dut, dut.bd__valid, dut.bd__payload, payloads, trace.cycles + TAIL_CYCLES, ready,
        offer, check, prepare)
    return _result("words", [list(w) for w in board.words], board.summary(), mismatch,
                   cycles, elapsed)


async def _s2mm_channel(dut: Any, stimulus: dict, bds: list[BufferDescriptor],
                        expected: list[BufferDescriptor]) -> dict:
    """BDs on ``bd``, words on ``i`` (``ready`` in the stimulus is their valid pattern),
    the write port into a copy of the stimulus memory."""
    kind, seed = stimulus["kind"], stimulus.get("seed")
    valid, offer = stimulus.get("ready"), stimulus.get("offer")
    words = [int(w) for w in stimulus["words"]]
    memory = np.array(stimulus["memory"], dtype=np.int64)
    trace = s2mm_trace(kind, expected, words, valid, offer)
    board = S2MMScoreboard(kind, expected, trace, seed)
    layout = bd_layout(kind)
    word_layout = data_beat_layout()
    payloads = [layout.const(bd_to_payload(bd)).as_bits() for bd in bds]
    word_bits = [word_layout.const({"data": w, "last": 0}).as_bits() for w in words]
    bd_valid, bd_payload = _Input(dut.bd__valid), _Input(dut.bd__payload)
    i_valid, i_payload = _Input(dut.i__valid), _Input(dut.i__payload)
    dut.lock_grant.value = 1  # no locks: the gate is a wire
    await _reset(dut)
    bds_taken = words_taken = 0
    mismatch, cycle = None, -1
    start = time.perf_counter()
    try:
        for cycle in range(trace.cycles + TAIL_CYCLES):
            offered = bds_taken < len(payloads) and held_high(offer, cycle)
            bd_valid.set(int(offered))
            if offered:
                bd_payload.set(payloads[bds_taken])
            sending = words_taken < len(words) and held_high(valid, cycle)
            i_valid.set(int(sending))
            if sending:
                i_payload.set(word_bits[words_taken])
            await ReadOnly()
            bd_ready, i_ready, we = _bit(dut.bd__ready), _bit(dut.i__ready), _bit(dut.mem_we)
            address = dut.mem_addr.value.to_unsigned() if we else 0
            data = dut.mem_data.value.to_unsigned() if we else 0
            if we:  # the write lands at this edge
                memory[address % memory.size] = data
            board.check(cycle, bd_ready, i_ready, we, address, data)
            bds_taken += offered and bd_ready
            words_taken += sending and i_ready
            await RisingEdge(dut.clk)
    except Mismatch as error:
        mismatch = str(error)
    result = _result("writes", [list(w) for w in board.writes], board.summary(), mismatch,
                     cycle + 1, time.perf_counter() - start)
    result["memory"] = memory.tolist()
    return result


def _result(key: str, items: list, summary: Any, mismatch: str | None, simulated: int,
            elapsed: float) -> dict:
    return {key: items,
            "summary": {"bds": summary.bds, "words": summary.words,
                        "cycles": summary.cycles, "bubbles": summary.bubbles},
            "mismatch": mismatch,
            "cycles_per_second": simulated / elapsed if elapsed > 0 else 0.0}


_BLOCKS = {"addrgen": _addrgen, "mm2s_channel": _mm2s_channel, "s2mm_channel": _s2mm_channel}


@cocotb.test()
async def check_against_model(dut: Any) -> None:
    """Drive the stimulus named by ``AIEDMA_STIMULUS`` and check every cycle.

    The result (with the scoreboard's message on a mismatch) is written to the
    file named by ``AIEDMA_RESULT`` before the test fails, so the caller gets it
    either way.
    """
    stimulus = json.loads(Path(os.environ[STIMULUS_ENV]).read_text())
    block = stimulus["block"]
    if block not in _BLOCKS:
        raise ValueError(f"block={block!r}: must be one of {', '.join(_BLOCKS)}")
    bds = [BufferDescriptor.from_dict(d) for d in stimulus["bds"]]
    expected = [BufferDescriptor.from_dict(d)
                for d in stimulus.get("expected_bds") or stimulus["bds"]]
    result = await _BLOCKS[block](dut, stimulus, bds, expected)
    Path(os.environ[RESULT_ENV]).write_text(json.dumps(result))
    assert result["mismatch"] is None, result["mismatch"]
