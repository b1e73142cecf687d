"""RTL channel engines by replay of the model's run: the recording follows the fast path's
jumps exactly, a difference is found at its cycle, and a planted RTL bug is reported by
the replay at the same cycle as by the lockstep run."""

import numpy as np
import pytest
from hdl_mutants import BubblyGate
from test_loop import chain_system, waiting_on_a_lock

from aiedma.flows.graph_examples import copy_graph, pipeline_graph
from aiedma.hdl import engine as hdl_engine
from aiedma.model.cycle.contract import ADDRGEN_LATENCY, BD_OFFER_LATENCY
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS
from aiedma.model.system.scheduler import DeadlockError, SystemRun
from aiedma.tb.system import loop_replay
from aiedma.tb.system.engine_record import COLUMNS, EngineRecorder
from aiedma.tb.system.loop import LoopMismatch, rtl_runner, run_with_rtl
from aiedma.tb.system.loop_replay import replay_trace, run_replayed
from aiedma.tb.system.loop_verilator import PortRows, VerilatedTop, VerilatorEngine, engine_top
from aiedma.tb.system.random_programs import random_graph

OWN = MEMORY_TILE_WINDOWS["own"]


def recorded(graph, words, exact, iterations=2, output_ready=None, inputs=None, take=None):
    """Every memory-tile engine's trace of a model-only run, and the jumps it took; with
    ``take``, as the stretches handed out every ``take`` cycles and the rest."""
    found = {}

    def runner(agents, channels, max_cycles):
        recorders = [EngineRecorder(channel) for channel in channels]
        run = SystemRun(agents, max_cycles, exact=exact)
        stretches, hand_out = {c.name: [] for c in channels}, take
        while run.busy:
            run.advance()
            if take and run.cycles >= hand_out:
                hand_out = run.cycles + take
                for c, r in zip(channels, recorders, strict=True):
                    stretches[c.name].append(r.take())
        found.update({c.name: [*stretches[c.name], r.finish(run.cycles)]
                      for c, r in zip(channels, recorders, strict=True)})
        if not take:
            found.update({name: traces[0] for name, traces in found.items()})
        found["jumps"] = run.jumps
        return run.report()

    graph.run(iterations, inputs or {"in": np.arange(iterations * words)}, rtl=runner,
              output_ready=output_ready)
    return found


def drawn(seed):
    """A random graph (padding, backpressure, ping-pong) as :func:`recorded` takes it."""
    g = random_graph(seed)
    return lambda: g.graph, {"iterations": g.iterations, "inputs": g.inputs,
                             "output_ready": g.output_ready}


@pytest.mark.parametrize(("graph", "run"), [
    (lambda: copy_graph((16, 8), 2), {"words": 128}),
    (lambda: pipeline_graph(2, 64), {"words": 64}),
    drawn(38), drawn(47),   # padded reads under backpressure, jumping over 70 cycles
])
def test_a_recording_on_the_fast_path_is_the_recording_of_every_cycle(graph, run):
    run = {"words": 0, **run}
    fast, exact = recorded(graph(), exact=False, **run), recorded(graph(), exact=True, **run)
    assert fast.pop("jumps") > 0 and exact.pop("jumps") == 0, "the fast path jumped"
    assert fast.keys() == exact.keys() and fast
    for name, trace in exact.items():
        for column in COLUMNS:
            if column not in ("run",):   # indices of the same beats, numbered per run
                assert np.array_equal(fast[name].columns[column], trace.columns[column]), \
                    (name, column)


@pytest.mark.parametrize(("graph", "run", "take"), [
    (lambda: copy_graph((16, 8), 2), {"words": 128}, 7),
    (*drawn(38), 5),   # a stretch ends on a BD's first beats, a jump goes on with it
])
def test_a_recording_handed_out_in_stretches_is_the_whole_recording(graph, run, take):
    """Stretches taken every few cycles, jumps between them, join into the recording of
    the whole run: every column, each cycle's BD offered the same BD and its running BD
    the same beats (each stretch numbers the BDs and runs it holds)."""
    run = {"words": 0, **run}
    whole = recorded(graph(), exact=False, **run)
    parts = recorded(graph(), exact=False, take=take, **run)
    whole.pop("jumps")
    assert parts.pop("jumps") > 0
    for name, trace in whole.items():
        stretches = [t for t in parts[name] if t is not None]
        assert len(stretches) >= 4
        assert sum(t.cycles for t in stretches) == trace.cycles
        for column in COLUMNS:
            if column not in ("bd", "run"):
                joined = np.concatenate([t.columns[column] for t in stretches])
                assert np.array_equal(joined, trace.columns[column]), (name, column)

        def offered(bds, k):
            return None if k < 0 else bds[k]

        def beats(runs, k):   # the running BD's ID and its beats' addresses
            return None if k < 0 else (runs[k][2], list(runs[k][0]))

        for column, table, value in (("bd", "bds", offered), ("run", "runs", beats)):
            assert [value(getattr(t, table), k) for t in stretches for k in t.columns[column]] \
                == [value(getattr(trace, table), k) for k in trace.columns[column]], column


