"""DMA channels at cycle level: queue, chains, repeat, iteration, locks, TLAST, packets, errors,
and exact agreement with the untimed run_task over random lowered port programs."""

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from tiling_strategies import tilings

from aiedma.model import BDError, BufferDescriptor, PacketError, PortProgram, Task, run_task
from aiedma.model.bd.fields import BD_COUNT
from aiedma.model.bd.lower import LoweringError, lower
from aiedma.model.bd.packet import packet_header, parse_packet_header
from aiedma.model.cycle.contract import (
    ADDRGEN_LATENCY,
    BD_OFFER_LATENCY,
    CHANNEL_LATENCY,
    COMPLETION_LATENCY,
    FETCH_DEPTH,
    FETCH_INTERVAL,
    LOCK_ASK_AHEAD,
    LOCK_GRANT_LATENCY,
    MM2S_LATENCY,
    RELEASE_QUEUE_DEPTH,
    load_word_offsets,
)
from aiedma.model.errors import TilingError
from aiedma.model.system import channel as channel_module
from aiedma.model.system.channel import TASK_QUEUE_DEPTH, ChannelError
from aiedma.model.system.dma import CHANNELS, DMA
from aiedma.model.system.locks import LockError, LockWait
from aiedma.model.system.memory import MEMORY_TILE_WINDOWS, Memory, shim_space
from aiedma.model.system.scheduler import Stall, run_system
from aiedma.model.system.stream import Beat, Stream, StreamSink, StreamSource

OWN = MEMORY_TILE_WINDOWS["own"]


def bd(kind="tile", **fields):
    return BufferDescriptor(kind, valid_bd=1, **fields)


def tile_dma(data=None, kind="tile"):
    """A DMA whose memory holds ``data`` (default 1, 2, 3, ...) from its first word."""
    dma = DMA(kind, 2, 3) if kind != "shim" else DMA(
        "shim", 2, 0, memory=shim_space("shim(2,0)", Memory("ddr", 1 << 15)))
    base = OWN if kind == "memtile" else 0
    memory, offset = dma.memory.resolve(base)
    values = np.arange(1, 1001) if data is None else np.asarray(data)
    memory.load(offset, values)
    return dma


def read_all(dma, tasks, channel=0, expect=None):
    """Run MM2S ``channel`` over ``tasks`` into a sink; returns the beats and the report."""
    stream = Stream("out")
    ch = dma.mm2s[channel].connect(stream)
    for t in tasks:
        ch.push(t)
    sink = StreamSink("sink", stream, expect=expect)
    report = run_system([ch, sink])
    return sink.beats, report


def write_all(dma, tasks, words, channel=0):
    stream = Stream("in")
    ch = dma.s2mm[channel].connect(stream)
    for t in tasks:
        ch.push(t)
    return run_system([StreamSource("source", stream, words), ch])


def step(agents, cycle):
    """One cycle by hand: step every agent, then commit agents and their streams."""
    results = [a.step(cycle) for a in agents]
    for a in agents:
        a.commit()
    for s in {id(s): s for a in agents for s in a.ports()}.values():
        s.commit()
    return results


# --- DMA and queue ----------------------------------------------------------------------------


def test_each_kind_has_its_channels():
    for kind, count in CHANNELS.items():
        dma = tile_dma(kind=kind)
        assert len(dma.mm2s) == len(dma.s2mm) == count
        assert dma.channel("s2mm", count - 1).name == f"{dma.name}.s2mm{count - 1}"
        with pytest.raises(ChannelError, match=rf"^channel={count}: a {kind} DMA has S2MM "
                                               rf"channels 0..{count - 1}"):
            dma.channel("s2mm", count)
    with pytest.raises(ChannelError, match=r"^direction='in': must be one of mm2s, s2mm"):
        tile_dma().channel("in", 0)


@pytest.mark.parametrize(("args", "message"), [
    ({"kind": "core"}, r"^kind='core': must be one of tile, memtile, shim"),
    ({"kind": "tile", "column": 128}, r"^column=128: must be in 0..127"),
    ({"kind": "tile", "row": 32}, r"^row=32: must be in 0..31"),
    ({"kind": "shim"}, r"^memory=None: a shim DMA needs its external memory"),
])
def test_dma_arguments_are_checked(args, message):
    with pytest.raises(ChannelError, match=message):
        DMA(**args)


def test_write_bd_checks_the_slot():
    dma = tile_dma(kind="memtile")
    with pytest.raises(BDError, match=r"^bd_id=48: must be in 0..47"):
        dma.write_bd(48, bd("memtile", buffer_length=1))
    with pytest.raises(BDError, match=r"^next_bd=24: a memory-tile chain stays in its half"):
        dma.write_bd(3, bd("memtile", buffer_length=1, use_next_bd=1, next_bd=24))
    with pytest.raises(BDError, match=r"^bd.kind='tile': must be 'memtile'"):
        dma.write_bd(3, bd("tile", buffer_length=1))


