"""(De)compression on the whole RTL DMA against the model, every cycle: random programs
(tb/system/compression_programs.py) and a few pinned cases."""

import numpy as np
import pytest

from aiedma.model.arch.kinds import BD_REGISTER_STRIDE, DEFAULT_ROW, DMA_KINDS
from aiedma.model.arch.registers import control_address, start_queue_address
from aiedma.model.bd.compression import compress_words
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.task import Task
from aiedma.model.system.registers import apply_writes
from aiedma.model.system.stream import Stream, StreamSink, StreamSource
from aiedma.tb.system.compression_programs import random_compression_program
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.loop import run_with_rtl
from aiedma.tb.system.random_programs import program_dma

KINDS = ["tile", "memtile"]


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_random_compression_programs_on_the_whole_rtl_dma_equal_the_model(kind):
    for seed in range(1, 9):
        program = random_compression_program(seed, kind)
        run_dma(kind, program.writes, memory=program.memory, inputs=program.inputs,
                simulator="amaranth", reuse=True)


# The core tile only: the memory tile's DMA without them is the same channels and lock
# unit in more copies, and elaborating it (a block of its own) costs 20-35 s.
@pytest.mark.parametrize("kind", ["tile"])
def test_random_compression_programs_on_the_dma_without_compressors_equal_the_model(kind):
    """Built without the (de)compressors: the enables written, BDs with
    ``enable_compression``, every word moved as it is, RTL and model alike every cycle."""
    for seed in range(1, 5):
        program = random_compression_program(seed, kind, compression=False)
        run_dma(kind, program.writes, memory=program.memory, inputs=program.inputs,
                simulator="amaranth", reuse=True, compression=False)


def test_random_programs_refuse_the_shim():
    with pytest.raises(ValueError, match=r"kind='shim': compression is in core-tile"):
        random_compression_program(1, "shim")


@pytest.mark.parametrize("kind", KINDS)
def test_the_mlir_aie_figure_on_the_rtl(kind):
    """arange in two BDs of 64 words, the first without compression: 64 + 40 words."""
    own = DMA_KINDS[kind].memory_window("own").start
    table = {0: BufferDescriptor(kind, base_address=own, buffer_length=64, valid_bd=1,
                                 use_next_bd=1, next_bd=1, tlast_suppress=1),
             1: BufferDescriptor(kind, base_address=own + 64, buffer_length=64, valid_bd=1,
                                 enable_compression=1)}
    base = DMA_KINDS[kind].bd_register_base
    writes = [(base + BD_REGISTER_STRIDE * n + 4 * w, word)
              for n, bd in table.items() for w, word in enumerate(bd.encode())]
    writes += [(control_address(kind, "mm2s", 0), 1 << 4),
               (start_queue_address(kind, "mm2s", 0), Task(0).encode())]
    words = np.arange(1024, 1152)
    result = run_dma(kind, writes, memory=words, simulator="amaranth", reuse=True)
    out = [data for data, _ in result.outputs["mm2s0"]]
    assert out == words[:64].tolist() + compress_words(words[64:]).tolist()
    assert len(out) == 64 + 40


# The memory tile without its (de)compressors is a block of its own to elaborate (about
# 11 s a worker): long, beside its random programs with them.
@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_the_mlir_aie_figure_without_compressors_moves_every_word(kind):
    """The same program on the DMA built without them: 128 words, as they are."""
    own = DMA_KINDS[kind].memory_window("own").start
    table = {0: BufferDescriptor(kind, base_address=own, buffer_length=128, valid_bd=1,
                                 enable_compression=1)}
    base = DMA_KINDS[kind].bd_register_base
    writes = [(base + 4 * w, word) for w, word in enumerate(table[0].encode())]
    writes += [(control_address(kind, "mm2s", 0), 1 << 4),
               (start_queue_address(kind, "mm2s", 0), Task(0).encode())]
    words = np.arange(1024, 1152)
    lite = run_dma(kind, writes, memory=words, simulator="amaranth", reuse=True,
                   compression=False)
    assert [data for data, _ in lite.outputs["mm2s0"]] == words.tolist()
    full = run_dma(kind, writes, memory=words, simulator=None)
    assert [data for data, _ in full.outputs["mm2s0"]] == compress_words(words).tolist()


@pytest.mark.parametrize("kind", KINDS)
def test_random_compression_programs_keep_every_engine_port_equal_in_the_loop(kind):
    """The channels' engines as RTL inside the model's channels (whose compressor and
    decompressor are the model's), every engine port compared every cycle."""
    for seed in range(1, 5):
        program = random_compression_program(seed, kind)
        dma = program_dma(kind, DEFAULT_ROW[kind])
        memory, offset = dma.memory.resolve(DMA_KINDS[kind].memory_window("own").start)
        memory.load(offset, program.memory)
        apply_writes(dma, program.writes)
        stream, out = Stream("in"), Stream("out")
        s2mm, mm2s = dma.s2mm[0].connect(stream), dma.mm2s[0].connect(out)
        agents = [StreamSource("src", stream, program.inputs["s2mm0"]), s2mm, mm2s,
                  StreamSink("sink", out)]
        run_with_rtl(agents, [s2mm, mm2s], "amaranth")   # raises LoopMismatch on a difference
