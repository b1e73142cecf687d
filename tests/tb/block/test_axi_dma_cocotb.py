"""Whole AXI DMA tops under cocotb 2 and cocotbext-axi (tb/block/axi_dma_bench.py): random
programs through the AXI4-Lite master and AXI4-Stream sources and sinks, against the model.

``make test`` builds the shim's top (its AXI4 master on a cocotbext-axi ``AxiRam``) and the
core tile's on Icarus, which tests/tb/block/test_axi_lite_cocotb.py makes too (the same
tops in the same folders): an Icarus build of the shim's top takes seconds, a Verilator one
about a minute, so the shim's runs on Verilator are ``long``. The core tile's top, with block
RAM ports, is the one compared cycle for cycle. Every kind by the hundred programs is
``python -m aiedma.tb axi-dma`` in ``make sim``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from repo import REPO

from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.arch.register_map import access_taken, register_at, role_access
from aiedma.model.errors import AiedmaError
from aiedma.tb.common.simulators import UnsupportedSimulator
from aiedma.tb.regress.axi_dma_runner import compare_host, compare_run, expected_run, run_axi_dma
from aiedma.tb.system.dma_check import run_dma
from aiedma.tb.system.host_ops import HOST_OKAY, HOST_SLVERR, random_host_ops
from aiedma.tb.system.stream_programs import random_stream_program

BUILD = REPO / "build"


def run(kind, simulator, **options):
    result = run_axi_dma(kind, simulator, build_root=BUILD, **options)
    assert not result["failed"] and not result["mismatches"], result
    return result


SHIM_SIMULATORS = ["icarus", pytest.param("verilator", marks=pytest.mark.long)]


@pytest.mark.parametrize("simulator", SHIM_SIMULATORS)
def test_shim_programs_through_its_axi4_master_under_pauses_match_the_model(simulator):
    """Streams and the RAM's five channels paused at random: every word, the memory the
    RAM holds after, tokens and registers are the model's."""
    # half as many on Icarus, where each costs about three times as much
    result = run("shim", simulator, programs={"icarus": 4, "verilator": 8}[simulator], seed=11,
                 pause=0.3)
    assert result["mm2s_words"] > 0 and result["s2mm_words"] > 0
    assert result["register_reads"] > 0


@pytest.mark.parametrize("simulator", SHIM_SIMULATORS)
def test_shim_programs_through_its_axi4_master_without_pauses_match_the_model(simulator):
    result = run("shim", simulator, programs=4, seed=3, pause=0)
    assert result["programs"] == 4


def test_a_host_pass_on_the_shim_is_refused_as_its_cycles_are_not_the_models():
    with pytest.raises(ValueError, match=r"^ops=5: must be 0 for the shim, whose top reaches "
                                         r"memory through its AXI4 master"):
        run_axi_dma("shim", "verilator", build_root=BUILD, pause=0, ops=5)


def test_on_icarus_every_word_moves_in_the_models_cycle_and_a_hosts_accesses_agree():
    assert run("tile", "icarus", programs=2, seed=7, pause=0.3)["s2mm_words"] > 0
    assert run("tile", "icarus", programs=2, seed=3, pause=0)["programs"] == 2
    result = run("tile", "icarus", programs=2, seed=8, pause=0, ops=30, axil_pause=0.3)
    assert result["host_ops"] == 60 and result["host_reads"] > 0


@pytest.mark.parametrize("kind, simulator", [
    ("tile", "icarus"), pytest.param("tile", "verilator", marks=pytest.mark.long),
    pytest.param("memtile", "icarus", marks=pytest.mark.long)])
def test_with_the_memory_inside_every_word_and_the_memory_are_the_models(kind, simulator):
    """``aiedma_axi_dma_<kind>_mem``: each program's memory loaded and read back through
    the ``s_axil_mem`` slave, streams paused at random; the channels wait on the memory's
    banks, so words, memory, tokens and registers are compared, not cycles. Two programs:
    loading and reading back each one's 4,096 words is most of the run (make sim's
    axi-dma regression runs more)."""
    result = run(kind, simulator, programs=2, seed=21, pause=0.3, memory=True)
    assert result["mm2s_words"] > 0 and result["s2mm_words"] > 0


def test_a_memory_inside_is_refused_with_a_hosts_pass_or_on_the_shim():
    for kind, options in (("tile", {"ops": 5, "pause": 0}), ("shim", {})):
        with pytest.raises(ValueError, match=r"^memory=True: only for the core and memory "):
            run_axi_dma(kind, "icarus", build_root=BUILD, memory=True, **options)


def _as_bench_saw(want: dict) -> dict:
    """What the bench reports for a top that did exactly what the model did."""
    return {"outputs": copy.deepcopy(want["outputs"]), "memory": want["memory"].copy(),
            "tokens": copy.deepcopy(want["tokens"]), "cycles": copy.deepcopy(want["cycles"]),
            "registers": [[a, 0, w] for a, w in zip(want["reads"], want["registers"],
                                                    strict=True)],
            "error_cycles": 0, "failures": []}


