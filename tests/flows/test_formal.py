# amaranth: UnusedElaboratable=no
"""Short formal runs (small depth): MM2S/S2MM proofs pass, covers are reached, mutants fail.

Each mutant is a wrapper with the block's ports that breaks one behaviour: an MM2S that
enables the memory read for zero beats too, an S2MM that writes one word past the beat's
address; the proofs must catch both and leave a counterexample VCD.
Work files go under build/formal/ in the checkout, never /tmp (the yowasp tools run
in a WASI sandbox with a private /tmp).
"""

from __future__ import annotations

import json

import hdl_mutants
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from repo import REPO

from aiedma.flows.formal import FormalTask, run_harness, run_task
from aiedma.hdl.mm2s import MM2SDatapath
from aiedma.hdl.s2mm import S2MMDatapath
from aiedma.model.cycle.contract import LOCK_ASK_AHEAD
from aiedma.tb.common.scoreboard import Mismatch
from aiedma.tb.formal.addrgen import AddrgenFormal
from aiedma.tb.formal.channel import ChannelLockFormal
from aiedma.tb.formal.mm2s import MM2SFormal
from aiedma.tb.formal.reference import AddrgenReferenceFormal, Bounds, replay_counterexample
from aiedma.tb.formal.s2mm import S2MMFormal

DEPTH = 6
BUILD = REPO / "build" / "formal" / "tests"
# No skip when yowasp-sby is missing: `make setup` installs it (fpga and formal extras),
# and flows.formal then fails with a message that says so.


class ReadsOnZero(wiring.Component):
    """MM2S with one bug: ``mem_en`` is high for every accepted beat, zero beats too."""

    def __init__(self, kind: str) -> None:
        self.inner = MM2SDatapath(kind)
        super().__init__(self.inner.signature)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.inner = inner = self.inner
        wiring.connect(m, wiring.flipped(self.beats), inner.beats)
        wiring.connect(m, inner.o, wiring.flipped(self.o))
        m.d.comb += [
            self.mem_addr.eq(inner.mem_addr),
            inner.mem_data.eq(self.mem_data),
            self.mem_en.eq(self.beats.valid & self.beats.ready),
        ]
        return m


class WritesOneAhead(wiring.Component):
    """S2MM with one bug: every write lands one word past its beat's address."""

    def __init__(self, kind: str) -> None:
        self.inner = S2MMDatapath(kind)
        super().__init__(self.inner.signature)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.inner = inner = self.inner
        wiring.connect(m, wiring.flipped(self.i), inner.i)
        wiring.connect(m, wiring.flipped(self.beats), inner.beats)
        m.d.comb += [
            self.mem_addr.eq(inner.mem_addr + 1),
            self.mem_data.eq(inner.mem_data),
            self.mem_we.eq(inner.mem_we),
        ]
        return m


