# amaranth: UnusedElaboratable=no
# (the bad-input tests build blocks they never elaborate)
"""The channel's parts on their own: the packet header word, the completion latency,
the in-flight ring's heads, the lock requester's release stall, and the bad-input errors
of the channel's parameters."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from aiedma.hdl.channel import Channel
from aiedma.hdl.channel.completion import Completion
from aiedma.hdl.channel.fetch import FetchStage
from aiedma.hdl.channel.lock_requests import LockRequester
from aiedma.hdl.channel.packet_stage import header_word
from aiedma.hdl.channel.record import FEW_BEATS, RECORDS, InFlightRing
from aiedma.model.bd.packet import packet_header
from aiedma.model.cycle.contract import RELEASE_QUEUE_DEPTH
from aiedma.model.errors import AiedmaError


@pytest.mark.parametrize(("row", "column"), [(0, 0), (1, 2), (31, 127)])
def test_the_header_word_is_the_models(row, column):
    m = Module()
    packet_id, packet_type, ooo, word = Signal(5), Signal(3), Signal(6), Signal(32)
    m.d.comb += word.eq(header_word(m, packet_id, packet_type, row, column, ooo))
    sim = Simulator(m)

    async def bench(ctx):
        for pid in range(32):
            for ptype in range(8):
                ctx.set(packet_id, pid)
                ctx.set(packet_type, ptype)
                bd_id = (pid * 7 + ptype) % 64
                ctx.set(ooo, bd_id)
                assert ctx.get(word) == packet_header(pid, ptype, row, column,
                                                      out_of_order_bd_id=bd_id), (pid, ptype)

    sim.add_testbench(bench)
    sim.run()


def test_a_completion_latency_other_than_0_or_1_is_refused():
    with pytest.raises(AiedmaError, match=r"^latency=2: must be 0 or 1"):
        Completion("tile", 2)


def test_a_channel_takes_channel_names_not_access_names():
    with pytest.raises(AiedmaError, match=r"^direction='read': must be one of mm2s, s2mm"):
        Channel("tile", "read", 0)


LENGTHS = (0, 1, 2, 3, FEW_BEATS - 1, FEW_BEATS, FEW_BEATS + 1, 1000)
"""Lengths the ring's records take in turn: around the saturation of ``few_beats``."""


def test_the_ring_heads_follow_pushes_and_advances():
    """Against a list model: random pushes and head moves, as the channel makes them
    (run and stage never pass gate, at most ``RECORDS - 1`` records held)."""
    rng = random.Random(5)
    dut = InFlightRing("tile")
    sim = Simulator(dut)
    sim.add_clock(1e-6)

    async def bench(ctx):
        records: list[int] = []          # the number of each record pushed, in order
        gate = run = stage = 0
        for cycle in range(300):
            push = len(records) - min(run, stage) < RECORDS - 1 and rng.random() < 0.5
            gate_go = gate < len(records) and rng.random() < 0.5
            run_go = run < gate and rng.random() < 0.5
            stage_go = stage < gate and rng.random() < 0.5
            ctx.set(dut.push, push)
            # Each head shows its own fields: a number in one field of each.
            n = len(records) % 16
            length = LENGTHS[len(records) % len(LENGTHS)]
            ctx.set(dut.record, {"packet_id": n, "acq_id": n, "rel_id": n, "length": length})
            ctx.set(dut.gate_advance, gate_go)
            ctx.set(dut.run_advance, run_go)
            ctx.set(dut.stage_advance, stage_go)
            heads = ((dut.gate_head.acq_id, gate), (dut.gate_next.acq_id, gate + 1),
                     (dut.run_head.rel_id, run), (dut.stage_head.packet_id, stage))
            for field, at in heads:
                if at < len(records):
                    assert ctx.get(field) == records[at] % 16, cycle
            # The gate head's length saturated at FEW_BEATS, worked out as it was written.
            if gate < len(records):
                few = LENGTHS[records[gate] % len(LENGTHS)]
                assert ctx.get(dut.gate_head.few_beats) == min(few, FEW_BEATS), cycle
            assert ctx.get(dut.stage_valid) == (stage < len(records)), cycle
            assert ctx.get(dut.stage_granted) == (stage < gate), cycle
            assert ctx.get(dut.engine_empty) == (gate == run == len(records)), cycle
            assert ctx.get(dut.busy) == (stage < len(records) or run < len(records)), cycle
            await ctx.tick()
            if push:
                records.append(len(records))
            gate, run, stage = gate + gate_go, run + run_go, stage + stage_go

    sim.add_testbench(bench)
    sim.run()


def test_a_lock_requester_asking_ahead_past_the_saturated_length_is_refused():
    with pytest.raises(AiedmaError, match=r"^ask_ahead=6: must be 0 to 5"):
        LockRequester("tile", FEW_BEATS - 1)


def test_the_fetch_request_waits_on_no_answer_of_the_engine():
    """The fetch stage asks for the BD table's port from registers: whatever the engine
    answers in a cycle (``consumed``, which waits on the lock unit's grant), the request
    and its address in that cycle stay the same."""
    rng = random.Random(5)
    stage = FetchStage("memtile", refuses_padding=False)
    checked = 0

    async def bench(ctx):
        nonlocal checked
        ctx.set(stage.task.valid, 1)
        ctx.set(stage.task.payload.start_bd, 3)
        ctx.set(stage.task.payload.repeat, 7)
        for _ in range(200):
            ctx.set(stage.fetch.grant, rng.random() < 0.7)
            ctx.set(stage.fetch.bd.use_next_bd, rng.random() < 0.5)
            ctx.set(stage.fetch.bd.next_bd, rng.randrange(24))
            asked = []
            for consumed in (0, 1):
                ctx.set(stage.consumed, consumed)
                asked.append((ctx.get(stage.fetch.en), ctx.get(stage.fetch.id),
                              ctx.get(stage.task.ready)))
            assert asked[0] == asked[1]
            checked += asked[0][0]
            ctx.set(stage.consumed, rng.random() < 0.5)
            await ctx.tick()

    sim = Simulator(stage)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert checked > 20, "the stage asked often enough for the check to mean something"


def test_the_lock_requester_shows_the_release_stall_once_it_owes_every_release():
    """One-beat BDs that release a lock and acquire none pass the gate one after another
    while no release is applied; with ``RELEASE_QUEUE_DEPTH`` owed the next waits, the
    status's release stall (not the acquire stall) high, until a release is applied."""
    dut = LockRequester("tile")
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    record = {"acq_enable": 0, "rel_enable": 1, "length": 1}

    async def bench(ctx):
        for part in (dut.gate_head, dut.gate_next):
            ctx.set(part, record)
        ctx.set(dut.gate_valid, 1)
        ctx.set(dut.next_valid, 1)
        ctx.set(dut.engine_request, 1)
        passed, stalled = 0, []
        for cycle in range(20):
            ctx.set(dut.released, cycle == 15)
            granted = ctx.get(dut.engine_grant)
            ctx.set(dut.beat_moved, granted)
            if ctx.get(dut.waits_release):
                assert not ctx.get(dut.waits_acquire), cycle
                stalled.append(cycle)
            passed += granted
            await ctx.tick()
        # owing three from the third pass; one more passes after the release at 15,
        # then it owes three again
        free = [cycle for cycle in range(stalled[0], 20) if cycle not in stalled]
        assert stalled[0] <= 15 and free and min(free) > 15 and max(stalled) == 19
        assert passed == RELEASE_QUEUE_DEPTH + 1

    sim.add_testbench(bench)
    sim.run()
