"""The benchmark suite (``make bench``) writes consistent figures; speed is never asserted.

One quick run of the cheap benchmarks (model, system model, Amaranth co-simulation,
words per cycle, and an FPGA table from a made-up file) is checked against figures
recomputed here independently: trace lengths from the timing model, words from the
BDs, rates from the saved times. Missing simulators and a missing FPGA table are
reported, not fatal.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from aiedma.flows import bench, model_bench
from aiedma.flows.graph_examples import copy_graph, pipeline_graph
from aiedma.flows.machine import machine
from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.contract import ADDRGEN_LATENCY
from aiedma.model.cycle.timing import addrgen_trace
from aiedma.tb.common.stimulus import random_bds, regression_stimulus
from aiedma.tb.common.tools import ToolMissing
from aiedma.tb.system.dma_check import run_dma

CHEAP = "model,amaranth,wpc,fpga"
FPGA_ROWS = [
    {"top": "aiedma_addrgen_memtile", "part": "LFE5U-25F", "lut": 812, "ff": 301, "carry": 40,
     "bram": 0, "fmax_mhz": 123.4, "slack_ns": 0.5, "critical_path": ["r|a", "b"]},
    {"top": "aiedma_addrgen_tile", "part": "LFE5U-25F", "lut": 500, "ff": 200, "carry": 20,
     "fmax_mhz": 150.0},
    "not a row",
]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One quick run of the cheap benchmarks: (exit status, JSON report, Markdown, stdout)."""
    out = tmp_path_factory.mktemp("bench")
    fpga = out / "fpga.json"
    fpga.write_text(json.dumps({"rows": FPGA_ROWS, "tool": "made up"}))
    capture = pytest.MonkeyPatch()
    lines: list[str] = []
    capture.setattr(bench, "_say", lines.append)
    try:
        status = bench.main(["--quick", "--repeat", "2", "--out", str(out), "--only", CHEAP,
                             "--fpga-json", str(fpga)])
    finally:
        capture.undo()
    report = json.loads((out / "bench.json").read_text())
    return status, report, (out / "bench.md").read_text(), "\n".join(lines)


def _positive(*values) -> bool:
    return all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in values)


def test_report_schema(run):
    status, report, _, _ = run
    assert status == 0
    assert report["schema"] == bench.SCHEMA
    assert report["command"][:3] == ["python", "-m", "aiedma.flows.bench"]
    assert report["command"][-4:] == ["--only", CHEAP, "--fpga-json", report["command"][-1]]
    assert report["selected"] == ["walk", "stream", "elements", "shapes", "system", "amaranth",
                                  "wpc", "fpga"]
    assert set(report["results"]) == {"walk", "stream", "elements", "shapes", "system", "cosim",
                                      "words_per_cycle", "fpga"}
    m = report["machine"]
    assert set(m) >= {"cpu", "cores", "python", "numpy", "verilator", "icarus"}
    assert m["cpu"] and m["cores"] >= 1 and m["numpy"] == np.__version__
    assert list(m) == list(machine())  # tb.machine's description, whole
    assert report["settings"]["quick"] is True and report["settings"]["repeat"] == 2
    assert _positive(report["total_s"])


def test_model_figures_are_consistent(run):
    results = run[1]["results"]
    walk = results["walk"]
    assert walk["elements"] == model_bench.HALO_WALK.stream_length()
    assert _positive(walk["walk_s"], walk["arange_s"], walk["rate"], walk["ratio"])
    assert walk["rate"] == pytest.approx(walk["elements"] / walk["walk_s"])
    assert walk["ratio"] == pytest.approx(walk["arange_s"] / walk["walk_s"])
    assert 0 < walk["zero_fraction"] < 1
    assert [r["kind"] for r in results["stream"]] == ["memtile", "shim"]
    for r in results["stream"]:
        assert r["words"] == 1 << 14  # the quick length
        assert _positive(r["stream_s"], r["arange_s"], r["rate"], r["ratio"])
        assert r["rate"] == pytest.approx(r["words"] / r["stream_s"])
        assert r["ratio"] == pytest.approx(r["arange_s"] / r["stream_s"])
    assert results["stream"][0]["zero_fraction"] > 0  # the memtile BD is padded
    r = results["elements"]
    program = model_bench.chained_program(quick=True)
    assert r["bds"] == len(program.bds) == model_bench.CHAINED_TILES
    assert r["elements"] == program.element_stream().size
    assert _positive(r["element_s"], r["arange_s"], r["rate"], r["ratio"])
    assert r["ratio"] == pytest.approx(r["arange_s"] / r["element_s"])
    assert 0 < r["zero_fraction"] < 1