def test_a_difference_in_the_recording_is_found_at_its_cycle():
    traces = recorded(copy_graph((16, 8), 2), 128, exact=False)
    traces.pop("jumps")
    trace = next(t for n, t in traces.items() if n.endswith("mm2s0"))
    assert replay_trace(VerilatedTop(engine_top("memtile", True)), trace, "memtile",
                        True) is None
    cycle = int(np.flatnonzero(trace.columns["beat_valid"])[20])
    trace.columns["address"][cycle] += 1
    found = replay_trace(VerilatedTop(engine_top("memtile", True)), trace, "memtile", True)
    assert found is not None and found[0] == cycle
    address = int(trace.columns["address"][cycle])
    assert found[1] == {"address": (address - 1, address)}


def test_the_graph_runner_replays_on_verilator_and_steps_on_request():
    assert rtl_runner("verilator").replays and not rtl_runner("verilator", lockstep=True).replays
    assert not rtl_runner("amaranth").replays


def bubbly_top(monkeypatch):
    """The memory-tile MM2S engine with a bubble after every BD (exported under its own name)."""
    def make():
        monkeypatch.setattr(hdl_engine, "LockGate", BubblyGate)
        return hdl_engine.MM2SEngine("memtile")

    return VerilatedTop("aiedma_mm2s_channel_memtile_bubbly", make, cache=False)


@pytest.mark.parametrize("hand_out", [loop_replay.HAND_OUT, 4])
def test_a_planted_rtl_bug_is_found_by_the_replay_at_the_lockstep_cycle(monkeypatch, hand_out):
    """Replayed in one stretch, or in stretches of about 4 cycles handed out while the
    model runs on (the bug then shows in the third)."""
    monkeypatch.setattr(loop_replay, "HAND_OUT", hand_out)
    channel, sink = chain_system()
    with pytest.raises(LoopMismatch) as stepped:
        run_with_rtl([channel, sink], [channel],
                     lambda kind, mm2s: VerilatorEngine(kind, mm2s, bubbly_top(monkeypatch)),
                     seed=7)
    channel, sink = chain_system()
    with pytest.raises(LoopMismatch) as replayed:
        run_replayed([channel, sink], [channel], seed=7,
                     top=lambda kind, mm2s: bubbly_top(monkeypatch))
    lockstep, replay = stepped.value, replayed.value
    assert lockstep.cycle == replay.cycle == BD_OFFER_LATENCY + ADDRGEN_LATENCY + 3
    assert lockstep.channel == replay.channel == "memtile(0,1).mm2s0"
    assert lockstep.differences == {"lock_request": (False, True)}
    assert replay.differences["lock_request"] == (False, True)
    # The same place named: BD, beat, counters and seed.
    assert str(replay).split(": ", 1)[1].endswith(str(lockstep).split("; ", 1)[1])


def test_a_run_replayed_in_stretches_compares_every_cycle_once(monkeypatch):
    """Stretches of a few cycles, handed out while the run goes on, give the report of
    one replay after the run and compare as many cycles."""
    reports, timings = [], []
    for hand_out in (loop_replay.HAND_OUT, 3):
        monkeypatch.setattr(loop_replay, "HAND_OUT", hand_out)
        channel, sink = chain_system()
        timing = {}
        reports.append(run_replayed([channel, sink], [channel], timing=timing))
        timings.append(timing["compared"])
    assert reports[0].cycles == reports[1].cycles > 3 * 3
    assert timings[0] == timings[1] == reports[0].cycles


def test_a_deadlock_is_reported_by_the_replay_once_the_rtl_agreed_up_to_it():
    agents, channel = waiting_on_a_lock()
    timing = {}
    with pytest.raises(DeadlockError, match=r"memtile\(0,1\)\.s2mm0: BD 0: waits on lock 65"):
        run_replayed(agents, [channel], timing=timing)
    assert timing["compared"] > 0, "the cycles before the deadlock were replayed"


def test_port_rows_keep_each_port_to_its_width_in_words_side_by_side():
    """A replay's packed rows: a 33-bit port takes two words, bits above a width are
    dropped (a negative data word too), care masks cover a port's width where asked,
    and per-port word blocks pack to the same rows."""
    ports = {"valid": (0, 1), "payload": (1, 33), "addr": (2, 17)}
    rows = PortRows(ports, ["valid", "payload", "addr"], 4)
    rows.put("payload", np.asarray([1, 1 << 32 | 5, -1, 0]))
    rows.put("valid", 3, slice(1, 3))
    rows.put("addr", np.asarray([1 << 17 | 9, 2]), slice(2, 4))
    assert rows.rows.shape == (4, 4) and rows.rows.flags.c_contiguous
    assert [rows.value("payload", r) for r in range(4)] == [1, 1 << 32 | 5, (1 << 33) - 1, 0]
    assert [rows.value("valid", r) for r in range(4)] == [0, 1, 1, 0]
    assert [rows.value("addr", r) for r in range(4)] == [0, 0, 9, 2]
    care = PortRows(ports, ["payload"], 3)
    care.mask("payload", np.asarray([0, 2, 1]))
    assert care.rows.tolist() == [[0, 0], [0xFFFF_FFFF, 1], [0xFFFF_FFFF, 1]]
    blocks = {"valid": rows.rows[:, :1], "payload": rows.rows[:, 1:3], "addr": rows.rows[:, 3:]}
    assert (PortRows.of(ports, blocks).rows == rows.rows).all()
    with pytest.raises(ValueError, match="port payload is 33 bits, its rows have 1 words"):
        PortRows.of(ports, {"payload": rows.rows[:, 1:2]})