def test_the_queue_holds_four_tasks_and_a_fifth_push_is_an_error():
    dma = tile_dma()
    ch = dma.mm2s[0]
    for _ in range(TASK_QUEUE_DEPTH):
        ch.push(Task(0))
    with pytest.raises(ChannelError, match=r"^task_queue=4: channel tile\(2,3\)\.mm2s0 already "
                                           r"holds 4 pending tasks \(depth 4\); a fifth push is "
                                           r"an overflow"):
        ch.push(Task(0))
    assert len(ch.queue) == 4, "nothing was dropped or added"


def test_a_running_task_has_left_the_queue():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=3))
    stream = Stream("out", depth=8)
    ch = dma.mm2s[0].connect(stream)
    for _ in range(4):
        ch.push(Task(0))
    step([ch], 0)  # the first task starts
    ch.push(Task(0))
    assert len(ch.queue) == 4


@pytest.mark.parametrize(("kind", "channel", "start", "message"), [
    ("tile", 0, 16, r"^start_bd=16: a tile DMA has BDs 0..15; channel tile\(2,3\)\.mm2s0"),
    ("memtile", 0, 24, r"^start_bd=24: channel memtile\(2,3\)\.mm2s0 runs BDs 0-23"),
    ("memtile", 3, 5, r"^start_bd=5: channel memtile\(2,3\)\.mm2s3 runs BDs 24-47"),
])
def test_start_bd_must_exist_and_stay_in_the_channels_half(kind, channel, start, message):
    with pytest.raises(ChannelError, match=message):
        tile_dma(kind=kind).mm2s[channel].push(Task(start))


# --- tasks: chains, repeat, iteration, tokens -------------------------------------------------


def test_a_chain_runs_in_order_and_repeats():
    dma = tile_dma()
    dma.write_bd(2, bd(base_address=10, buffer_length=2, use_next_bd=1, next_bd=7))
    dma.write_bd(7, bd(base_address=50, buffer_length=1))
    beats, report = read_all(dma, [Task(2, repeat_count=2)])
    assert [b.data for b in beats] == [11, 12, 51, 11, 12, 51]
    # The first word after the channel latency, then one per cycle but where a load is
    # shorter than FETCH_INTERVAL (the one-beat BD 7: the next pass's fetch comes
    # FETCH_INTERVAL cycles after BD 7's own). The sink takes the last word a cycle later.
    last = load_word_offsets([2, 1, 2, 1])[-1]
    assert report.cycles == CHANNEL_LATENCY["mm2s"] + last + 2
    assert report.words[dma.mm2s[0].name] == 6


def test_queued_tasks_follow_without_a_bubble():
    dma = tile_dma()
    first, second = FETCH_INTERVAL + 1, FETCH_INTERVAL   # loads the fetch keeps up with
    dma.write_bd(0, bd(base_address=0, buffer_length=first))
    dma.write_bd(1, bd(base_address=100, buffer_length=second))
    beats, report = read_all(dma, [Task(0), Task(1), Task(0)])
    task0, task1 = list(range(1, first + 1)), list(range(101, 101 + second))
    assert [b.data for b in beats] == task0 + task1 + task0
    # Filling the pipeline, then a word every cycle, then the sink's last cycle.
    assert report.stalls[dma.mm2s[0].name] == {"load": CHANNEL_LATENCY["mm2s"], "idle": 1}


def test_iteration_offsets_every_load_and_is_written_back():
    dma = tile_dma()
    dma.write_bd(0, bd(base_address=100, buffer_length=2, iteration_wrap=3, iteration_stepsize=10))
    beats, _ = read_all(dma, [Task(0, repeat_count=4)])
    assert [b.data - 1 for b in beats] == [100, 101, 110, 111, 120, 121, 100, 101]
    assert dma.bds[0].iteration_current == 1
    beats, _ = read_all(dma, [Task(0)])  # the next task goes on from there
    assert [b.data - 1 for b in beats] == [110, 111]


def test_completion_tokens_only_when_asked():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=2))
    read_all(dma, [Task(0, enable_token_issue=True), Task(0), Task(0, 2, True)])
    ch = dma.mm2s[0]
    # A task ends when its last read is issued: its last word's cycle minus the read latency.
    first, words = CHANNEL_LATENCY["mm2s"], load_word_offsets([2] * 4)
    ends = [first + words[n - 1] - MM2S_LATENCY + COMPLETION_LATENCY["mm2s"] for n in (2, 4, 8)]
    assert [d.cycle for d in ch.done] == ends
    assert ch.tokens == [ends[0], ends[2]]


def test_a_zero_length_bd_runs_after_the_bds_before_it_complete():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=2, use_next_bd=1, next_bd=1))
    dma.write_bd(1, bd(buffer_length=0, use_next_bd=1, next_bd=2))
    dma.write_bd(2, bd(base_address=5, buffer_length=1))
    stream = Stream("out", depth=8)
    ch = dma.mm2s[0].connect(stream)
    ch.push(Task(0))
    moved = [c for c in range(30) if step([ch], c) == [None]]
    assert [b.data for b in stream._items] == [1, 2, 6]
    # BD 0 completes with its last read (a cycle before its last word); BD 1 may run in
    # the next cycle, holds its lock (it has no acquire) at the end of that one and
    # completes in the cycle after. BD 2 was fetched ahead and waits behind it in the
    # fetch stage, so it is offered in the cycle after BD 1 leaves: a generator and a read
    # later comes its word.
    bd1 = moved[1] - MM2S_LATENCY + COMPLETION_LATENCY["mm2s"] + 2
    assert moved == [CHANNEL_LATENCY["mm2s"], CHANNEL_LATENCY["mm2s"] + 1,
                     bd1 + 1 + ADDRGEN_LATENCY + MM2S_LATENCY]


