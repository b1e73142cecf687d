"""Window protection (``DMA(allowed=...)``): a channel run through its registers makes no
memory access outside its DMA's window; the access is not made and
error_dm_access_to_unavailable is set, stepped or on the fast path alike."""

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, Task
from aiedma.model.arch.kinds import DMA_KINDS, AllowedWindow, check_allowed
from aiedma.model.system.channel import ChannelError
from aiedma.model.system.dma import DMA
from aiedma.model.system.registers import apply_writes
from aiedma.model.system.scheduler import run_system
from aiedma.model.system.stream import Stream, StreamSink, StreamSource

WINDOW = (1024, 1024)
LENGTH = 3000        # long enough for the fast path to jump across the window's end


def programmed(direction, base, length=LENGTH):
    dma = DMA("tile", 0, 2, allowed=WINDOW)
    dma.memory.resolve(0)[0].load(0, np.arange(1, 16385))
    bd = BufferDescriptor("tile", base_address=base, buffer_length=length, valid_bd=1)
    base = DMA_KINDS["tile"].bd_register(2)
    apply_writes(dma, [(base + 4 * w, word) for w, word in enumerate(bd.encode())])
    stream = Stream("s")
    channel = getattr(dma, direction)[0].connect(stream)
    channel.write_start_queue(Task(2).encode())
    return dma, channel, stream


@pytest.mark.parametrize("exact", [True, False])
def test_mm2s_reads_outside_the_window_are_not_made(exact):
    _, channel, stream = programmed("mm2s", 2000)
    sink = StreamSink("sink", stream)
    run_system([channel, sink], exact=exact)
    words = [beat.data for beat in sink.beats]
    inside = 2048 - 2000
    assert words == [*range(2001, 2001 + inside), *[0] * (LENGTH - inside)]
    assert channel.errors == {"error_dm_access_to_unavailable"}


@pytest.mark.parametrize("exact", [True, False])
def test_s2mm_writes_outside_the_window_are_not_made(exact):
    dma, channel, stream = programmed("s2mm", 900)
    source = StreamSource("source", stream, np.full(LENGTH, 7))
    run_system([source, channel], exact=exact)
    data = dma.memory.resolve(0)[0].data
    assert (data[1024:2048] == 7).all()
    assert list(data[:1024]) == list(range(1, 1025))          # below the window: untouched
    assert list(data[2048:3900]) == list(range(2049, 3901))   # above it: untouched
    assert channel.errors == {"error_dm_access_to_unavailable"}


def test_a_bd_inside_the_window_runs_without_error():
    _, channel, stream = programmed("mm2s", 1024, 1024)
    sink = StreamSink("sink", stream)
    run_system([channel, sink])
    assert [beat.data for beat in sink.beats] == list(range(1025, 2049))
    assert not channel.errors


@pytest.mark.parametrize(("allowed", "rule"), [
    ((0, 1000), "words must be a power of two"),
    ((512, 1024), "start must be a multiple of words"),
    ((-1024, 1024), "start must be a multiple of words"),
    ((16384, 1024), "must end within the tile DMA's 14-bit word addresses"),
    ((0, 0), "words must be a power of two"),
    ((0,), r"must be None or \(start, words\)"),
    ("all", r"must be None or \(start, words\)"),
])
def test_a_bad_window_is_refused(allowed, rule):
    with pytest.raises(ChannelError, match=rf"^allowed=.*: {rule}"):
        DMA("tile", allowed=allowed)


def test_a_window_is_kept_as_given():
    assert check_allowed("memtile", (131072, 131072)) == AllowedWindow(131072, 131072)
    assert check_allowed("shim", None) is None
    assert DMA("tile", allowed=(0, 16384)).allowed.size_bits == 14