def test_shape_figures_are_the_shapes_own(run):
    rows = run[1]["results"]["shapes"]
    assert [r["name"] for r in rows] == list(model_bench.WALK_SHAPES)
    for r in rows:
        tp = model_bench.WALK_SHAPES[r["name"]]
        assert r["elements"] == tp.stream_length()
        for figure in ("walk", "stream"):
            f = r[figure]
            assert _positive(f[f"{figure}_s"], f["arange_s"], f["rate"], f["ratio"])
            assert f["rate"] == pytest.approx(r["elements"] / f[f"{figure}_s"])
            assert f["ratio"] == pytest.approx(f["arange_s"] / f[f"{figure}_s"])
    assert rows[0]["zero_fraction"] > 0 and rows[0]["bds"] > 1   # the halo read pads
    assert len({(r["bds"], r["passes"]) for r in rows}) == len(rows)


def test_shape_markdown_and_smallest_ratio(run):
    _, report, markdown, printed = run
    rows = report["results"]["shapes"]
    for r in rows:
        assert f"| {r['name']} `indices()`" in markdown
        assert f"| {r['name']} `element_stream()`" in markdown
    low = min(rows, key=lambda r: r["stream"]["ratio"])
    assert f"smallest stream ratio: {low['stream']['ratio']:.2f} ({low['name']})" in printed


def test_system_cycles_are_the_runs_own(run):
    rows = run[1]["results"]["system"]
    assert [(r["graph"], r["num_buffers"]) for r in rows] == [
        ("pipeline", 1), ("pipeline", 2), ("copy", 1), ("copy", 2)]
    for r in rows:
        settings = model_bench.QUICK_SYSTEM_GRAPHS[r["graph"]]
        graph = (pipeline_graph(r["num_buffers"], settings["size"]) if r["graph"] == "pipeline"
                 else copy_graph(settings["shape"], r["num_buffers"]))
        data = np.arange(r["words"], dtype=np.int32)
        again = graph.run(r["iterations"], {"in": data}, exact=True)
        assert r["cycles"] == again.report.cycles
        for mode in ("exact", "fast"):
            assert _positive(r[f"{mode}_s"], r[f"{mode}_cycles_per_s"])
            assert r[f"{mode}_cycles_per_s"] == pytest.approx(r["cycles"] / r[f"{mode}_s"])
        assert r["speedup"] == pytest.approx(r["fast_cycles_per_s"] / r["exact_cycles_per_s"])
    for graph in (0, 2):   # ping-pong overlaps the two sides
        assert rows[graph + 1]["cycles"] < rows[graph]["cycles"]


def test_cosim_rows_match_the_model(run):
    cosim = run[1]["results"]["cosim"]
    rows = cosim["rows"]
    assert [(r["bench"], r["ready"], r["status"]) for r in rows] == [
        ("amaranth", "high", "ok"), ("amaranth", "stall", "ok")]
    assert cosim["cycles_agree"] is True
    for r in rows:
        bds, ready, offer = regression_stimulus(r["kind"], r["bds"], r["seed"], r["ready"])
        assert r["cycles"] == addrgen_trace(r["kind"], bds, ready, offer).cycles
        assert r["words"] == sum(bd.buffer_length for bd in bds)
        assert _positive(r["sim_s"], r["cycles_per_s"], r["call_s"])
        assert r["cycles_per_s"] == pytest.approx(r["cycles"] / r["sim_s"])
        assert r["call_s"] == pytest.approx(r["sim_s"] + r["overhead_s"])
        assert r["x_amaranth"] == pytest.approx(1.0)
    high = rows[0]
    assert high["words_per_cycle"] == pytest.approx(
        high["words"] / (high["cycles"] - ADDRGEN_LATENCY))
    assert _positive(high["first_call_s"])


def test_words_per_cycle(run):
    rows = run[1]["results"]["words_per_cycle"]
    assert [r["kind"] for r in rows] == list(KINDS)
    for r in rows:
        bds = random_bds(r["kind"], r["bds"], r["seed"])
        assert r["cycles"] == addrgen_trace(r["kind"], bds).cycles
        assert r["words"] == sum(bd.buffer_length for bd in bds)
        assert r["latency"] == ADDRGEN_LATENCY
        assert r["words_per_cycle"] == pytest.approx(
            r["words"] / (r["cycles"] - ADDRGEN_LATENCY))
        assert r["words_per_cycle"] == pytest.approx(1.0)  # the RTL's contract, not speed


