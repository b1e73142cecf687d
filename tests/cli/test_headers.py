"""``aiedma walk/bd/draw`` on the graph headers of examples/: every port listed with its
context, ``--port`` picking one, ports that cannot be read reported one line each."""

import json
from pathlib import Path

import pytest
from aiedma_command import run

from aiedma import cli

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("name", ["graph.h", "test_cases.h", "arrays.h", "kernel_shim.h",
                                  "pasted.cpp", "bd_budget.h", "uses_settings.h"])
def test_walk_lists_every_port_of_each_example(name):
    result = run("walk", EXAMPLES / name)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    heads = [line for line in result.stdout.splitlines() if not line.startswith("  ")]
    assert heads and all(" tile " in h or "(shim " in h for h in heads), heads


def test_each_port_carries_its_context():
    result = run("walk", "--format", "json", EXAMPLES / "kernel_shim.h")
    assert result.returncode == 0, result.stderr
    contexts = {r["name"]: (r["kind"], r["direction"]) for r in json.loads(result.stdout)}
    assert contexts == {"Blocks::k1.out[0]": ("tile", "read"),
                        "Blocks::k2.in[0]": ("tile", "write"),
                        "Blocks::ddr.in[0]": ("shim", "write"),
                        "Blocks::ddr.out[0]": ("shim", "read")}


def test_port_picks_one_qualified_or_unique_and_bd_takes_its_kind():
    out = run("walk", "--port", "TestCase2::mtxin.out[0]", EXAMPLES / "test_cases.h")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "TestCase2::mtxin.out[0] (memory tile read, int16): 48 elements, 16 zero",
        "  Z x2, 0..7, Z x4, 8..15, Z x4, 16..23, Z x4, 24..31, Z x2"]
    shim = run("bd", "--port", "ddr.out[0]", EXAMPLES / "kernel_shim.h")
    assert shim.returncode == 0, shim.stderr
    assert shim.stdout.startswith("Blocks::ddr.out[0]: shim read int32, 1 BD;")
    several = run("walk", "--port", "mtxin.out[0]", EXAMPLES / "test_cases.h")
    assert several.returncode == 2
    assert "several ports have that name" in several.stderr
    assert several.stderr.count("\n") == 1


def test_defines_give_template_parameters():
    out = run("walk", "-D", "ITYPE=cint16", "-D", "NCOL=4", "--port",
              "TestCase1::mtxin.out[0]", EXAMPLES / "test_cases.h")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("TestCase1::mtxin.out[0] (memory tile read, cint16): 16 ")
    # the context is validated: a 16-bit column walk is not word-aligned
    bad = run("walk", "-D", "ITYPE=int16", "--port", "TestCase1::mtxin.out[0]",
              EXAMPLES / "test_cases.h")
    assert bad.returncode == 2
    assert bad.stderr.startswith("aiedma walk: error: TestCase1::mtxin.out[0] (memory tile "
                                 "read, int16): entries[0]: tiling_dimension[0]=1")


def test_ports_that_cannot_be_read_are_one_line_each():
    result = run("walk", EXAMPLES / "partly_broken.h")
    assert result.returncode == 0
    assert [line.split(": line ")[1].split(":")[0] for line in result.stderr.splitlines()] == [
        "12, column 80", "15, column 74", "16, column 34"]
    assert all(line.startswith("aiedma walk: warning: partly_broken.h: not read: ")
               for line in result.stderr.splitlines())
    assert result.stdout.count("Partly::mtx.") == 2
    picked = run("walk", "--port", "mtx.out[1]", EXAMPLES / "partly_broken.h")
    assert picked.returncode == 2 and picked.stderr.startswith(
        "aiedma walk: error: --port='mtx.out[1]': partly_broken.h has it but it was not read: "
        "read_access(mtx.out[1]) in class Partly: line 15, column 74: unknown name WIDTH")
    assert picked.stderr.count("\n") == 1
    missing = run("walk", "--port", "mtx.out[9]", EXAMPLES / "partly_broken.h")
    assert missing.returncode == 2 and "no such port" in missing.stderr
    assert "3 not read" in missing.stderr and missing.stderr.count("\n") == 1


def test_a_header_with_no_readable_port_is_an_error(tmp_path):
    header = tmp_path / "g.h"
    header.write_text("m = shared_buffer<int16>::create({8}, 1, 1);\n"
                      "read_access(m.out[0]) = tiling({.offset = {X}});\n")
    result = run("walk", header)
    assert result.returncode == 2
    assert result.stderr == ("aiedma walk: error: g.h: no port could be read: "
                             "read_access(m.out[0]): line 2, column 44: unknown name X (not "
                             "#defined or constexpr before this point, nor given in defines)\n")


def test_sim_file_runs_every_port_through_its_kinds_address_generator(capsys):
    assert cli.main(["sim", str(EXAMPLES / "kernel_shim.h")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "Blocks::k1.out[0]", "Blocks::k2.in[0]", "Blocks::ddr.in[0]", "Blocks::ddr.out[0]"]
    assert all(line.endswith("on amaranth, 0 mismatches, the port's stream") for line in lines)
    assert "(core tile read, int32)" in lines[0] and "(shim write, int32)" in lines[2]


@pytest.mark.parametrize(("args", "message"), [
    (["--kinds", "tile", "memtile"], "--kinds: a JSON tiling has no DMA of its own; give "
                                     "exactly one kind"),
    (["--graph", "tutorial"], "and --graph=tutorial: give a file or a graph, not both"),
])
def test_sim_file_errors(tmp_path, capsys, args, message):
    path = tmp_path / "port.json"
    path.write_text('{"buffer_dimension": [8], "tiling_dimension": [4]}')
    assert cli.main(["sim", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_local_includes_define_sizes_and_types(tmp_path):
    out = run("walk", "--port", "Columns::mtx.out[0]", EXAMPLES / "uses_settings.h")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.splitlines()[0] == ("Columns::mtx.out[0] (memory tile read, int16): "
                                          "32 elements, 0 zero")
    # -D wins over the included #define; the included constant follows it
    small = run("walk", "-D", "NCOL=4", "--port", "Columns::mtx.out[0]",
                EXAMPLES / "uses_settings.h")
    assert small.stdout.splitlines()[1] == "  0..1, 4..5, 2..3, 6..7", small.stderr
    # nested includes, and a cycle read once
    (tmp_path / "a.h").write_text('#pragma once\n#include "b.h"\nconst int W = V * 2;\n')
    (tmp_path / "b.h").write_text('#pragma once\n#include "a.h"\n#define V 3\n')
    (tmp_path / "g.h").write_text(
        '#include "a.h"\nclass G : public adf::graph { adf::shared_buffer<int32> m; G() {\n'
        'm = adf::shared_buffer<int32>::create({W}, 1, 1);\n'
        'adf::read_access(m.out[0]) = adf::tiling({.buffer_dimension = {W}});\n}};\n')
    nested = run("walk", tmp_path / "g.h")
    assert nested.returncode == 0, nested.stderr
    assert nested.stdout.startswith("G::m.out[0] (memory tile read, int32): 6 elements")


def test_too_many_local_includes_is_one_line(tmp_path):
    for k in range(70):
        (tmp_path / f"h{k}.h").write_text(f'#include "h{k + 1}.h"\n#define N{k} {k}\n')
    (tmp_path / "h70.h").write_text("#define LAST 1\n")
    out = run("walk", tmp_path / "h0.h")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "more than 64 local headers included" in out.stderr
