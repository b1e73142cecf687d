"""Channels with (de)compression in the system model: MM2S sends the format, S2MM writes the
words back, both bits needed, no warning, round trip through a stream."""

import warnings

import numpy as np
import pytest

from aiedma.model import BufferDescriptor, Task
from aiedma.model.arch.registers import CONTROL_FIELDS
from aiedma.model.bd.compression import compress_words
from aiedma.model.bd.fields import FIELD_INDEX
from aiedma.model.system.dma import DMA
from aiedma.model.system.scheduler import run_system
from aiedma.model.system.stream import Stream, StreamSink, StreamSource

ON = 1 << 4   # compression_enable (MM2S) / decompression_enable (S2MM)


def bd(kind, **fields):
    return BufferDescriptor(kind, valid_bd=1, **fields)


def base(kind):
    return 0x20000 if kind == "memtile" else 0


def sparse(seed, n):
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 256, 4 * n, dtype=np.uint8)
    data[rng.random(4 * n) < 0.6] = 0
    return data.view("<u4").astype(np.uint32)


def write_chain(dma, kind, lengths, bd_bits):
    """BDs 0.. of ``lengths``, chained, one after the other from ``base(kind)``."""
    start = 0
    for k, (n, bit) in enumerate(zip(lengths, bd_bits, strict=True)):
        last = k == len(lengths) - 1
        dma.bds[k] = bd(kind, base_address=base(kind) + start, buffer_length=n,
                        enable_compression=bit, use_next_bd=int(not last),
                        next_bd=0 if last else k + 1)
        start += n


def mm2s_run(kind, words, lengths, bd_bits, control):
    """MM2S channel 0 sends ``words`` in BDs of ``lengths`` (chained), BD bits as given."""
    dma = DMA(kind, 2, 3)
    memory, offset = dma.memory.resolve(base(kind))
    memory.load(offset, words)
    write_chain(dma, kind, lengths, bd_bits)
    channel = dma.mm2s[0].connect(Stream("out"))
    channel.write_control(control)
    channel.push(Task(0))
    sink = StreamSink("sink", channel.stream)
    report = run_system([channel, sink])
    return [b.data for b in sink.beats], [b.last for b in sink.beats], report


@pytest.mark.parametrize("kind", ["tile", "memtile"])
def test_mlir_aie_figure_first_bd_plain_then_1920_words(kind):
    words = np.arange(4096)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # compression is modelled: no NotModelledWarning
        data, lasts, _ = mm2s_run(kind, words, [1024] * 4, [0, 1, 1, 1], ON)
    assert len(data) == 2944
    expect = words[:1024].tolist()
    for s in range(1024, 4096, 1024):
        expect += compress_words(words[s:s + 1024]).tolist()
    assert data == expect
    # TLAST on each BD's last word: the last compressed word of BDs 1-3.
    assert [k for k, last in enumerate(lasts) if last] == [1023, 1663, 2303, 2943]


@pytest.mark.parametrize(("bd_bit", "control"), [(1, 0), (0, ON), (0, 0)])
def test_one_bit_alone_leaves_the_words_as_they_are(bd_bit, control):
    words = sparse(1, 19)
    data, _, _ = mm2s_run("tile", words, [19], [bd_bit], control)
    assert data == words.tolist()


def test_compression_off_has_the_cycles_of_a_channel_without_it():
    words = sparse(2, 40)
    _, _, plain = mm2s_run("tile", words, [17, 23], [1, 1], 0)
    _, _, clear = mm2s_run("tile", words, [17, 23], [0, 0], ON)
    assert plain.cycles == clear.cycles


def test_shim_has_no_compression_bits():
    # AM020: compression is in the core-tile and memory-tile DMAs only; the shim has
    # neither the BD field nor the control bit, so nothing can switch it on there.
    for direction in ("mm2s", "s2mm"):
        assert not {"compression_enable", "decompression_enable"} & set(
            CONTROL_FIELDS["shim", direction])
    assert "enable_compression" not in FIELD_INDEX["shim"]


def s2mm_run(kind, stream_words, lengths, bd_bits, control):
    dma = DMA(kind, 2, 3)
    write_chain(dma, kind, lengths, bd_bits)
    stream = Stream("in")
    channel = dma.s2mm[0].connect(stream)
    channel.write_control(control)
    channel.push(Task(0))
    run_system([StreamSource("source", stream, stream_words), channel])
    return [dma.memory.read(base(kind) + k, "test") for k in range(sum(lengths))]


@pytest.mark.parametrize("kind", ["tile", "memtile"])
def test_s2mm_decompresses_into_buffer_length_words(kind):
    bds = [sparse(3, 13), sparse(4, 8), sparse(5, 21)]
    stream = [w for b in bds for w in compress_words(b).tolist()]
    written = s2mm_run(kind, stream, [13, 8, 21], [1, 1, 1], ON)
    assert list(map(int, written)) == [int(w) for b in bds for w in b]


@pytest.mark.parametrize("kind", ["tile", "memtile"])
def test_round_trip_mm2s_compressing_into_s2mm_decompressing(kind):
    words = sparse(6, 45)
    lengths, bits = [9, 16, 20], [1, 0, 1]
    source = DMA(kind, 2, 3)
    memory, offset = source.memory.resolve(base(kind))
    memory.load(offset, words)
    sink = DMA(kind, 3, 3)
    start = 0
    for k, (n, bit) in enumerate(zip(lengths, bits, strict=True)):
        last = k == len(lengths) - 1
        for dma in (source, sink):
            dma.bds[k] = bd(kind, base_address=base(kind) + start, buffer_length=n,
                            enable_compression=bit, use_next_bd=int(not last),
                            next_bd=0 if last else k + 1)
        start += n
    link = Stream("link")
    mm2s, s2mm = source.mm2s[0].connect(link), sink.s2mm[0].connect(link)
    for channel in (mm2s, s2mm):
        channel.write_control(ON)
        channel.push(Task(0))
    report = run_system([mm2s, s2mm])
    got = [sink.memory.read(base(kind) + k, "test") for k in range(len(words))]
    assert list(map(int, got)) == words.tolist()
    assert mm2s.words == sum(len(compress_words(words[s:s + n])) if bit else n
                             for s, n, bit in ((0, 9, 1), (9, 16, 0), (25, 20, 1)))
    assert report.cycles > 0