# --- the BD table's fetch port -----------------------------------------------------------------


def run_channels(dma, order, cycles=60):
    """Step MM2S channels ``order`` (in that order) each into a stream; their word cycles."""
    streams = {i: Stream(f"out{i}", depth=64) for i in order}
    channels = [dma.mm2s[i].connect(streams[i]) for i in order]
    moved = {i: [] for i in order}
    for cycle in range(cycles):
        for i, result in zip(order, step(channels, cycle), strict=True):
            if result is None:
                moved[i].append(cycle)
    return moved, streams


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0)])
def test_channels_fetching_in_one_cycle_take_the_fetch_port_in_channel_order(order):
    """Three channels start in the same cycle; their first BD fetches go one per cycle, in
    channel order whatever order they are stepped in."""
    dma = tile_dma(kind="memtile")
    for i, base in ((0, 0), (1, 24), (2, 1)):
        dma.write_bd(base, bd("memtile", base_address=OWN + 10 * i, buffer_length=3))
        dma.mm2s[i].push(Task(base))
    moved, streams = run_channels(dma, order)
    latency = CHANNEL_LATENCY["mm2s"]
    for i in range(3):
        assert moved[i] == [latency + i, latency + i + 1, latency + i + 2], (order, i)
        assert [b.data for b in streams[i]._items] == [10 * i + 1, 10 * i + 2, 10 * i + 3]


def test_the_fetch_port_goes_round_robin_so_no_channel_starves():
    """Two channels of one-word BDs each want the port as often as they may: they take
    turns, a word every other cycle each, or every ``FETCH_INTERVAL`` cycles where that is
    longer (a fixed priority would run channel 0's task to its end first)."""
    dma = tile_dma(kind="memtile")
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=1))
    dma.write_bd(24, bd("memtile", base_address=OWN + 100, buffer_length=1))
    dma.mm2s[0].push(Task(0, repeat_count=8))
    dma.mm2s[1].push(Task(24, repeat_count=8))
    moved, _ = run_channels(dma, (1, 0))
    latency, turn = CHANNEL_LATENCY["mm2s"], max(2, FETCH_INTERVAL)
    assert moved[0] == [latency + turn * n for n in range(8)]
    assert moved[1] == [latency + 1 + turn * n for n in range(8)]


@pytest.mark.parametrize("length", [1, 2, 3])
def test_a_channel_alone_fetches_every_fetch_interval(length):
    """A repeated BD: its next pass is fetched FETCH_INTERVAL cycles after the last, so
    BDs of FETCH_INTERVAL beats or more leave back to back and a shorter one fills the
    interval with a bubble."""
    dma = tile_dma(kind="memtile")
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=length))
    dma.mm2s[0].push(Task(0, repeat_count=8))
    moved, _ = run_channels(dma, (0,))
    assert moved[0] == [CHANNEL_LATENCY["mm2s"] + c for c in load_word_offsets([length] * 8)]


@pytest.mark.parametrize("length", [1, 2, 3])
def test_a_chain_runs_a_bd_every_fetch_interval(length):
    dma = tile_dma(kind="memtile")
    for n in range(6):
        dma.write_bd(n, bd("memtile", base_address=OWN + 8 * n, buffer_length=length,
                           use_next_bd=int(n < 5), next_bd=n + 1))
    dma.mm2s[0].push(Task(0))
    moved, _ = run_channels(dma, (0,))
    assert moved[0] == [CHANNEL_LATENCY["mm2s"] + c for c in load_word_offsets([length] * 6)]


@pytest.mark.parametrize("interval", [FETCH_INTERVAL - 1, FETCH_INTERVAL, FETCH_INTERVAL + 1])
def test_the_fetch_interval_is_what_one_beat_bds_show(monkeypatch, interval):
    """One cycle off the contract's FETCH_INTERVAL moves every word of a run of one-beat
    BDs (a planted interval is caught)."""
    monkeypatch.setattr(channel_module, "FETCH_INTERVAL", interval)
    dma = tile_dma(kind="memtile")
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=1))
    dma.mm2s[0].push(Task(0, repeat_count=8))
    moved, _ = run_channels(dma, (0,))
    contract = [CHANNEL_LATENCY["mm2s"] + FETCH_INTERVAL * n for n in range(8)]
    assert (moved[0] == contract) == (interval == FETCH_INTERVAL)


@pytest.mark.parametrize("depth", [FETCH_DEPTH - 1, FETCH_DEPTH])
def test_the_fetch_stage_needs_its_depth_to_keep_bds_back_to_back(monkeypatch, depth):
    """The stage asks from what it holds at the start of a cycle; one BD fewer and a run
    of BDs of ``FETCH_INTERVAL`` beats has bubbles."""
    monkeypatch.setattr(channel_module, "FETCH_DEPTH", depth)
    dma = tile_dma(kind="memtile")
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=FETCH_INTERVAL))
    dma.mm2s[0].push(Task(0, repeat_count=8))
    moved, _ = run_channels(dma, (0,))
    back_to_back = moved[0] == [CHANNEL_LATENCY["mm2s"] + n for n in range(8 * FETCH_INTERVAL)]
    assert back_to_back == (depth == FETCH_DEPTH)


