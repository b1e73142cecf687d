"""The skid buffer (hdl/skid.py): every payload once and in order under random valid and
ready, no cycle added when empty, and ``i.ready`` exactly "nothing held"."""

from __future__ import annotations

import random

import pytest
from amaranth.hdl import unsigned
from amaranth.sim import Simulator

from aiedma.hdl.skid import SkidBuffer
from aiedma.tb.common.streams import record, stream_receive, stream_send


def run(offer, ready, count=40):
    dut = SkidBuffer(unsigned(8))
    payloads = list(range(1, count + 1))
    sent, got, log = [], [], []

    async def producer(ctx):
        sent.extend(await stream_send(ctx, dut.i, payloads, offer=offer))

    async def consumer(ctx):
        got.extend(await stream_receive(ctx, dut.o, count, ready=ready))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.add_testbench(record(log, dut.i.valid, dut.i.ready, dut.o.valid, dut.o.ready),
                      background=True)
    sim.run()
    return payloads, sent, got, log


@pytest.mark.parametrize("seed", range(6))
def test_every_payload_passes_once_in_order_and_ready_is_the_held_state(seed):
    rng = random.Random(seed)
    offer = [rng.random() < 0.7 for _ in range(200)]
    ready = [rng.random() < 0.6 for _ in range(200)]
    payloads, _, got, log = run(offer, ready)
    assert [payload for _, payload in got] == payloads
    held = False   # the model of the one register: a payload held after a stall
    for t, (i_valid, i_ready, o_valid, o_ready) in enumerate(log[:len(log) - 1]):
        assert i_ready == (not held), f"cycle {t}"
        assert o_valid == (held or bool(i_valid)), f"cycle {t}"
        held = bool(o_valid) and not o_ready


def test_an_empty_skid_adds_no_cycle_and_moves_one_payload_a_cycle():
    payloads, sent, got, _ = run(None, None)
    assert [cycle for cycle, _ in got] == sent == list(range(len(payloads)))


def test_a_stall_is_taken_by_the_skid_and_the_producer_waits_one_cycle_after_it():
    """The consumer stalls in cycles 3-5: the payload offered in 3 is taken into the
    skid there (the producer sees ready), the producer waits in 4-6 (held), the held
    payload leaves in 6 and the next comes straight through in 7."""
    ready = [True] * 3 + [False] * 3
    _, sent, got, _ = run(None, ready, count=10)
    assert sent == [0, 1, 2, 3, 7, 8, 9, 10, 11, 12]
    assert [cycle for cycle, _ in got] == [0, 1, 2, 6, 7, 8, 9, 10, 11, 12]
