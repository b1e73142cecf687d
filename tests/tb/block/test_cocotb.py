"""The exported Verilog under cocotb 2 (Verilator and Icarus), checked every cycle by the
scoreboard the Amaranth tests use.

Builds are cached on disk per simulator and top in ``build/cocotb`` and shared by all
tests (and across sessions): only the first test of a top pays for its build.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hdl_strategies import corners
from repo import REPO

from aiedma.hdl.layouts import beat_layout, data_beat_layout
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY
from aiedma.tb.block import cocotb_runner
from aiedma.tb.block.cocotb_bench import unpacker
from aiedma.tb.block.cocotb_runner import run_cocotb
from aiedma.tb.block.harness import check_s2mm
from aiedma.tb.common.beats import expected_beats, mm2s_words, s2mm_memory
from aiedma.tb.common.stimulus import ready_and_offer

SIMULATORS = ("verilator", "icarus")
BUILD = REPO / "build"


def stimulus(block: str, kind: str, bds: list[BufferDescriptor], *, ready=None, offer=None,
             seed=None, memory=None, expected_bds=None) -> dict:
    return {"block": block, "kind": kind,
            "bds": [bd.to_dict(include_defaults=True) for bd in bds],
            "ready": ready, "offer": offer, "seed": seed, "memory": memory,
            "expected_bds": None if expected_bds is None
            else [bd.to_dict(include_defaults=True) for bd in expected_bds]}


def model_beats(bds: list[BufferDescriptor]) -> list[list]:
    return [[b["address"], bool(b["zero"]), bool(b["last"])] for b in expected_beats(bds)]


def run(top: str, simulator: str, stim: dict, **options) -> dict:
    return run_cocotb(top, simulator, stim, build_root=BUILD, **options)


# Every kind on Icarus, the memory tile on Verilator: a cocotb Verilator build costs about
# 30 s, and the other kinds' address generators run on Verilator in tests/tb/test_bulk.py
# (`make sim SIM=verilator` runs every kind there).
@pytest.mark.parametrize(("simulator", "kind"),
                         [*(("icarus", kind) for kind in KINDS), ("verilator", "memtile")])
def test_addrgen_ready_high(simulator, kind):
    """Corner BDs back to back (padding on memtile, wrap 0, length 0 and 1, maximal
    steps and iteration): the model's beats, one per cycle, not a bubble."""
    bds = corners(kind)
    result = run(f"aiedma_addrgen_{kind}", simulator, stimulus("addrgen", kind, bds))
    assert result["mismatch"] is None and not result["failed"]
    assert result["beats"] == model_beats(bds)
    assert result["summary"]["bubbles"] == 0
    assert result["summary"]["words"] == sum(bd.buffer_length for bd in bds)
    assert result["cycles_per_second"] > 0


# Backpressure on the memory tile only: the cocotb driver's handshake does not depend on
# the kind, and tests/hdl checks every kind under backpressure on Amaranth's simulator.
@pytest.mark.parametrize("kind", ["memtile"])
@pytest.mark.parametrize("simulator", SIMULATORS)
def test_addrgen_backpressure_and_idle_input(simulator, kind):
    seed = 1000 + KINDS.index(kind)
    bds = corners(kind)[::-1]  # another order: other BD boundaries than above
    ready, offer = ready_and_offer(seed, 3 * sum(bd.buffer_length for bd in bds))
    result = run(f"aiedma_addrgen_{kind}", simulator,
                 stimulus("addrgen", kind, bds, ready=ready, offer=offer, seed=seed))
    assert result["mismatch"] is None
    assert result["beats"] == model_beats(bds)


# On Icarus: on Verilator the MM2S channel runs in `make sim SIM=verilator` (a cocotb
# Verilator build is about 30 s) and in the loop in tests/tb/test_loop.py.
@pytest.mark.parametrize("simulator", ["icarus"])
def test_mm2s_channel_memtile_padding(simulator):
    """BDs in, memory words (0 for padding) out, under backpressure, through the
    simulated BRAM (one cycle of read latency, noise on mem_data otherwise)."""
    seed = 7
    bds = [bd for bd in corners("memtile") if bd.buffer_length]
    memory = np.random.default_rng(seed).integers(1, 2**32, 4096).tolist()  # no 0 word
    ready, _ = ready_and_offer(seed, 2 * sum(bd.buffer_length for bd in bds), stall=0.3)
    result = run("aiedma_mm2s_channel_memtile", simulator,
                 stimulus("mm2s_channel", "memtile", bds, ready=ready, seed=seed,
                          memory=memory))
    assert result["mismatch"] is None
    want = mm2s_words(expected_beats(bds), memory)
    assert result["words"] == [[w["data"], bool(w["last"])] for w in want]
    assert any(w["data"] == 0 for w in want), "the BDs should pad"