# --- locks ------------------------------------------------------------------------------------


def locked_chain(length: int, count: int = 4, kind: str = "memtile") -> DMA:
    """``count`` chained BDs of ``length`` beats, each acquiring a free lock and releasing
    another, queued on MM2S 0."""
    dma = tile_dma(kind=kind)
    for n in range(count):
        dma.write_bd(n, bd(kind, base_address=OWN + 8 * n, buffer_length=length,
                           lock_acq_enable=1, lock_acq_id=64 + n, lock_acq_value=-1,
                           lock_rel_id=64 + 8 + n, lock_rel_value=1,
                           use_next_bd=int(n < count - 1), next_bd=n + 1))
        dma.locks.route(64 + n)[0].set(n, 1)
    dma.mm2s[0].push(Task(0))
    return dma


@pytest.mark.parametrize("length", [1, 2, 3, 5])
def test_a_free_lock_costs_no_bubble_after_a_bd_of_lock_grant_latency_beats(length):
    """The next BD asks for its lock when the BD ahead has LOCK_ASK_AHEAD beats left: its
    grant is there for the cycle after the last beat. After a shorter BD the request
    starts in the BD's first cycle and the grant comes LOCK_GRANT_LATENCY - length late."""
    moved, _ = run_channels(locked_chain(length), (0,))
    first = CHANNEL_LATENCY["mm2s"]
    gap = max(0, LOCK_GRANT_LATENCY - length)   # bubbles after each BD
    assert moved[0] == [first + n * (length + gap) + k for n in range(4) for k in range(length)]


def test_one_beat_bds_that_release_never_wait_for_the_release_queue():
    """The release port's grant shows a cycle after the release is applied; the release
    behind it asks in that cycle, so a channel's one-beat BDs, a BD every FETCH_INTERVAL
    cycles, never wait for room in the release queue."""
    dma = tile_dma(kind="memtile")
    for n in range(12):
        dma.write_bd(n, bd("memtile", base_address=OWN + n, buffer_length=1,
                           lock_rel_id=64 + n % 4, lock_rel_value=1,
                           use_next_bd=int(n < 11), next_bd=n + 1))
    dma.mm2s[0].push(Task(0))
    moved, _ = run_channels(dma, (0,))
    assert moved[0] == [CHANNEL_LATENCY["mm2s"] + FETCH_INTERVAL * n for n in range(12)]
    assert [dma.locks.route(64 + k)[0][k] for k in range(4)] == [3, 3, 3, 3]


@pytest.mark.parametrize("ahead", [LOCK_ASK_AHEAD - 1, LOCK_ASK_AHEAD])
def test_the_next_bd_must_ask_its_lock_ahead_by_one_beat(monkeypatch, ahead):
    """Asking one beat later than LOCK_ASK_AHEAD leaves a bubble at every BD boundary."""
    monkeypatch.setattr(channel_module, "LOCK_ASK_AHEAD", ahead)
    moved, _ = run_channels(locked_chain(4), (0,))
    back_to_back = moved[0] == [CHANNEL_LATENCY["mm2s"] + n for n in range(16)]
    assert back_to_back == (ahead == LOCK_ASK_AHEAD)



def test_the_lock_is_acquired_before_the_first_word_and_released_after_the_last():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=3, lock_acq_enable=1, lock_acq_id=4, lock_acq_value=-1,
                       lock_rel_id=5, lock_rel_value=2))
    locks, _ = dma.locks.route(0)
    stream = Stream("out", depth=8)
    ch = dma.mm2s[0].connect(stream)
    ch.push(Task(0))
    # The BD is fetched without its lock and asks for it from the cycle after the engine
    # took it; its first beat waits at the gate for the grant.
    gate = BD_OFFER_LATENCY + ADDRGEN_LATENCY
    assert all(s.cause == "load" for c in range(gate) for s in step([ch], c))
    (stall,) = step([ch], gate)
    assert stall == Stall("lock", 0, LockWait(4, locks.name, 4, 0, -1))
    assert str(stall) == f"BD 0: waits on lock 4 ({locks.name} lock 4) = 0, wants >= 1"
    assert step([ch], gate + 1) == [Stall("lock", 0, LockWait(4, locks.name, 4, 0, -1))]
    locks.set(4, 1)
    # The unit has tested the request in the cycles before: it grants it in the first
    # cycle the lock holds, and its grant register shows in the next, when the first
    # beat enters the datapath.
    opened = gate + 2
    (stall,) = step([ch], opened)
    assert stall.cause == "lock" and locks[4] == 0, "taken, the grant on its way"
    passes = opened + 1
    (stall,) = step([ch], passes)
    assert stall.cause == "load" and stall.progress and len(stream) == 0
    assert step([ch], passes + 1) == [None] and len(stream) == 1
    # The last beat enters the datapath in passes + 2: the BD completes at its end and
    # its release joins the channel's queue; the release port chooses it in the next
    # cycle and the unit applies it at the end of the one after.
    assert ch.step(passes + 2) is None and locks[5] == 0
    ch.commit()
    assert locks[5] == 0 and ch.busy, "the release waits in the queue for a cycle"
    assert ch.step(passes + 3) is None and locks[5] == 0
    ch.commit()
    assert locks[5] == 0, "chosen in this cycle, applied at the end of the next"
    ch.step(passes + 4)
    ch.commit()
    assert locks[5] == 2 and ch.busy, "its grant shows in the next cycle"
    ch.step(passes + 5)
    ch.commit()
    assert not ch.busy


