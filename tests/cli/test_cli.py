"""The ``aiedma`` command line: output, exit status, one-line errors."""

import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from aiedma_command import run
from repo import REPO
from vectors import DATA

from aiedma import cli
from aiedma.model.cycle.contract import ADDRGEN_LATENCY


def write(tmp_path: Path, data, name="port.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_walk_prints_run_length_stream(tmp_path, capsys):
    port = write(tmp_path, {"buffer_dimension": [256], "tiling_dimension": [256],
                            "offset": [-32]})
    assert cli.main(["walk", str(port)]) == 0
    assert capsys.readouterr().out == "port.json: 256 elements, 32 zero\n  Z x32, 0..223\n"


def test_walk_json_format_is_the_index_list(tmp_path, capsys):
    port = write(tmp_path, [{"buffer_dimension": [4], "tiling_dimension": [2]},
                            {"buffer_dimension": [4], "tiling_dimension": [2], "offset": [3]}])
    assert cli.main(["walk", "--format", "json", str(port)]) == 0
    assert json.loads(capsys.readouterr().out)["indices"] == [0, 1, 3, -1]


def test_walk_check_passes_the_worked_examples(capsys):
    assert cli.main(["walk", "--check", str(DATA / "tiling_examples.json")]) == 0
    out = capsys.readouterr().out
    assert out.count("matches the expected stream") == 8
    assert out.rstrip().endswith("8 passed, 0 failed")


def test_walk_check_reports_a_difference(tmp_path, capsys):
    examples = json.loads((DATA / "tiling_examples.json").read_text())
    examples["examples"][2]["indices"][5] += 1
    path = write(tmp_path, examples)
    assert cli.main(["walk", "--check", str(path)]) == cli.EXIT_MISMATCH
    out = capsys.readouterr().out
    assert "k3 read" in out and "DIFFERS" in out and "7 passed, 1 failed" in out


def test_walk_validates_for_a_context(tmp_path):
    port = write(tmp_path, {"buffer_dimension": [256], "offset": [-32]})
    result = run("walk", "--kind", "shim", port)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "zero padding exists only on a memory-tile read, not on a shim read" in result.stderr


def test_walk_fills_an_empty_buffer_dimension(tmp_path, capsys):
    port = write(tmp_path, {"tiling_dimension": [2, 1]})
    assert cli.main(["walk", "--buffer-dimension", "4,2", str(port)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "  0..1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ({"buffer_dimension": [4], "tiling_dimension": [0]}, "tiling_dimension[0]=0"),
        ({"buffer_dimension": [4], "tile": [2]}, "tile=[2]: unknown field"),
        ('"a string"', "port program='str': must be a tiling dict or a list"),
        ({"examples": [{"name": "x"}]}, "examples[0] needs a 'tiling' entry"),
    ],
)
def test_bad_files_give_one_line_and_status_2(tmp_path, content, message):
    result = run("walk", write(tmp_path, content))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("aiedma walk: error: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1, "one line, no traceback"


def test_missing_file_gives_one_line_and_status_2(tmp_path):
    result = run("walk", tmp_path / "absent.json")
    assert (result.returncode, result.stderr.count("\n")) == (2, 1)
    assert "No such file or directory" in result.stderr


def test_help_shows_an_example_that_is_true(tmp_path):
    """The example in ``aiedma walk --help`` prints what the help says it prints."""
    help_text = run("walk", "--help").stdout
    start = help_text.index("echo '") + len("echo '")
    tiling = help_text[start:help_text.index("' > port.json")]
    port = write(tmp_path, tiling.replace("\n", " "))
    shown = help_text[help_text.index("aiedma walk port.json") :].splitlines()[1:3]
    assert run("walk", port, cwd=tmp_path).stdout == textwrap.dedent("\n".join(shown)) + "\n"


def test_console_script_and_module_agree(tmp_path):
    port = write(tmp_path, {"buffer_dimension": [8], "tiling_dimension": [4]})
    script = Path(sys.executable).with_name("aiedma")
    by_script = subprocess.run([script, "walk", port], capture_output=True, text=True)
    by_module = subprocess.run([sys.executable, "-m", "aiedma", "walk", port],
                               capture_output=True, text=True)
    assert by_script.returncode == by_module.returncode == 0
    assert (by_script.stdout == by_module.stdout == run("walk", port).stdout
            == "port.json: 4 elements, 0 zero\n  0..3\n")


def _help_example(command: str) -> tuple[list[str], list[str]]:
    """The command lines and the output shown in ``aiedma COMMAND --help``'s example."""
    lines = run(command, "--help").stdout.splitlines()
    start = lines.index("example:") if "example:" in lines else next(
        i for i, line in enumerate(lines) if line.startswith("example"))
    body = lines[start + 1:]
    commands = [line.strip() for line in body if line.startswith("  ") and not
                line.startswith("    ")]
    shown = textwrap.dedent("\n".join(line for line in body if line.startswith("      ")))
    return commands, shown.splitlines()


def test_bd_help_example_is_true(tmp_path):
    commands, shown = _help_example("bd")
    echo = commands[0]
    write(tmp_path, echo[echo.index("'") + 1:echo.rindex("'")], name="pad.json")
    out = run("bd", "--kind", "memtile", "pad.json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == shown[:shown.index("[")]
    tap = commands[2].split()[2:]            # aiedma bd examples/graph.h ... --format tap
    out = run("bd", *tap, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == shown[shown.index("["):]


def test_decode_help_example_is_the_hardware_core_tile_bd():
    commands, _ = _help_example("decode")
    words = commands[0].split()[4:]
    out = run("decode", "--kind", "tile", *words)
    assert out.returncode == 0, out.stderr
    (case,) = json.loads((DATA / "hardware.json").read_text())["tile_addresses"]
    fields = {k: v for k, v in case["bd"].items() if k != "kind"}
    marked = {line.split()[0]: int(line.split()[1]) for line in out.stdout.splitlines()
              if line.endswith("*")}
    assert marked == {k: v for k, v in fields.items() if k not in ("base_address", "d0_stepsize")}


def test_bd_prints_a_chain_as_table_and_json(tmp_path, capsys):
    port = write(tmp_path, [{"buffer_dimension": [64], "tiling_dimension": [8], "offset": [o]}
                            for o in (0, 40)])
    assert cli.main(["bd", "--kind", "tile", "--direction", "write", "--first-bd", "3",
                     str(port)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("port.json: tile write int32, 2 BDs; task: start BD 3, repeat 1 "
                      "(word 0x00000003)")
    # two entries, a BD each, as aiecompiler counts too (and twice that for 2 phases)
    assert out[1] == ("aiecompiler (tutorial's rule): 2 BDs per phase, 4 for 2 phases; a "
                      "core-tile channel has 16")
    assert out[2].split() == ["field", "BD", "3", "BD", "4"]
    assert out[3].split() == ["base_address", "0", "40"]
    rows = {line.split()[0]: line.split()[1:] for line in out[3:] if not line.startswith("BD")}
    assert rows["next_bd"] == ["4", "0"] and rows["use_next_bd"] == ["1", "0"]
    assert cli.main(["bd", "--kind", "tile", "--format", "json", str(port)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [b["fields"]["base_address"] for b in data["bds"]] == [0, 40]
    assert all(len(b["words"]) == 6 for b in data["bds"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["decode", "--kind", "tile", "1", "2", "3"],
         "a tile BD has 6 register words (6 for a core tile, 8 for a memory tile or shim), "
         "got 3"),
        (["decode", "--kind", "shim", *["0"] * 7, "zz"], "invalid word (hex 0x... or decimal)"),
        (["decode", "--kind", "tile", *["0"] * 5, str(1 << 32)], "words[5]=4294967296"),
        (["bd", "--kind", "tile", "PORT"], "zero padding exists only on a memory-tile read"),
        (["bd", "--kind", "memtile", "--first-bd", "60", "PORT"], "first_bd=60: must be in 0..47"),
        (["bd", "PORT"], "the following arguments are required: --kind"),
        (["bd", "--kind", "memtile", "--dtype", "int7", "PORT"], "invalid choice: 'int7'"),
    ],
)
def test_bd_and_decode_errors_are_one_line_and_status_2(tmp_path, args, message):
    port = write(tmp_path, {"buffer_dimension": [16], "offset": [-2]})
    result = run(*[str(port) if a == "PORT" else a for a in args])
    assert result.returncode == 2, result.stdout
    assert message in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


def test_every_subcommand_help_shows_an_example():
    for command in ("walk", "bd", "decode", "draw", "sim", "verilog"):
        result = run(command, "--help")
        assert result.returncode == 0
        assert "example" in result.stdout, command


def test_sim_command_runs_a_short_regression():
    result = run("sim", "--bds", "4", "--kinds", "shim", "--seed", "2")
    assert result.returncode == 0, result.stderr
    assert (f"shim: words / cycles after the {ADDRGEN_LATENCY}-cycle latency, "
            "ready high: 1.000") in result.stdout
    assert result.stdout.rstrip().endswith("3 passed, 0 failed")


def test_sim_runs_the_tutorial_graph_with_rtl_channels(capsys):
    assert cli.main(["sim", "--graph", "tutorial", "--buffers", "2", "--iterations", "1",
                     "--rtl", "amaranth"]) == 0
    out = capsys.readouterr().out
    model_cycles = int(out.splitlines()[1].split()[0])
    assert f"RTL on amaranth : cycles model {model_cycles}, RTL {model_cycles};" in out
    assert out.rstrip().endswith("0 mismatches")


def test_sim_graph_exact_gives_the_same_report(capsys):
    reports = []
    for extra in ([], ["--exact"]):
        assert cli.main(["sim", "--graph", "tutorial", "--buffers", "2", *extra]) == 0
        out = capsys.readouterr().out.splitlines()
        reports.append(out[1:])
    assert reports[0] == reports[1]


@pytest.mark.parametrize("argv, message", [
    (["sim", "--rtl", "amaranth"], "--rtl=amaranth: runs a graph's memory-tile channels as "
                                   "RTL; give the graph with --graph"),
    (["sim", "--graph", "tutorial", "--buffers", "3"], "--buffers=3: a shared buffer has 1 "
                                                       "or 2 (ping-pong)"),
    (["sim", "--graph", "tutorial", "--iterations", "0"], "--iterations=0: must be at least 1"),
    (["sim", "--exact"], "--exact: steps every cycle of a graph's system model; give the graph "
                         "with --graph"),
])
def test_sim_graph_options_are_checked(argv, message, capsys):
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.strip() == f"aiedma sim: error: {message}"


def test_verilog_command_runs_the_export_flow(monkeypatch, tmp_path):
    # The flow itself (every top written and linted) is tests/tb/test_cocotb.py's
    # test_make_verilog_exports_and_lints_every_top; here: the command reaches it.
    from aiedma.flows import verilog as verilog_export

    calls = []
    monkeypatch.setattr(verilog_export, "run", lambda args, parser: calls.append(args) or 0)
    assert cli.main(["verilog", "--out", str(tmp_path / "v")]) == 0
    assert [(args.out, args.axi, args.allowed) for args in calls] == [(tmp_path / "v", None, None)]


def test_verilog_builds_one_axi_top_with_its_window_and_place(monkeypatch, tmp_path):
    # The export and lint of an AXI top is tests/flows/test_verilog.py's; a window's RTL
    # is tests/tb/system/test_faults.py's. Here: the options reach the top that is built.
    from aiedma.flows import verilog as verilog_export

    built = {}
    monkeypatch.setattr(verilog_export, "export_and_lint",
                        lambda out, built=None, tops=built: tops.update(built) or [])
    argv = ["verilog", "--axi", "shim", "--allowed", "0x100000", "0x100000", "--column", "3",
            "--out", str(tmp_path / "ip")]
    assert cli.main(argv) == 0
    (name, top), = built.items()
    assert name == "aiedma_axi_dma_shim"
    assert (top.kind, top.column, top.row) == ("shim", 3, 0)
    assert (top.allowed.start, top.allowed.words) == (0x100000, 0x100000)


def test_verilog_builds_an_axi_top_with_its_memory_inside(monkeypatch, tmp_path):
    from aiedma.flows import verilog as verilog_export

    built = {}
    monkeypatch.setattr(verilog_export, "export_and_lint",
                        lambda out, built=None, tops=built: tops.update(built) or [])
    argv = ["verilog", "--axi", "memtile", "--allowed", str(0x20000), "8192", "--memory",
            "--banks", "4", "--out", str(tmp_path / "ip")]
    assert cli.main(argv) == 0
    (name, top), = built.items()
    assert name == "aiedma_axi_dma_memtile_mem"
    assert (top.allowed.start, top.allowed.words, top.memory_banks) == (0x20000, 8192, 4)


@pytest.mark.parametrize(("argv", "message"), [
    (["--allowed", "0", "4096"], "aiedma verilog: error: --allowed: an option of the --axi top; "
                                 "name its kind with --axi"),
    (["--axi", "tile", "--allowed", "100", "4096"],
     "error: allowed=[100, 4096]: start must be a multiple of words"),
    (["--axi", "tile", "--allowed", "0", "32768"],
     "error: allowed=[0, 32768]: must end within the tile DMA's 14-bit word addresses"),
    (["--axi", "memtile", "--row", "40"], "error: row=40: must be in 0..31"),
    (["--memory"], "aiedma verilog: error: --memory: an option of the --axi top"),
    (["--axi", "shim", "--memory"], "aiedma verilog: error: --memory: the shim reaches its "
                                    "memory through its AXI4 master"),
    (["--axi", "tile", "--banks", "4"], "aiedma verilog: error: --banks: an option of the "
                                        "memory inside; add --memory"),
    (["--axi", "tile", "--memory", "--banks", "3"],
     "error: memory_banks=3: must be a power of two from 2 to memory_words (16384)"),
])
def test_verilog_options_that_build_no_top_are_refused_and_nothing_is_written(argv, message,
                                                                               tmp_path, capsys):
    out = tmp_path / "ip"
    with contextlib.suppress(SystemExit):
        assert cli.main(["verilog", *argv, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


GRAPH_H = """\
#pragma once
#include <adf.h>
#define NCOLS 10
constexpr int NROWS = 6;
class tutorial : public adf::graph {
  adf::shared_buffer<int32> mtx;
  adf::kernel k1, k2, k3, k4;
public:
  tutorial() {
    mtx = adf::shared_buffer<int32>::create({NCOLS, NROWS}, 2, 2);
    connect<>(k1.out[0], mtx.in[0]);  // skipped: not a DMA statement
    write_access(mtx.in[0]) = tiling({.buffer_dimension = {NCOLS, NROWS},
        .tiling_dimension = {3, 2}, .offset = {0, 0},
        .tile_traversal = {{.dimension = 0, .stride = 3, .wrap = 2},
                           {.dimension = 1, .stride = 2, .wrap = 3}}});
    write_access(mtx.in[1]) = tiling({.buffer_dimension = {NCOLS, NROWS},
        .tiling_dimension = {2, 3}, .offset = {6, 0},
        .tile_traversal = {{1, 3, 2}, {.order = 0, .stride = 2, .wrap = 2}}});
    read_access(mtx.out[0]) = tiling({.buffer_dimension = {NCOLS, NROWS},
        .tiling_dimension = {2, NROWS}, .tile_traversal = {{0, 2, 2}}});
    read_access(mtx.out[1]) = tiling({.buffer_dimension = {NCOLS, NROWS},
        .tiling_dimension = {3, NROWS}, .offset = {4, 0}, .tile_traversal = {{0, 3, 2}}});
  }
};
"""


def test_walk_reads_every_port_of_a_graph_header(tmp_path):
    header = write(tmp_path, GRAPH_H, name="graph.h")
    examples = {e["name"]: e["indices"]
                for e in json.loads((DATA / "tiling_examples.json").read_text())["examples"]}
    result = run("walk", "--format", "json", header)
    assert result.returncode == 0, result.stderr
    got = {r["name"]: r["indices"] for r in json.loads(result.stdout)}
    # every graph class is its own namespace of buffers (issue 16)
    assert got == {"tutorial::mtx.in[0]": examples["k1 write"],
                   "tutorial::mtx.in[1]": examples["k2 write"],
                   "tutorial::mtx.out[0]": examples["k3 read"],
                   "tutorial::mtx.out[1]": examples["k4 read"]}
    contexts = {r["name"]: (r["kind"], r["direction"], r["dtype"])
                for r in json.loads(result.stdout)}
    assert contexts["tutorial::mtx.in[0]"] == ("memtile", "write", "int32")


def test_bd_and_draw_take_a_port_of_a_header(tmp_path):
    header = write(tmp_path, GRAPH_H, name="graph.h")
    out = run("bd", "--port", "mtx.in[1]", header)  # the only mtx.in[1]; kind from the header
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("tutorial::mtx.in[1]: memtile write int32, 1 BD;")
    drawn = run("draw", "--port", "mtx.out[0]", header, "-o", tmp_path / "k3.svg")
    assert drawn.returncode == 0 and (tmp_path / "k3.svg").exists()


def test_a_bare_cpp_tiling_and_defines(tmp_path):
    text = "tiling({.buffer_dimension = {N}, .tiling_dimension = {N / 2}, .offset = {-2}})"
    cpp = write(tmp_path, text, name="t.cpp")
    result = run("walk", "-D", "N=8", cpp)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "  Z x2, 0..1"


@pytest.mark.parametrize(("args", "message"), [
    (["bd", "--kind", "memtile", "HEADER"], "holds 4 port programs (tutorial::mtx.in[0], "
     "tutorial::mtx.in[1], tutorial::mtx.out[0], tutorial::mtx.out[1]); aiedma bd takes one: "
     "choose with --port"),
    (["walk", "--port", "mtx.out[7]", "HEADER"], "--port='mtx.out[7]': no such port"),
    (["walk", "-D", "9X=1", "HEADER"], "invalid NAME=VALUE value: '9X=1'"),
    (["walk", "BROKEN"], "line 1, column"),
    (["walk", "UNKNOWN"], "unknown name"),
])
def test_cpp_input_errors_are_one_line(tmp_path, args, message):
    files = {"HEADER": write(tmp_path, GRAPH_H, name="graph.h"),
             "BROKEN": write(tmp_path, "tiling({.buffer_dimension = {4}", name="broken.h"),
             "UNKNOWN": write(tmp_path, "tiling({.buffer_dimension = {M}})", name="unknown.h")}
    result = run(*[files.get(a, a) for a in args])
    assert result.returncode == 2, result.stdout
    assert message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def test_walk_writes_numpy_files(tmp_path):
    port = write(tmp_path, {"buffer_dimension": [8], "tiling_dimension": [4], "offset": [-1]})
    result = run("walk", "--format", "npy", "-o", tmp_path / "s.npy", port)
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "s.npy").tolist() == [-1, 0, 1, 2]
    header = write(tmp_path, GRAPH_H, name="graph.h")
    assert run("walk", "--format", "npy", "-o", tmp_path / "all.npz", header).returncode == 0
    with np.load(tmp_path / "all.npz") as streams:
        assert sorted(streams.files) == ["tutorial::mtx.in[0]", "tutorial::mtx.in[1]",
                                         "tutorial::mtx.out[0]", "tutorial::mtx.out[1]"]
    missing = run("walk", "--format", "npy", port)
    assert missing.returncode == 2 and "go together" in missing.stderr
