"""The bulk regression (model writes files, the simulator compares every cycle).

A short run per simulator and kind passes and compares exactly the model's trace; a
corrupted expected file is caught at its cycle on both simulators, a short one (the
raw files Verilator reads) is refused; the event-per-BD
trace writer equals the per-cycle model (for several prepare-slot depths), and the BD
packing equals Amaranth's.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aiedma.hdl.layouts import bd_layout, bd_to_payload
from aiedma.model.bd.descriptor import BufferDescriptor
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_PREPARE_SLOTS
from aiedma.model.cycle.timing import addrgen_trace, addrgen_trace_fast
from aiedma.tb.common.stimulus import (
    random_bd_batch,
    random_bds,
    random_pattern,
    regression_stimulus,
    stall_pattern,
)
from aiedma.tb.common.tools import verilator_env
from aiedma.tb.regress import verilog_bulk
from aiedma.tb.regress.verilog_bulk import (
    RUNS_ON,
    _hex_lines,
    pack_bds,
    pack_limbs,
    run_bulk,
    run_folder,
    shard_calls,
)

FIELDS = ("i_valid", "i_ready", "o_valid", "o_ready", "address", "zero", "last", "accepted")
SLOTS = sorted({1, 2, 3, ADDRGEN_PREPARE_SLOTS})
"""Prepare-slot depths the two implementations are compared at (the RTL's among them)."""


BULK_RUNS = [(simulator, kind) for simulator in RUNS_ON for kind in KINDS
             if simulator != "verilator" or kind == "memtile"]
"""Each simulator on each kind, except Verilator on the memory tile only (the kind with
padding): its build is 15 s a kind, and ``make sim REGRESSION=verilog-bulk`` runs all."""


@pytest.mark.parametrize(("simulator", "kind"), BULK_RUNS)
def test_bulk_run_and_corruption(simulator, kind, tmp_path, monkeypatch):
    """200 BDs under backpressure pass; then one flipped expected bit is reported at
    its cycle (same build, so the failing path is the one that passed; reusing it
    never elaborates the top again)."""
    clean = run_bulk(kind, 200, 7, simulator, "stall", root=tmp_path)

    def no_export(top):
        raise AssertionError(f"{top} exported again although its build is there")

    monkeypatch.setattr(verilog_bulk, "_verilog", no_export)
    assert clean["mismatch"] is None
    assert clean["compared"] == clean["cycles"] > 200
    bds = regression_stimulus(kind, 200, 7, "stall")[0]
    assert clean["words"] == sum(bd.buffer_length for bd in bds)
    high = run_bulk(kind, 200, 8, simulator, "high", root=tmp_path)
    assert high["mismatch"] is None
    assert high["compared"] == high["cycles"]
    cycle = clean["cycles"] // 2
    bad = run_bulk(kind, 200, 7, simulator, "stall", root=tmp_path, corrupt=cycle)
    assert bad["mismatch"] is not None
    assert bad["mismatch"]["cycle"] == cycle
    assert int(bad["mismatch"]["expected"], 16) ^ int(bad["mismatch"]["got"], 16) == 1
    if simulator == "verilator":   # raw files read through DPI: a short one is refused
        out = run_folder(tmp_path, simulator, kind, "stall", 7)
        params = json.loads((out / "params.json").read_text())
        binary = (tmp_path / simulator / kind / f"build-{params['depth']}-{params['bd_depth']}"
                  / "obj" / "bulk_tb")
        expected = (out / "expected.bin").read_bytes()
        (out / "expected.bin").write_bytes(expected[:-8])
        done = subprocess.run([str(binary)], cwd=out, capture_output=True, text=True,
                              env=verilator_env(), check=False)
        assert done.returncode != 0
        assert "BULK ERROR reading expected.bin" in done.stdout + done.stderr


def assert_same_trace(got, want, label: str) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(got, name)),
                                      np.asarray(getattr(want, name)),
                                      err_msg=f"{label} {name}")