@pytest.mark.parametrize("lock_ids", [(3, 3), (3, 4)], ids=["one lock", "two locks"])
def test_a_tile_grants_one_acquire_a_cycle_the_first_channel_in_order_first(lock_ids):
    """Two channels wait, on one lock or on two; both open in one cycle: one acquire a
    cycle per tile, so channel 0 takes its lock first and channel 1 a cycle later on
    another lock, two cycles later on the same one (the unit grants no request whose
    lock was written at the end of the cycle before)."""
    dma = tile_dma()
    for i in (0, 1):
        dma.write_bd(i, bd(base_address=10 * i, buffer_length=2, lock_acq_enable=1,
                           lock_acq_id=lock_ids[i], lock_acq_value=-1))
        dma.mm2s[i].push(Task(i))
    locks, _ = dma.locks.route(3)
    streams = [Stream(f"out{i}", depth=8) for i in (0, 1)]
    channels = [dma.mm2s[i].connect(streams[i]) for i in (0, 1)]
    opened = 20              # both wait at their gates by then
    first_word, after = {}, []
    for cycle in range(opened + 10):
        if cycle == opened:
            for lock in set(lock_ids):
                locks.set(lock, 2 if len(set(lock_ids)) == 1 else 1)
        for i, result in enumerate(step(channels, cycle)):
            if result is None:
                first_word.setdefault(i, cycle)
        after.append(sum(locks[lock] for lock in set(lock_ids)))
    same = len(set(lock_ids)) == 1
    assert after[opened - 1:opened + 3] == ([0, 1, 1, 0] if same else [0, 1, 0, 0])
    assert first_word[1] == first_word[0] + (2 if same else 1)
    assert [b.data for b in streams[0]._items] == [1, 2]
    assert [b.data for b in streams[1]._items] == [11, 12]


def test_a_tile_applies_one_release_a_cycle_the_first_channel_in_order_first():
    """Two channels' BDs complete in the same cycle, each releasing its own lock: the
    release port chooses channel 0's in the next cycle and the unit applies it at the end
    of the one after; channel 1's follows a cycle later."""
    dma = tile_dma()
    for i in (0, 1):
        # Channel 1 fetches a cycle after channel 0 (one fetch port): one word fewer.
        dma.write_bd(i, bd(base_address=10 * i, buffer_length=3 - i, lock_rel_id=6 + i,
                           lock_rel_value=1))
        dma.mm2s[i].push(Task(i))
    locks, _ = dma.locks.route(6)
    channels = [dma.mm2s[i].connect(Stream(f"out{i}", depth=8)) for i in (0, 1)]
    seen = []
    for cycle in range(20):
        step(channels, cycle)
        seen.append((locks[6], locks[7]))
    first = seen.index((1, 0))
    assert seen[first - 1] == (0, 0) and seen[first + 1] == (1, 1), seen
    # Both completed in the same cycle (their last beats), before channel 0's release.
    assert [c.done[0].cycle for c in channels] == [first - 2] * 2


def test_a_channel_owes_at_most_the_release_queue_depth():
    """While the tile's release port is taken every cycle, a channel's one-beat BDs that
    release pass the gate until it owes RELEASE_QUEUE_DEPTH releases; the next waits,
    a lock stall that names the debt, and goes once the port frees."""
    dma = tile_dma()
    count = RELEASE_QUEUE_DEPTH + 2
    for i in range(count):
        dma.write_bd(i, bd(base_address=i, buffer_length=1, lock_rel_id=2, lock_rel_value=1,
                           use_next_bd=int(i + 1 < count), next_bd=i + 1))
    locks, _ = dma.locks.route(2)
    stream = Stream("out", depth=16)
    ch = dma.mm2s[0].connect(stream)
    ch.push(Task(0))
    held = 30                # another agent takes the release port until then
    stalls = []
    for cycle in range(held + 12):
        if cycle < held:
            assert locks.take_release_port(cycle)
        stalls += [(cycle, s) for s in step([ch], cycle) if s is not None]
    owes = [(c, s) for c, s in stalls if "owes" in s.detail]
    # The last waits in cycle `held + 1`: the port frees in `held` and chooses the head,
    # which the unit applies at the end of the next cycle.
    assert owes and max(c for c, _ in owes) == held + 1, stalls
    assert owes[0][1].cause == "lock" and f"owes {RELEASE_QUEUE_DEPTH}" in owes[0][1].detail
    assert [b.data for b in stream._items] == list(range(1, count + 1))
    assert locks[2] == count and not ch.busy, "every release applied once the port freed"