# long on Verilator: a build of its own (about 40 s on a fresh checkout), for the same
# Verilog Icarus runs here.
@pytest.mark.parametrize("simulator", ["icarus", pytest.param("verilator", marks=pytest.mark.long)])
def test_s2mm_channel_through_the_public_harness(simulator):
    """BDs and words in, memory writes out, with an idle word producer and gaps
    between BDs: the same harness as on Amaranth, every cycle checked."""
    seed = 11
    bds = [bd.replace(**{n: 0 for n in bd.fields() if "_zero_" in n})
           for bd in corners("shim")]
    words = np.random.default_rng(seed).integers(0, 2**32, sum(bd.buffer_length
                                                               for bd in bds)).tolist()
    valid, offer = ready_and_offer(seed, 3 * len(words))
    memory = np.zeros(256, dtype=np.int64)
    result = check_s2mm("shim", bds, words, memory, valid, simulator, offer=offer, seed=seed)
    assert np.array_equal(result.memory, s2mm_memory(expected_beats(bds), words, memory))
    assert result.summary.words == len(words)


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_a_wrong_expectation_is_reported(simulator):
    """The bench drives one BD while the model expects another: the first beat
    differs, and the run comes back failed with the scoreboard's message."""
    # the memory tile: its Verilator build is the one test_addrgen_ready_high makes
    driven = [BufferDescriptor("memtile", buffer_length=5, base_address=3)]
    expected = [BufferDescriptor("memtile", buffer_length=5, base_address=4)]
    result = run("aiedma_addrgen_memtile", simulator,
                 stimulus("addrgen", "memtile", driven, seed=99, expected_bds=expected))
    assert result["failed"]
    message = result["mismatch"]
    assert f"cycle {ADDRGEN_LATENCY}:" in message  # the first beat of an idle generator
    assert "(3, False, False), model (4, False, False)" in message
    assert "BD 0 of 1" in message and "seed=99" in message


def test_waves_and_build_reuse():
    """A traced run writes its waveform inside build/, in a build of its own; a
    second run reuses the build it finds."""
    bds = [BufferDescriptor("tile", buffer_length=4, d0_wrap=2)]
    stim = stimulus("addrgen", "tile", bds)
    result = run("aiedma_addrgen_tile", "icarus", stim, waves=True)
    waves = Path(result["waves"])
    assert waves.stat().st_size > 0 and BUILD in waves.parents
    image = BUILD / "cocotb/icarus/aiedma_addrgen_tile/waves/sim.vvp"
    built = image.stat().st_mtime_ns
    assert run("aiedma_addrgen_tile", "icarus", stim, waves=True)["mismatch"] is None
    assert image.stat().st_mtime_ns == built


def test_missing_icarus_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    with pytest.raises(cocotb_runner.ToolMissing, match=r"iverilog.*make setup"):
        run("aiedma_addrgen_tile", "icarus",
            stimulus("addrgen", "tile", [BufferDescriptor("tile", buffer_length=1)]))


def test_missing_verilator_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "verilator", None)  # import fails
    with pytest.raises(cocotb_runner.ToolMissing, match=r"verilator==5\.48\.0"):
        run("aiedma_addrgen_tile", "verilator",
            stimulus("addrgen", "tile", [BufferDescriptor("tile", buffer_length=1)]))


def test_a_failed_build_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(cocotb_runner, "_build_args", lambda simulator: ["--no-such-option"])
    with pytest.raises(cocotb_runner.CocotbError,
                       match=r"(?s)verilator build of aiedma_addrgen_tile failed.*no-such-option"):
        run_cocotb("aiedma_addrgen_tile", "verilator",
                   stimulus("addrgen", "tile", [BufferDescriptor("tile", buffer_length=1)]),
                   build_root=tmp_path)


def test_stimulus_must_match_the_top():
    with pytest.raises(ValueError, match="does not match the stimulus"):
        run("aiedma_addrgen_shim", "icarus",
            stimulus("addrgen", "tile", [BufferDescriptor("tile", buffer_length=1)]))


@pytest.mark.parametrize("layout, names", [
    *((beat_layout(kind), ("address", "zero", "last")) for kind in KINDS),
    (data_beat_layout(), ("data", "last")),
])
def test_unpacker_agrees_with_from_bits(layout, names):
    decode = unpacker(layout, *names)
    rng = random.Random(3)
    for bits in [0, (1 << layout.size) - 1, *(rng.getrandbits(layout.size) for _ in range(200))]:
        const = layout.from_bits(bits)
        assert decode(bits) == tuple(getattr(const, n) for n in names)


# Two modules as Yosys writes them: `o` reads only a register that keeps its initial value,
# so no input of its process ever changes.
_IDLE_OUTPUT = """\
module inner(o);
  output o;
  reg o;
  reg r = 1'h1;
  always @* begin
    o = r;
  end
endmodule
module top;
  wire o;
  reg q;
  inner u(.o(o));
  always @* begin
    q = ~o;
  end
  initial #1 $display("o=%b q=%b", o, q);
endmodule
"""


def _icarus_prints(verilog: str, tmp_path: Path) -> str:
    source, image = tmp_path / "t.v", tmp_path / "t.vvp"
    source.write_text(verilog)
    subprocess.run(["iverilog", "-g2012", "-o", str(image), str(source)], check=True)
    return subprocess.run(["vvp", "-n", str(image)], check=True, capture_output=True,
                          text=True).stdout


def test_for_icarus_runs_every_combinational_process_at_time_0(tmp_path):
    assert "o=x q=x" in _icarus_prints(_IDLE_OUTPUT, tmp_path)  # what the rewrite mends
    mended = cocotb_runner.for_icarus(_IDLE_OUTPUT)
    assert mended.count("initial #0") == 2
    assert "o=1 q=0" in _icarus_prints(mended, tmp_path)