def test_the_comparison_reports_each_kind_of_difference():
    want = expected_run(random_stream_program(5, "tile"))
    assert compare_run(want, _as_bench_saw(want), timed=True) == []
    changes = {
        "mm2s0 words": lambda got: got["outputs"]["mm2s0"][-1].__setitem__(
            0, got["outputs"]["mm2s0"][-1][0] ^ 1),
        "mm2s1 words (TLAST)": lambda got: got["outputs"]["mm2s1"][0].__setitem__(
            1, 1 - got["outputs"]["mm2s1"][0][1]),
        "memory": lambda got: got["memory"].__setitem__(2048, got["memory"][2048] ^ 1),
        "tokens": lambda got: got["tokens"]["s2mm1"].append(0),
        "register": lambda got: got["registers"][0].__setitem__(2, got["registers"][0][2] ^ 4),
        "response": lambda got: got["registers"][0].__setitem__(1, 2),
        "error high": lambda got: got.__setitem__("error_cycles", 1),
        "word cycles": lambda got: got["cycles"]["mm2s1"].__setitem__(0, -1),
    }
    for what, change in changes.items():
        got = _as_bench_saw(want)
        change(got)
        found = compare_run(want, got, timed=True)
        assert len(found) == 1 and what.split()[0] in found[0], (what, found)
    got = _as_bench_saw(want)
    got["cycles"]["mm2s1"][0] = -1
    assert compare_run(want, got, timed=False) == []   # under pauses, cycles are free


def _host_as_bench_saw(program, ops) -> dict:
    """What the bench reports for a top that took op ``k`` in cycle ``10 + 3k`` and did
    what the model did with them."""
    accesses, answers, read_ops = [], [], []
    for k, (address, data) in enumerate(ops):
        write, aligned = data is not None, address & ~3
        strobe = ((1 << len(data)) - 1) << address % 4 & 0xF if write else 0xF
        taken = access_taken(program.kind, address, write=write, strobe=strobe)
        answers.append([HOST_OKAY if taken else HOST_SLVERR, 0])
        access = role_access(register_at(program.kind, aligned).role) if taken else None
        if access is not None and (access.writable if write else access.readable):
            accesses.append([10 + 3 * k, aligned,
                             int.from_bytes(data, "little") if write else None])
            read_ops += [] if write else [k]
    want = expected_run(program, accesses)
    for k, word in zip(read_ops, want["timed_reads"], strict=True):
        answers[k][1] = word
    return {**_as_bench_saw(want), "answers": answers, "accesses": accesses}


def test_the_host_comparison_reports_each_kind_of_difference():
    program = random_stream_program(5, "tile")
    ops = random_host_ops(program, 60, 5)
    assert compare_host(program, ops, _host_as_bench_saw(program, ops)) == []
    read = next(k for k, (a, d) in enumerate(ops) if d is None
                and register_at("tile", a) is not None and register_at("tile", a).role == "status")
    refused = next(k for k, (a, d) in enumerate(ops) if d is not None
                   and not access_taken("tile", a, write=True, strobe=0xF if a % 4 == 0 and
                                        len(d) == 4 else 0))
    write = next(k for k, (a, d) in enumerate(ops) if d is not None and a % 4 == 0
                 and len(d) == 4 and access_taken("tile", a, write=True)
                 and role_access(register_at("tile", a).role).writable)
    changes = {
        f"op {read}: read": lambda got: got["answers"][read].__setitem__(
            1, got["answers"][read][1] ^ 1),
        f"op {refused}: write": lambda got: got["answers"][refused].__setitem__(0, HOST_OKAY),
        "the register port's writes": lambda got: got["accesses"].remove(
            next(a for a in got["accesses"] if a[0] == 10 + 3 * write)),
    }
    for what, change in changes.items():
        got = _host_as_bench_saw(program, ops)
        change(got)
        found = compare_host(program, ops, got)
        assert found and found[0].startswith(what), (what, found)


@pytest.mark.parametrize("kind", ["tile", "memtile", "shim"])
def test_a_stream_programs_outcome_does_not_depend_on_backpressure(kind):
    rng = np.random.default_rng(1)
    for seed in range(4):
        program = random_stream_program(seed, kind)
        free = run_dma(kind, program.writes, program.memory, program.inputs, simulator=None)
        ready = {f"mm2s{n}": list(rng.random(300) < 0.4)
                 for n in range(DMA_KINDS[kind].channels)}
        held = run_dma(kind, program.writes, program.memory, program.inputs, ready,
                       simulator=None)
        assert held.word_cycles != free.word_cycles     # the backpressure told
        assert held.outputs == free.outputs and held.locks == free.locks
        assert np.array_equal(held.memory, free.memory)
        assert held.token_controllers == free.token_controllers
        assert len(free.outputs) == DMA_KINDS[kind].channels   # every MM2S has work


def test_a_stream_program_of_a_kind_without_a_dma_is_refused():
    with pytest.raises(AiedmaError, match=r"^kind='core': stream programs run on memtile or "
                                          r"tile or shim$"):
        random_stream_program(1, "core")


@pytest.mark.parametrize(("options", "match"), [({"programs": 0}, "programs=0"),
                                                ({"pause": 1.0}, "pause=1.0"),
                                                ({"ops": 5, "pause": 0.3}, "ops=5"),
                                                ({"ops": 5, "pause": 0, "axil_pause": 1.0},
                                                 "axil_pause=1.0")])
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        run_axi_dma("tile", "verilator", build_root=BUILD, **options)


def test_a_simulator_the_bench_does_not_run_on_is_refused():
    with pytest.raises(UnsupportedSimulator, match="amaranth"):
        run_axi_dma("tile", "amaranth", build_root=BUILD)