def test_acquire_equal_waits_for_the_value_and_keeps_it():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=1, lock_acq_enable=1, lock_acq_id=1, lock_acq_value=2))
    locks, _ = dma.locks.route(0)
    locks.set(1, 3)
    ch = dma.mm2s[0].connect(Stream("out"))
    ch.push(Task(0))
    gate = BD_OFFER_LATENCY + ADDRGEN_LATENCY
    assert all(step([ch], c)[0].lock is None for c in range(gate)), "not before the first beat"
    assert step([ch], gate)[0].lock.wanted == "== 2"
    locks.set(1, 2)
    passes = gate + 2   # tested long before: granted in gate + 1, shown in gate + 2
    assert all(step([ch], c)[0].cause == "lock" for c in range(gate + 1, passes))
    assert step([ch], passes)[0].cause == "load" and locks[1] == 2
    assert step([ch], passes + 1) == [None]


def test_a_release_overflow_names_the_channel_and_bd():
    dma = tile_dma()
    dma.write_bd(6, bd(buffer_length=1, lock_rel_id=2, lock_rel_value=10))
    dma.locks.route(2)[0].set(2, 60)
    with pytest.raises(LockError, match=r"^lock_rel_value=10: lock 2 of tile\(2,3\) locks is 60; "
                                        r"60 \+ 10 = 70 overflows 0..63; channel "
                                        r"tile\(2,3\)\.mm2s0, BD 6$"):
        read_all(dma, [Task(6)])


def test_memory_tile_bds_reach_the_neighbours_locks():
    from aiedma.model.system.locks import LockTable, lock_space
    own, east = LockTable("own", 64), LockTable("east", 64)
    dma = DMA("memtile", 0, 1, locks=lock_space("memtile", "m", own, east=east))
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=1, lock_acq_enable=1,
                       lock_acq_id=129, lock_acq_value=-1, lock_rel_id=70, lock_rel_value=1))
    east.set(1, 1)
    read_all(dma, [Task(0)])
    assert east[1] == 0 and own[6] == 1


# --- TLAST and packets ------------------------------------------------------------------------


def test_tlast_on_the_last_word_of_each_bd_unless_suppressed():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=2, use_next_bd=1, next_bd=1))
    dma.write_bd(1, bd(buffer_length=3, tlast_suppress=1, use_next_bd=1, next_bd=2))
    dma.write_bd(2, bd(buffer_length=1))
    beats, _ = read_all(dma, [Task(0)])
    assert [b.last for b in beats] == [False, True, False, False, False, True]


def test_packet_header_before_each_bd_not_counted_in_buffer_length():
    dma = tile_dma()  # tile(2,3): column 2, row 3
    dma.write_bd(0, bd(buffer_length=2, enable_packet=1, packet_id=9, packet_type=5,
                       use_next_bd=1, next_bd=1))
    dma.write_bd(1, bd(base_address=10, buffer_length=1, enable_packet=1, packet_id=4))
    beats, report = read_all(dma, [Task(0)])
    first, second = packet_header(9, 5, 3, 2), packet_header(4, 0, 3, 2)
    assert [b.data for b in beats] == [first, 1, 2, second, 11]
    assert [b.last for b in beats] == [False, False, True, False, True]
    for word in (first, second):
        assert word.bit_count() % 2 == 1, "odd parity"
        header = parse_packet_header(word)
        assert (header.source_row, header.source_column) == (3, 2)
    assert report.words[dma.mm2s[0].name] == 5


def test_s2mm_reads_and_drops_the_header_of_a_packet_bd():
    dma = tile_dma(np.zeros(8, dtype=np.int64))
    dma.write_bd(0, bd(base_address=2, buffer_length=2, enable_packet=1, packet_id=1))
    write_all(dma, [Task(0, repeat_count=2)],
              [Beat(packet_header(1, 0, 0, 0)), Beat(7), Beat(8, True),
               Beat(packet_header(1, 0, 0, 0)), Beat(9), Beat(10, True)])
    assert dma.memory.resolve(0)[0].dump(0, 5).tolist() == [0, 0, 9, 10, 0]


def test_s2mm_refuses_a_header_with_bad_parity():
    dma = tile_dma()
    dma.write_bd(1, bd(buffer_length=1, enable_packet=1))
    bad = packet_header(1, 0, 0, 0) ^ (1 << 31)
    with pytest.raises(PacketError, match=r"^word=0x80000001: bad parity: a header must have an "
                                          r"odd number of ones; received by channel "
                                          r"tile\(2,3\)\.s2mm0, BD 1$"):
        write_all(dma, [Task(1)], [bad, 5])


# --- errors at load ---------------------------------------------------------------------------


@pytest.mark.parametrize(("table", "task", "error", "message"), [
    ({0: BufferDescriptor("tile", buffer_length=1)}, Task(0), ChannelError,
     r"^valid_bd=0: a BD loaded by a task must have valid_bd = 1; channel tile\(2,3\)\.mm2s0, "
     r"BD 0$"),
    ({0: bd(buffer_length=1, use_next_bd=1, next_bd=3),
      3: BufferDescriptor("tile", buffer_length=1)}, Task(0), ChannelError,
     r"^valid_bd=0: .*; channel tile\(2,3\)\.mm2s0, BD 3$"),
    ({}, Task(5), ChannelError, r"^bd_id=5: no such BD in the table; channel "
                                r"tile\(2,3\)\.mm2s0, BD 5$"),
    ({0: bd(buffer_length=1, use_next_bd=1, next_bd=1), 1: bd(buffer_length=1, use_next_bd=1)},
     Task(0), ChannelError, r"^next_bd=0: the chain loops back to a BD it already ran"),
])
def test_load_errors_name_the_channel_and_bd(table, task, error, message):
    dma = tile_dma()
    dma.bds.update(table)
    with pytest.raises(error, match=message):
        read_all(dma, [task])