@pytest.mark.parametrize("kind", ["tile", pytest.param("memtile", marks=pytest.mark.long)])
def test_mm2s_properties_prove(kind: str) -> None:
    status, _, work = run_harness(MM2SFormal(kind), f"mm2s_{kind}_prove", "prove", DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


def test_mm2s_covers_reached() -> None:
    status, _, work = run_harness(MM2SFormal("tile"), "mm2s_tile_cover", "cover", DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


def test_mutant_reading_on_zero_beats_is_caught() -> None:
    top = MM2SFormal("tile", dut=ReadsOnZero("tile"))
    status, _, work = run_harness(top, "mm2s_tile_mutant", "prove", DEPTH, BUILD)
    assert status == "FAIL"
    assert list(work.glob("engine_0/*.vcd")), "the counterexample VCD is missing"


def test_s2mm_properties_prove() -> None:
    status, _, work = run_harness(S2MMFormal("tile"), "s2mm_tile_prove", "prove", DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


def test_mutant_writing_one_ahead_is_caught() -> None:
    top = S2MMFormal("tile", dut=WritesOneAhead("tile"))
    status, _, work = run_harness(top, "s2mm_tile_mutant", "prove", DEPTH, BUILD)
    assert status == "FAIL"
    assert list(work.glob("engine_0/*.vcd")), "the counterexample VCD is missing"


CHANNEL_DEPTH = 14   # make formal: flows.formal.CHANNEL_DEPTH


@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_channel_has_no_bubble_at_bd_boundaries_with_its_locks_free(direction) -> None:
    top = ChannelLockFormal("tile", direction=direction)
    status, _, work = run_harness(top, f"channel_tile_{direction}_bmc", "bmc", CHANNEL_DEPTH,
                                  BUILD)
    assert status == "PASS", f"see {work}"


@pytest.mark.parametrize("direction", ["mm2s", "s2mm"])
def test_channel_asking_its_lock_a_beat_late_is_caught(direction) -> None:
    """A lock requester asking one beat later than LOCK_ASK_AHEAD leaves a bubble."""
    top = ChannelLockFormal("tile", ask_ahead=LOCK_ASK_AHEAD - 1, direction=direction)
    status, _, work = run_harness(top, f"channel_tile_{direction}_mutant", "bmc",
                                  CHANNEL_DEPTH, BUILD)
    assert status == "FAIL"
    assert list(work.glob("engine_0/*.vcd")), "the counterexample VCD is missing"


def test_an_s2mm_skid_that_holds_every_beat_a_cycle_is_caught(monkeypatch) -> None:
    """The skid must pass a beat straight through when it is empty: one that registers
    every beat delays the gate by a cycle and leaves a bubble after each beat."""
    monkeypatch.setattr("aiedma.hdl.engine.SkidBuffer", hdl_mutants.RegisteredSkid)
    top = ChannelLockFormal("tile", direction="s2mm")
    status, _, work = run_harness(top, "channel_tile_s2mm_skid_mutant", "bmc", CHANNEL_DEPTH,
                                  BUILD)
    assert status == "FAIL", f"see {work}"


def test_a_channel_harness_of_no_direction_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^direction='up': must be one of \['mm2s', 's2mm'\]"):
        ChannelLockFormal("tile", direction="up")


def test_addrgen_stream_rules_prove() -> None:
    top = AddrgenFormal("tile")
    status, _, work = run_harness(top, "addrgen_tile_prove", "prove", DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


# -- the reference proofs (tb/formal/reference.py), at a short depth --

REFERENCE_DEPTH = 8   # make formal: flows.formal.REFERENCE_DEPTH


def _reference(kind: str, prop: str, dut=None):
    return AddrgenReferenceFormal(kind, prop, Bounds(length=3), dut=dut)


# make test proves the core tile's equivalence and the shim's no-bubble rule; the memory
# tile's proofs (padding: the longest) are long, and make formal runs every one deeper.
@pytest.mark.parametrize(("kind", "prop"), [
    ("tile", "equivalence"), ("shim", "no bubble"),
    pytest.param("memtile", "equivalence", marks=pytest.mark.long),
    pytest.param("memtile", "bounds", marks=pytest.mark.long)])
def test_reference_proofs_pass(kind: str, prop: str) -> None:
    name = f"reference_{kind}_{prop.replace(' ', '_')}"
    status, _, work = run_harness(_reference(kind, prop), name, "bmc", REFERENCE_DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


@pytest.mark.long
def test_reference_covers_reached() -> None:
    # Padding edges of every dimension, a dimension that never wraps, lengths 0 and 1,
    # back-to-back BDs: all reachable, so the proofs above are not vacuous.
    status, _, work = run_harness(_reference("memtile", "cover"), "reference_memtile_cover",
                                  "cover", REFERENCE_DEPTH, BUILD)
    assert status == "PASS", f"see {work}"


@pytest.mark.parametrize(("mutant", "kind", "prop"), [
    (hdl_mutants.ShortWrap, "tile", "equivalence"),
    pytest.param(hdl_mutants.SkipsZero, "memtile", "equivalence", marks=pytest.mark.long),
    (hdl_mutants.BubbleAfterBD, "tile", "no bubble"),
])
def test_reference_proofs_catch_mutants(mutant, kind: str, prop: str) -> None:
    task = FormalTask("addrgen", kind, f"{prop} {mutant.__name__}", "bmc", REFERENCE_DEPTH,
                      lambda: _reference(kind, prop, dut=mutant(kind)))
    result = run_task(task, BUILD)
    assert result.result == "FAIL"
    assert (result.workdir / "engine_0" / "trace.vcd").exists()
    # The counterexample replays on the simulator: the mutant mismatches the model
    # there too, while the generator itself runs the same BDs clean.
    found = json.loads(result.counterexample.read_text())
    assert [bd["kind"] for bd in found["bds"]] == [kind, kind]
    with pytest.raises(Mismatch):
        replay_counterexample(result.counterexample, dut=mutant(kind))
    assert replay_counterexample(result.counterexample).summary.mismatches == 0


def test_reference_rejects_an_unknown_property() -> None:
    with pytest.raises(ValueError, match="prop='liveness': must be one of equivalence"):
        AddrgenReferenceFormal("tile", "liveness")
