"""``make verilog`` (flows/verilog.py): every top exported and linted clean."""

import re
from pathlib import Path

import pytest

from aiedma.flows import verilog as verilog_export
from aiedma.hdl.export import TOPS
from aiedma.tb.common import tools
from aiedma.tb.system.loop_verilator import verilog_ports

LEFT_TO_MAKE_VERILOG = frozenset({
    "aiedma_dma_memtile", "aiedma_axi_dma_memtile", "aiedma_dma_memtile_nocompress",
    "aiedma_dma_tile", "aiedma_axi_dma_tile", "aiedma_dma_tile_nocompress",
    "aiedma_axi_dma_tile_mem", "aiedma_axi_dma_memtile_mem"})
"""The whole core-tile and memory-tile DMAs: 25-70 s each to export and lint (the memory
tile's 40 s and more). ``make verilog`` lints them; here the shim's whole DMA and AXI top
stand for them (the same register port, fetch port, lock unit and channels, fewer of
them), and the core tile's channels for its (de)compressors."""

LINTED_SHORT = frozenset({
    "aiedma_mm2s_dma_channel_memtile", "aiedma_s2mm_dma_channel_tile", "aiedma_axi_dma_shim"})
"""Of the whole channels and DMAs (3-14 s each), the ones ``make test`` lints: a whole
channel of each direction and the shim's AXI top, whose Verilog holds its whole DMA;
every other top of the kind takes a few seconds or less. The others are ``long``."""


def _lint_case(top: str):
    whole = "_dma_" in top and top not in LINTED_SHORT
    return pytest.param(top, marks=pytest.mark.long) if whole else top


# One top per test, so the suite's workers share the tops.
@pytest.mark.parametrize("top", [_lint_case(t) for t in sorted(set(TOPS) - LEFT_TO_MAKE_VERILOG)])
def test_every_top_exports_and_lints_clean(top, tmp_path):
    (result,) = verilog_export.export_and_lint(tmp_path, tops=[top])
    assert result.ok, result.messages
    text = (tmp_path / f"{top}.v").read_text()
    assert f"module {top}(" in text
    assert result.line().startswith(f"{top}: in: ") and result.line().endswith("lint ok")
    # The ports listed are the module's own, one per element of an array member; an AXI
    # top's clock and reset are AXI's.
    inputs, outputs = (part.split(": ")[1].split() for part in result.ports.split("; "))
    clocks = {"aclk", "aresetn"} if top.startswith("aiedma_axi_dma_") else {"clk", "rst"}
    assert clocks <= set(inputs) and not {"clk", "rst", "aclk", "aresetn"} - clocks & set(inputs)
    assert ({re.sub(r"\[\d+\]$", "", port) for port in inputs + outputs}
            == {name for _, name, _ in verilog_ports(text, top)})
    assert_documented_ports(top, text)
    if top.startswith("aiedma_axi_dma_"):
        assert "reg_addr" not in result.ports   # the register port is behind the slave


def assert_documented_ports(top, text):
    """The ports each family of tops documents, by their Verilog names."""
    if top.startswith("aiedma_axi_dma_"):   # AXI4-Lite and AXI4-Stream names, Vivado's
        # The shim reaches memory through its AXI4 master, the others a RAM port a channel.
        memory = (("m_axi_araddr", "m_axi_arlen", "m_axi_wlast", "m_axi_bresp", "m_axi_rid")
                  if top.endswith("_shim") else ("mm2s1_mem_addr", "s2mm0_mem_we"))
        for port in ("s_axil_awaddr", "s_axil_wstrb", "s_axil_bresp", "s_axil_rdata",
                     "m_axis_mm2s1_tdata", "m_axis_mm2s0_tlast", "s_axis_s2mm1_tready",
                     "s_axis_s2mm0_tvalid", *memory):
            assert f" {port}" in text, port
        if top.endswith("_shim"):
            assert "mm2s0_mem_addr" not in text
    elif top.startswith("aiedma_dma_"):
        assert "reg_rdata" in text and "mm2s__0__o__payload" in text
        assert "s2mm__1__i__payload" in text and "mm2s__1__mem_addr" in text
    elif "addrgen" in top:
        assert "i__payload" in text and "o__payload" in text
    elif "dma_channel" in top:
        assert "reg_addr" in text and "acquire__request" in text and "mem_addr" in text
    elif "axi_lite" in top:
        assert "s_axil_awaddr" in text and "reg_addr" in text
    elif "channel" in top:
        assert "bd__payload" in text and "mem_addr" in text
    else:
        assert "mem_addr" in text and "beats__payload" in text


def test_make_verilog_prints_a_line_per_top_and_a_total(monkeypatch, tmp_path, capsys):
    tops = ["aiedma_mm2s_tile", "aiedma_s2mm_shim", "aiedma_addrgen_memtile"]
    monkeypatch.setattr(verilog_export, "TOPS", {t: TOPS[t] for t in tops})
    assert verilog_export.DEFAULT_OUT == Path("build/verilog")
    assert verilog_export.main(["--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == sorted(tops)   # in name order
    assert lines[-1].startswith(f"3 of 3 tops lint clean ({len(tools.LINT_WAIVERS)} waivers: ")
    for name, reason in tools.LINT_WAIVERS:
        assert f"-Wno-{name}" in tools.lint_flags() and reason


def test_lint_fails_without_the_waivers(monkeypatch, tmp_path):
    monkeypatch.setattr(tools, "LINT_WAIVERS", ())
    (result,) = verilog_export.export_and_lint(tmp_path, tops=["aiedma_mm2s_tile"])
    assert not result.ok and "lint FAILED: %Warning-" in result.line()


def test_a_failed_lint_makes_make_verilog_fail(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(verilog_export, "TOPS", {"aiedma_mm2s_tile": TOPS["aiedma_mm2s_tile"]})
    monkeypatch.setattr(tools, "LINT_WAIVERS", ())
    assert verilog_export.main(["--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "--- aiedma_mm2s_tile ---" in captured.err and "%Warning-" in captured.err
    assert captured.out.splitlines()[-1].startswith("0 of 1 tops lint clean")