def test_a_chain_edited_across_the_half_is_caught_at_load():
    dma = tile_dma(kind="memtile")
    dma.bds[0] = bd("memtile", base_address=OWN, buffer_length=1, use_next_bd=1, next_bd=30)
    with pytest.raises(ChannelError, match=r"^next_bd=30: a memory-tile chain stays in its half.*"
                                           r"; channel memtile\(2,3\)\.mm2s0, BD 0$"):
        read_all(dma, [Task(0)])


def test_s2mm_refuses_a_bd_with_padding():
    dma = tile_dma(kind="memtile")
    dma.write_bd(24, bd("memtile", base_address=OWN, buffer_length=4, d0_wrap=2,
                        d0_zero_after=2))
    with pytest.raises(ChannelError, match=r"^d0_zero_after=2: S2MM cannot pad \(zero padding is "
                                           r"memory-tile MM2S only\); channel "
                                           r"memtile\(2,3\)\.s2mm1, BD 24$"):
        write_all(dma, [Task(24)], range(4), channel=1)


def test_memory_tile_mm2s_sends_zeros_for_padding():
    # docs/bd.md's hardware-checked case: D0 wrap 13, pad 2/1, length 16 over memory 1..13.
    dma = tile_dma(kind="memtile")
    dma.write_bd(0, bd("memtile", base_address=OWN, buffer_length=16, d0_wrap=13,
                       d0_zero_before=2, d0_zero_after=1))
    beats, _ = read_all(dma, [Task(0)])
    assert [b.data for b in beats] == [0, 0, *range(1, 14), 0]


def test_a_channel_without_a_stream_is_an_error():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=1))
    dma.mm2s[1].push(Task(0))
    with pytest.raises(ChannelError, match=r"^stream=None: channel tile\(2,3\)\.mm2s1 has no "
                                           r"stream connected"):
        run_system([dma.mm2s[1]])


def test_stall_causes():
    dma = tile_dma()
    dma.write_bd(0, bd(buffer_length=4))
    out = Stream("out", depth=1)
    ch = dma.mm2s[0].connect(out)
    assert ch.step(0) == Stall("idle")
    ch.push(Task(0))
    latency = CHANNEL_LATENCY["mm2s"]
    assert [s.cause for s in step([ch], 1)] == ["load"]
    for c in range(2, latency + 1):
        step([ch], c)
    assert ch.step(latency + 1) is None
    stall = ch.step(latency + 2)
    assert (stall.cause, stall.bd, stall.detail) == ("backpressure", 0, "out")
    inbound = Stream("in")
    s2mm = dma.s2mm[0].connect(inbound)
    s2mm.push(Task(0))
    for c in range(CHANNEL_LATENCY["s2mm"]):
        assert step([s2mm], c)[0].cause == "load"
    # The first beat shows with no word: the skid takes it (progress), then nothing moves.
    latency = CHANNEL_LATENCY["s2mm"]
    assert s2mm.step(latency) == Stall("empty", 0, detail="in", progress=True)
    assert s2mm.step(latency + 1) == Stall("empty", 0, detail="in")


# --- agreement with run_task ------------------------------------------------------------------


@st.composite
def lowered_programs(draw, kind, direction):
    """A legal port program lowered for ``kind`` / ``direction``, or None, and a run count."""
    inside = direction == "write" or kind != "memtile"  # only memory-tile reads may pad
    entries = draw(st.lists(tilings(max_elements=96, inside=inside), min_size=1, max_size=3))
    # One port addresses one buffer: later entries of another shape read it whole.
    shape = list(entries[0].buffer_dimension)
    entries = [e.to_dict() if list(e.buffer_dimension) == shape else {"buffer_dimension": shape}
               for e in entries]
    if direction == "read":
        for e in entries:
            e["packet_port_id"] = draw(st.sampled_from([-1, -1, 0, 5]))
    base = {"memtile": OWN, "tile": 64, "shim": 8}[kind] + draw(st.sampled_from([0, 3]))
    first_bd = draw(st.sampled_from([0, 2])) + (24 if kind == "memtile" else 0)
    try:
        program = PortProgram(entries).validate(kind, direction)
        lowered = lower(program, kind, direction, base_address=base, first_bd=first_bd)
    except (TilingError, LoweringError):  # illegal for the kind, or over the BD budget
        lowered = None
    return lowered, draw(st.integers(1, 2))


CONTEXTS = [(k, d) for k in ("memtile", "tile", "shim") for d in ("read", "write")]