def test_every_memory_tile_channel_streams_a_word_a_cycle_at_once():
    """The whole-DMA figure's program (bench ``dma-wpc``): 12 channels, chained BDs with
    free locks, every channel a word every cycle from its first to its last, in the model
    (the bench runs it on the RTL, compared)."""
    writes, inputs = bench.all_channels_program(16)
    run = run_dma("memtile", writes, inputs=inputs, simulator=None)
    assert len(run.word_cycles) == 12
    for name, cycles in run.word_cycles.items():
        assert len(cycles) == bench.DMA_WPC_BDS * 16, name
        assert cycles == list(range(cycles[0], cycles[0] + len(cycles))), name


def test_fpga_rows_are_kept(run):
    fpga = run[1]["results"]["fpga"]
    assert fpga["rows"] == FPGA_ROWS[:2]  # the non-object row is dropped
    assert fpga["columns"] == [*bench.FPGA_COLUMNS, "slack_ns", "critical_path"]
    assert fpga["meta"] == {"tool": "made up"}
    markdown = run[2]
    assert ("| aiedma_addrgen_memtile | LFE5U-25F | 812 | 301 | 40 | 0 | 123 | 0.5 | r\\|a -> b |"
            in markdown)
    assert "| aiedma_addrgen_tile | LFE5U-25F | 500 | 200 | 20 | - | 150 | - | - |" in markdown


def test_markdown_shows_every_figure(run):
    _, report, markdown, printed = run
    for heading in ("## Golden model", "## System model", "## Co-simulation",
                    "## RTL words per cycle", "## FPGA"):
        assert heading in markdown
    for r in report["results"]["cosim"]["rows"]:
        assert f"| {r['simulator']} | {r['ready']} | {r['bds']} | {r['cycles']:,} |" in markdown
    for r in report["results"]["words_per_cycle"]:
        assert f"| {r['kind']} | {r['bds']} | {r['words']:,} | {r['cycles']:,} |" in markdown
    assert "4-D halo walk" in printed


def test_no_fpga_table_is_reported(tmp_path, capsys):
    status = bench.main(["--quick", "--out", str(tmp_path), "--only", "fpga",
                         "--fpga-json", str(tmp_path / "absent.json")])
    assert status == 0
    assert "FPGA: run `make fpga` first" in capsys.readouterr().out
    report = json.loads((tmp_path / "bench.json").read_text())
    assert "fpga" not in report["results"]
    assert "## FPGA" not in (tmp_path / "bench.md").read_text()


def test_missing_simulators_are_skipped(tmp_path, monkeypatch):
    def missing(*args, **kwargs):
        raise ToolMissing("Icarus Verilog is missing (made up)")

    monkeypatch.setattr(bench, "check_addrgen", missing)
    monkeypatch.setattr(bench, "run_bulk", missing)
    status = bench.main(["--quick", "--out", str(tmp_path), "--only", "icarus,bulk-icarus"])
    assert status == 0
    rows = json.loads((tmp_path / "bench.json").read_text())["results"]["cosim"]["rows"]
    assert [(r["bench"], r["status"]) for r in rows] == [
        ("icarus", "skipped"), ("icarus", "skipped"),
        ("bulk-icarus", "skipped"), ("bulk-icarus", "skipped")]
    assert all("made up" in r["reason"] for r in rows)
    assert "skipped: Icarus Verilog is missing" in (tmp_path / "bench.md").read_text()


def test_unknown_benchmark_is_refused(tmp_path):
    with pytest.raises(SystemExit) as error:
        bench.main(["--quick", "--out", str(tmp_path), "--only", "walk,nonsense"])
    assert error.value.code == 2


def test_model_bench_still_runs(capsys):
    model_bench.main(["--quick", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "ratio walk/arange rate" in out
    assert "smallest walk ratio" in out and "smallest stream ratio" in out
    assert out.count("ratio stream/arange rate") == 2
    assert out.count("system model, pipeline graph") == 2
    assert out.count("system model, copy graph") == 2
    assert out.count("ratio fast/exact") == 4
