"""The bench a Verilated top runs in (tb/system/replay_bench.py): inputs set from Python
reach the design's logic at once, a replay compares each cycle's outputs before its
clock edge, and a port a replay leaves out keeps its value."""

import numpy as np
import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from aiedma.tb.system.loop_verilator import PortRows, VerilatedTop
from aiedma.tb.system.replay_bench import bench_verilog


class Accumulator(wiring.Component):
    """``total`` adds ``add`` at each edge while ``enable``; ``peek`` is ``total + add``
    now (an output that follows an input in the same cycle)."""

    enable: In(1)
    add: In(40)      # over 32 bits: two words a row
    total: Out(40)
    peek: Out(40)

    def elaborate(self, platform):
        m = Module()
        with m.If(self.enable):
            m.d.sync += self.total.eq(self.total + self.add)
        m.d.comb += self.peek.eq(self.total + self.add)
        return m


@pytest.fixture(scope="module")
def make_top():
    return lambda: VerilatedTop("aiedma_test_accumulator", Accumulator, cache=False)


def test_an_input_set_from_python_moves_the_outputs_before_the_edge(make_top):
    top = make_top()
    top.set("add", 5)
    assert top.get("peek") == 5 and top.get("total") == 0
    top.set("enable", 1)
    top.edge()
    assert top.get("total") == 5 and top.get("peek") == 10
    top.set("add", 1 << 35)   # the upper word
    assert top.get("peek") == 5 + (1 << 35) and top.get("add") == 1 << 35


def rows(top, cycles, add, enable=None):
    inputs = PortRows(top.ports, ["add"] + ([] if enable is None else ["enable"]), cycles)
    inputs.put("add", np.asarray(add))
    if enable is not None:
        inputs.put("enable", np.asarray(enable))
    return inputs


def test_a_replay_compares_each_cycle_before_its_edge_and_holds_ports_left_out(make_top):
    top = make_top()
    top.set("enable", 1)           # left out of the replay's rows: stays 1
    add = [3, 4, 1 << 33, 7]
    total = np.concatenate(([0], np.cumsum(add)[:-1]))
    want = PortRows(top.ports, ["total", "peek"], 4)
    want.put("total", total)
    want.put("peek", total + add)
    care = PortRows(top.ports, ["total", "peek"], 4)
    care.mask("total", 1)
    care.mask("peek", 1)
    assert top.replay(rows(top, 4, add), want, care) == (None, {})
    assert top.get("total") == sum(add), "the last cycle's edge was taken"
    assert top.get("add") == 7, "the inputs hold the last row"


def test_a_replay_stops_at_the_first_difference_with_the_outputs_then(make_top):
    add = [1, 2, 3, 4, 5]                     # totals 0, 1, 3, 6, 10
    top = make_top()
    want = PortRows(top.ports, ["total"], 5)
    want.put("total", [0, 1, 3, 7, 11])       # cycles 3 and 4 differ
    care = PortRows(top.ports, ["total"], 5)
    care.mask("total", 1)
    assert top.replay(rows(top, 5, add, [1] * 5), want, care) == (3, {"total": 6})
    care.mask("total", [1, 1, 1, 0, 1])       # cycle 3 not compared: cycle 4 is the first
    top = make_top()
    assert top.replay(rows(top, 5, add, [1] * 5), want, care) == (4, {"total": 10})


def test_outputs_only_are_compared_and_a_top_needs_a_clock_and_no_strobe(make_top):
    top = make_top()
    with pytest.raises(ValueError, match=r"\['add'\] are inputs"):
        top.replay(rows(top, 1, [0]), rows(top, 1, [0]), rows(top, 1, [0]))
    with pytest.raises(ValueError, match="no input named clk"):
        bench_verilog([("input", "rst", 1), ("output", "q", 1)], "t")
    with pytest.raises(ValueError, match="top t: a port is named strobe, the bench's own input"):
        bench_verilog([("input", "clk", 1), ("input", "strobe", 1), ("output", "q", 1)], "t")