@pytest.mark.parametrize(("kind", "direction"), CONTEXTS)
@settings(max_examples=30)
@given(data=st.data())
def test_a_channel_agrees_with_run_task(kind, direction, data):
    """Same BDs and task (run ``runs`` times): the same words in the same order, TLAST at the
    end of every pass, one header per packet BD load, and the same BD table afterwards."""
    lowered, runs = data.draw(lowered_programs(kind, direction))
    event("lowered" if lowered else "not legal for the kind")
    if lowered is None:
        return
    dma = tile_dma(np.zeros(1), kind=kind)
    memory, start = dma.memory.resolve(lowered.base_address)
    for b in lowered.bds:
        dma.write_bd(b.bd_id, b.bd)
    table, words = lowered.table(), []
    for _ in range(runs):
        w, table = run_task(kind, table, lowered.task)
        words.append(w)
    words = np.concatenate(words)
    if words.max(initial=0) - lowered.base_address + start >= memory.size:
        event("larger than memory")
        return  # a buffer larger than the tile's memory: the memory tests cover that error
    event(f"{len(lowered.bds)} BD(s)" if len(lowered.bds) < 3 else "3+ BDs")
    index = 1 if kind == "memtile" else 0  # a memory-tile channel runs its BD half
    if direction == "read":
        memory.data[start:] = np.arange(1, memory.size - start + 1)
        expected = np.where(words < 0, 0, words - lowered.base_address + 1)
        beats, _ = read_all(dma, [lowered.task] * runs, channel=index)
        headers = {packet_header(b.bd.packet_id, 0, dma.row, dma.column)
                   for b in lowered.bds if b.bd.enable_packet}
        data_words = [b.data for b in beats if b.data not in headers]
        np.testing.assert_array_equal(data_words, expected)
        loads = runs * lowered.task.repeat_count
        packet_bds = sum(lowered.table()[i].enable_packet for i in _chain(lowered))
        assert len(beats) - len(data_words) == loads * packet_bds
        assert beats[-1].last
        # lower() keeps TLAST on the chain's last BD and on every packet BD.
        chain = [lowered.table()[i] for i in _chain(lowered)]
        tlasts = sum(not bd.tlast_suppress for bd in chain)
        assert tlasts == 1 + sum(bd.enable_packet for bd in chain[:-1])
        assert sum(b.last for b in beats) == loads * tlasts
    else:
        write_all(dma, [lowered.task] * runs, range(1, words.size + 1), channel=index)
        expected = np.zeros(memory.size, dtype=np.int64)
        for k, address in enumerate(words - lowered.base_address + start):
            expected[address] = k + 1  # overlapping writes keep the last value
        np.testing.assert_array_equal(memory.data, expected)
    assert dma.bds == table, "iteration write-back agrees"


def _chain(lowered):
    table, bd_id, chain = lowered.table(), lowered.task.start_bd, []
    while True:
        chain.append(bd_id)
        if not table[bd_id].use_next_bd:
            return chain
        bd_id = table[bd_id].next_bd


def test_bd_budget_is_the_kinds():
    assert BD_COUNT == {"tile": 16, "memtile": 48, "shim": 16}



@pytest.mark.parametrize("fault", ["memory", "lock"])
def test_the_python_api_raises_on_a_memory_tile_fault_the_register_path_flags(fault):
    """Through Channel.push an access past the own window into the absent east one raises
    MemoryAccessError (the address, the window, the channel and BD), and a lock of the
    absent west neighbour LockError; the same BD through the registers sets its status
    bit instead (the access not made, the channel stopped: a deadlock naming the bit
    where it holds a BD; tests/tb/system/test_faults.py compares these with the RTL)."""
    from aiedma.model.arch.kinds import DMA_KINDS
    from aiedma.model.system.memory import MemoryAccessError
    from aiedma.model.system.registers import apply_writes
    from aiedma.model.system.scheduler import DeadlockError

    if fault == "memory":
        table = bd("memtile", base_address=OWN + 131070, buffer_length=4)
        error, message = MemoryAccessError, (r"^address=262144: the east window .* has no "
                                             r"memory; channel memtile\(2,3\)\.mm2s0, BD 2")
    else:
        table = bd("memtile", base_address=OWN, buffer_length=2, lock_acq_enable=1,
                   lock_acq_id=3, lock_acq_value=-1)
        error, message = LockError, r"^lock_id=3: IDs 0-63 .* west neighbour's locks"
    dma = tile_dma(kind="memtile")
    dma.write_bd(2, table)
    with pytest.raises(error, match=message):
        read_all(dma, [Task(2)])
    dma = tile_dma(kind="memtile")
    base = DMA_KINDS["memtile"].bd_register(2)
    apply_writes(dma, [(base + 4 * w, word) for w, word in enumerate(table.encode())])
    stream = Stream("out")
    channel = dma.mm2s[0].connect(stream)
    channel.write_start_queue(Task(2).encode())
    sink = StreamSink("sink", stream)
    name = f"error_{'dm' if fault == 'memory' else 'lock'}_access_to_unavailable"
    if fault == "memory":
        run_system([channel, sink])       # the task runs on, its last two words 0
        assert [beat.data for beat in sink.beats] == [0, 0, 0, 0]   # (own memory's end)
    else:
        with pytest.raises(DeadlockError, match=f"stopped by {name} until a reset"):
            run_system([channel, sink])
    assert channel.errors == {name}