@pytest.mark.parametrize("slots", SLOTS)
@pytest.mark.parametrize("kind", KINDS)
def test_fast_trace_equals_model(kind, slots):
    for seed in range(12):
        rng = random.Random(seed)
        bds = random_bds(kind, rng.randint(0, 40), seed, allow_empty=seed % 2 == 0)
        ready = (stall_pattern(bds, rng) if seed % 3 == 0
                 else random_pattern(rng, rng.randint(0, 400), 0.4)
                 if seed % 3 == 1 else None)
        offer = random_pattern(rng, rng.randint(0, 600), 0.3) if seed % 4 else None
        want = addrgen_trace(kind, bds, ready, offer, prepare_slots=slots)
        got = addrgen_trace_fast(kind, bds, ready, offer, prepare_slots=slots)
        assert_same_trace(got, want, f"{kind} slots {slots} seed {seed}")


@pytest.mark.parametrize("slots", SLOTS)
@settings(max_examples=200)
@given(lengths=st.lists(st.sampled_from([0, 0, 1, 1, 2, 3, 6]), max_size=12),
       ready=st.lists(st.booleans(), max_size=60), offer=st.lists(st.booleans(), max_size=60))
def test_fast_trace_equals_model_on_short_bds(slots, lengths, ready, offer):
    """Runs of length-0, 1 and 2 BDs against random patterns: where BDs queue in the
    prepare chain and ``i.ready`` turns most often."""
    bds = [BufferDescriptor("tile", base_address=7 * i, buffer_length=n)
           for i, n in enumerate(lengths)]
    want = addrgen_trace("tile", bds, ready, offer, prepare_slots=slots)
    assert_same_trace(addrgen_trace_fast("tile", bds, ready, offer, prepare_slots=slots),
                      want, f"slots {slots}")


def test_fast_trace_needs_a_prepare_slot():
    with pytest.raises(ValueError, match="prepare_slots=0: must be at least 1"):
        addrgen_trace_fast("tile", [], prepare_slots=0)


@pytest.mark.parametrize("kind", KINDS)
def test_packing_equals_amaranth(kind):
    """From a list and from a batch (every field at its maximum among them), in ints,
    in 64-bit limbs and in the hex lines the Icarus bench reads."""
    batch = random_bd_batch(kind, 400, 3, allow_empty=True)
    bds = batch.bds()
    layout = bd_layout(kind)
    want = [layout.const(bd_to_payload(bd)).as_value().value for bd in bds]
    assert pack_bds(kind, bds) == want
    assert pack_bds(kind, batch) == want
    limbs = pack_limbs(kind, batch)
    assert limbs.shape == (400, -(-layout.size // 64))
    digits = (layout.size + 3) // 4
    assert _hex_lines(limbs, digits).decode() == "".join(f"{v:0{digits}x}\n" for v in want)
    words = np.array([0, 1, 0xABC, (1 << 51) - 1], dtype=np.uint64)
    assert _hex_lines(words, 13).decode() == "".join(f"{v:013x}\n" for v in words.tolist())


def test_small_sweeps_run_in_this_process(tmp_path):
    """A local cluster starts slower than a small sweep runs; a named scheduler is
    always used, and so is the local cluster from LOCAL_BELOW BDs in all."""
    def on_dask(bds, shards, scheduler=None):
        calls = shard_calls(list(KINDS), ["high", "stall"], bds, 1, shards, "verilator",
                            tmp_path)
        return verilog_bulk._on_dask(calls, argparse.Namespace(shards=shards, scheduler=scheduler))

    small = -(-verilog_bulk.LOCAL_BELOW // 6)   # BDs per kind and ready: 6 runs in all
    assert not on_dask(small - 1, 4)
    assert on_dask(small, 4)
    assert not on_dask(10 * small, 1)
    assert on_dask(10, 2, scheduler="tcp://host:8786")


def test_a_relative_root_runs(tmp_path, monkeypatch):
    """``make bench`` passes a relative root; each run works in its own folder, so the
    build's binary must be named absolutely."""
    monkeypatch.chdir(tmp_path)
    result = run_bulk("tile", 50, 3, "icarus", "stall", root=Path("relative"))
    assert result["mismatch"] is None and result["compared"] == result["cycles"] > 0


def test_the_build_key_reads_the_rtl_and_model_sources():
    """The key hashes aiedma.hdl's and aiedma.model's sources (it raises on a folder
    without any, which would key a build on the tool versions alone)."""
    assert len(verilog_bulk._rtl_key.__wrapped__()) == 64
