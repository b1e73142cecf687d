"""Random programs on a whole ``aiedma_axi_dma_<kind>`` top under cocotbext-axi, against the model.

:func:`run_axi_dma` draws programs (:func:`~aiedma.tb.system.stream_programs.
random_stream_program`: every channel busy, an outcome that does not depend on the
streams' timing), runs them on the top with the bench of
:mod:`aiedma.tb.block.axi_dma_bench` (built as :mod:`aiedma.tb.block.axi_lite_runner`
builds it, in the same folder), and compares what the top did in each with the
program's model run (:func:`~aiedma.tb.system.dma_check.run_dma` with no RTL): every
word and TLAST of each MM2S stream, the memory after the run, each channel's
completion tokens and their controller IDs, every register the outcome decides, and
no cycle with ``error`` high. With ``pause=0`` (no pause on any stream) the cycle each
word moves on each stream, counted from the first cycle with ``pause`` low, must be
the model's too.

With ``ops``, a host makes that many random AXI4-Lite reads and writes while each
program runs (:func:`~aiedma.tb.system.host_ops.random_host_ops`; the master's channels
paused at random): each response must be the bus rules' answer, the register port must
see exactly the accesses taken, and the model, given those accesses in the cycles the
port saw them, must end the same way and read, in each of those cycles, the word each
read returned (status, locks, BD words, controls, counts: compared in the cycle).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...hdl.axi_dma import MASTER_KINDS
from ...model.arch.kinds import DMA_KINDS, check_kind
from ...model.arch.register_map import register_at, registers
from ...model.arch.registers import STATUS_FIELDS, start_queue_address, status_address
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.task import Task
from ...model.system.stream import Beat
from ..block.axi_dma_bench import CONFIG_ENV, RESULT_ENV, pack_words, unpack_words
from ..block.cocotb_runner import log_tail, run_bench
from ..common.simulators import check_simulator
from ..system.dma_check import registers_after, run_dma
from ..system.host_ops import host_timed_writes, random_host_ops
from ..system.random_programs import WritesProgram, bd_table_writes
from ..system.stream_programs import random_stream_program

__all__ = ["RUNS_ON", "bus_error_program", "compare_host", "compare_run", "expected_run",
           "expected_with_faults", "outcome_registers", "run_axi_bus_errors", "run_axi_dma"]

RUNS_ON = ("verilator", "icarus")
"""cocotb runs the exported Verilog on Verilator. Not on Icarus: there each cycle with a
running S2MM channel takes about 20 s under cocotb (docs/axi.md, "What is left"), so a
run would take hours."""

BENCH_MODULE = "aiedma.tb.block.axi_dma_bench"

_OUTCOME_ROLES = ("bd", "control", "status", "lock_value", "write_count")
"""The registers a program's outcome decides (a start queue reads 0; a read of a count
FIFO pop register would pop it)."""


_RUNNING = sum(((1 << width) - 1) << lsb for name, (lsb, width) in STATUS_FIELDS.items()
               if name in ("status", "channel_running") or name.startswith("stalled_"))
"""The status bits of a cycle (running, why it stalls), 0 once a program is over."""


def outcome_registers(kind: str, writes: list) -> list[int]:
    """The addresses of the registers of ``kind`` a program's outcome decides: the words
    of the BDs it writes (a reset of the top keeps the others, as the hardware's), every
    channel's control and status, every lock, every write count."""
    bds = {r.index for r in registers(kind) for address, _ in writes
           if r.role == "bd" and r.address == address}
    return [r.address for r in registers(kind) if r.role in _OUTCOME_ROLES
            and (r.role != "bd" or r.index in bds)]


def _settled(kind: str, address: int, word: int) -> int:
    """A register's word once the program is over: the model's status word of the
    run's last cycle without the bits of that cycle (the run is over: nothing runs or
    stalls); any other register as it is."""
    register = register_at(kind, address)
    return word & ~_RUNNING if register.role == "status" else word


def expected_run(program: object, timed: list | tuple = ()) -> dict:
    """The model's run of ``program``: what the top must do under any stream timing;
    with ``timed`` (a host's accesses by cycle, ``run_dma``'s ``timed_writes``), what
    it must do with those accesses in those cycles, and the words they read
    (``timed_reads``)."""
    addresses = outcome_registers(program.kind, program.writes)
    model = run_dma(program.kind, program.writes, program.memory, program.inputs,
                    simulator=None, timed_writes=timed)
    return {"outputs": {name: [[data, int(last)] for data, last in words]
                        for name, words in model.outputs.items()},
            "memory": model.memory, "tokens": model.token_controllers,
            "cycles": model.word_cycles, "length": model.cycles,
            "reads": addresses, "timed_reads": [word for _, _, word in model.reads],
            "registers": [_settled(program.kind, a, w) for a, w in zip(
                addresses, registers_after(program.kind, program.writes, program.memory,
                                           program.inputs, addresses, timed),
                strict=True)]}


def compare_host(program: object, ops: list, got: dict) -> list[str]:
    """What differs when a host's ``ops`` ran beside ``program`` (``got``: the bench's
    run, memory unpacked): the bus rules' responses, the register port's accesses, and
    the model's run with those accesses in their cycles (:func:`compare_run`, every
    word's cycle too) and its word for each read."""
    timed, read_ops, found = host_timed_writes(program.kind, ops, got["answers"],
                                               got["accesses"])
    want = expected_run(program, timed)
    found += compare_run(want, got, timed=True)
    reads = [t for t in timed if t[2] is None]
    if len(read_ops) != len(reads):
        return found            # the port's reads differ from the ops' (said above)
    for k, model, (cycle, address, _) in zip(read_ops, want["timed_reads"], reads,
                                              strict=True):
        word = got["answers"][k][1]
        if word != model:
            found.append(f"op {k}: read of {address:#x} in cycle {cycle} gave {word:#010x}, "
                         f"the model {model:#010x}")
    return found


def compare_run(want: dict, got: dict, *, timed: bool) -> list[str]:
    """What differs between the model's run ``want`` (:func:`expected_run`) and the top's
    ``got`` (the bench's, memory unpacked); each line names what and where first."""
    found = list(got.get("failures", []))
    for name, words in want["outputs"].items():
        if got["outputs"].get(name) != words:
            found.append(f"{name} words: model {words}, top {got['outputs'].get(name)}")
    differ = (want["memory"] != got["memory"]).nonzero()[0]
    if differ.size:
        k = int(differ[0])
        found.append(f"memory: {differ.size} words differ, first word {k}: model "
                     f"{int(want['memory'][k]):#x}, top {int(got['memory'][k]):#x}")
    for name, controllers in want["tokens"].items():
        if got["tokens"].get(name) != controllers:
            found.append(f"{name} tokens (controller IDs): model {controllers}, top "
                         f"{got['tokens'].get(name)}")
    for (address, response, word), model in zip(got["registers"], want["registers"],
                                                strict=True):
        if (response, word) != (0, model):
            found.append(f"register {address:#x}: model {model:#010x}, top {word:#010x} "
                         f"(response {response})")
    if got["error_cycles"]:
        found.append(f"error high in {got['error_cycles']} cycles")
    if timed:
        for name, cycles in want["cycles"].items():
            if got["cycles"].get(name) != cycles:
                found.append(f"{name} word cycles: model {cycles}, top "
                             f"{got['cycles'].get(name)}")
    return found


def cycle_exact(kind: str, pause: float) -> bool:
    """Whether a run of ``kind``'s top is the model's cycle for cycle: without stream
    pauses, and with a block RAM's memory port (not an AXI4 master, whose memory answers
    when it can)."""
    return pause == 0 and kind not in MASTER_KINDS


def run_axi_dma(kind: str, simulator: str, *, programs: int = 20, seed: int = 1,
                pause: float = 0.3, ops: int = 0, axil_pause: float = 0.3,
                memory: bool = False, build_root: str | Path = "build") -> dict:
    """Run ``programs`` random programs on ``aiedma_axi_dma_<kind>`` and compare each.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    simulator : {"verilator", "icarus"}
    programs : int
        Programs, seeds ``seed`` to ``seed + programs - 1``.
    seed : int
    pause : float
        The chance of a pause in a cycle on each stream's source and sink; 0 runs
        without pauses, and every word's cycle is compared too.
    ops : int
        Random AXI4-Lite reads and writes a host makes while each program runs (0:
        none); needs ``pause`` 0, so that the model's run is the top's cycle for cycle.
    axil_pause : float
        With ``ops``: the chance of a pause in a cycle on each of the AXI4-Lite
        master's channels (the program's own writes included).
    memory : bool
        Run ``aiedma_axi_dma_<kind>_mem``, the top with its memory inside: the bench
        loads each program's memory through its ``s_axil_mem`` slave and reads it back
        after the run; its channels wait on the memory's banks, so cycles are not
        compared (nor ``ops`` taken).
    build_root : path
        Everything goes below ``<build_root>/cocotb/<simulator>/``.

    Returns
    -------
    dict
        ``programs``, ``mm2s_words``, ``s2mm_words``, ``register_writes``,
        ``register_reads``, ``host_ops`` (the random accesses, ``host_reads`` of them
        reads whose word was compared in its cycle), ``cycles`` (the top's, over every
        program), ``seconds`` (the bench's), ``mismatches`` (``(seed, what)``, empty
        when every program matched) and ``failed``.

    Raises
    ------
    CocotbError
        If the build fails or the bench ends without a result.
    """
    check_kind(kind)
    check_simulator(simulator, RUNS_ON, "run_axi_dma")
    if programs < 1:
        raise ValueError(f"programs={programs}: must be at least 1")
    for name, value in (("pause", pause), ("axil_pause", axil_pause)):
        if not 0 <= value < 1:
            raise ValueError(f"{name}={value}: must be a probability in [0, 1)")
    if ops < 0 or (ops and pause):
        raise ValueError(f"ops={ops}: must be 0, or more with pause=0 (the host's reads are "
                         f"compared in their cycle; pause={pause})")
    if ops and kind in MASTER_KINDS:
        raise ValueError(f"ops={ops}: must be 0 for the {kind}, whose top reaches memory "
                         f"through its AXI4 master, so its cycles are not the model's (the "
                         f"host's reads are compared in their cycle)")
    if memory and (ops or kind in MASTER_KINDS):
        raise ValueError(f"memory=True: only for the core and memory tile (kind={kind!r}), "
                         f"with ops=0 (ops={ops}): their channels then wait on the memory's "
                         f"banks, so the host's reads cannot be compared in their cycle")
    drawn = [random_stream_program(s, kind) for s in range(seed, seed + programs)]
    wants = [expected_run(p) for p in drawn]
    host = [random_host_ops(p, ops, p.seed) for p in drawn]
    first = 0 if kind == "shim" else DMA_KINDS[kind].memory_window("own").start
    words = first + max(p.memory.size for p in drawn)
    config = {"kind": kind, "top": f"aiedma_axi_dma_{kind}{'_mem' if memory else ''}",
              "seed": seed, "pause": pause, "axil_pause": axil_pause if ops else 0,
              "ram_bytes": 1 << (4 * words - 1).bit_length(), "programs": [
        {**_bench_program(p, first, want["reads"], 20 * want["length"] + 500 + 50 * len(h)),
         "ops": [[address, None if data is None else data.hex()] for address, data in h]}
        for p, want, h in zip(drawn, wants, host, strict=True)]}
    return _run_config(kind, simulator, config, drawn, wants, host, build_root,
                       timed=cycle_exact(kind, pause) and not memory)


def _bench_program(program: object, first: int, reads: list[int], bound: int) -> dict:
    """A program as the bench's configuration states it: its writes, its memory from word
    ``first``, the registers read after it, its S2MM words and its bound of cycles."""
    return {"writes": [list(w) for w in program.writes], "first": first,
            "memory": pack_words(program.memory), "reads": reads,
            "inputs": {name: [[b.data, int(b.last)] for b in beats]
                       for name, beats in program.inputs.items()},
            "bound": bound}


def _bench_runs(kind: str, simulator: str, config: dict, build_root: str | Path
                ) -> tuple[dict, str | None]:
    """The bench's result on ``config``'s programs (each run's memory unpacked), and the
    tail of its log if it failed (else None)."""
    top = config.get("top", f"aiedma_axi_dma_{kind}")
    folder = (Path(build_root) / "cocotb" / simulator / top).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    result, failed, files = run_bench(simulator, top, folder, module=BENCH_MODULE,
                                      input_env=CONFIG_ENV, inputs=config,
                                      result_env=RESULT_ENV, prefix="axidma")
    log = log_tail(files["log"]) if failed else None
    for path in files.values():
        path.unlink(missing_ok=True)
    for got in result["runs"]:
        got["memory"] = unpack_words(got["memory"])
    return result, log


def _run_config(kind: str, simulator: str, config: dict, drawn: list, wants: list,
                host: list, build_root: str | Path, *, timed: bool) -> dict:
    """Run the bench on ``config``'s programs and compare each top's run with its
    ``wants`` (with the host's ops where it has any); :func:`run_axi_dma`'s summary."""
    result, log = _bench_runs(kind, simulator, config, build_root)
    mismatches = []
    for program, want, got, h in zip(drawn, wants, result["runs"], host, strict=True):
        found = (compare_host(program, h, got) if h
                 else compare_run(want, got, timed=timed))
        mismatches += [(program.seed, line) for line in found]
    return _summary(drawn, wants, host, result, mismatches, log)


def _summary(drawn: list, wants: list, host: list, result: dict, mismatches: list,
             log: str | None) -> dict:
    """:func:`run_axi_dma`'s counts of a bench run (``log``: its tail, if it failed)."""
    summary = {
        "programs": len(drawn),
        "mm2s_words": sum(len(w) for want in wants for w in want["outputs"].values()),
        "s2mm_words": sum(len(b) for p in drawn for b in p.inputs.values()),
        "register_writes": sum(len(p.writes) for p in drawn),
        "register_reads": sum(len(want["reads"]) for want in wants),
        "host_ops": sum(len(h) for h in host),
        "host_reads": sum(1 for got in result["runs"] for _, _, word in got["accesses"]
                          if word is None),
        "cycles": sum(run["length"] for run in result["runs"]),
        "seconds": result["seconds"], "mismatches": mismatches,
        "failed": bool(log is not None or mismatches)}
    if log is not None:
        summary["log"] = log
    return summary


_UNAVAILABLE = 1 << STATUS_FIELDS["error_dm_access_to_unavailable"][0]

# The bus-error program's four shim channels: (direction, channel, first word, words),
# each one BD of its own and one task; channel 0 of each direction meets the faults.
_FAULT_BDS = (("mm2s", 0, 64, 48), ("mm2s", 1, 200, 32), ("s2mm", 0, 512, 40),
              ("s2mm", 1, 800, 24))


@dataclass
class BusErrorProgram:
    """A shim program whose memory answers some accesses with SLVERR (the AXI bench's
    ``read_faults`` and ``write_faults``, word addresses)."""

    program: WritesProgram
    read_faults: list[int]
    write_faults: list[int]


def bus_error_program(seed: int) -> BusErrorProgram:
    """Four shim channels, one BD and one task each (a token at its end): MM2S 0 reads 48
    words of which 1 to 4 in a row answer SLVERR, S2MM 0 writes 40 of which 1 to 4 in a
    row do; MM2S 1 and S2MM 1 meet no fault. Random memory and words, from ``seed``."""
    rng = random.Random(seed)
    bds, writes, inputs = {}, [], {}
    for n, (direction, channel, first, words) in enumerate(_FAULT_BDS):
        bds[n] = BufferDescriptor("shim", buffer_length=words, base_address=first,
                                  burst_length=rng.choice((64, 128, 256)), valid_bd=1)
        writes.append((start_queue_address("shim", direction, channel),
                       Task(n, 1, True).encode()))
        if direction == "s2mm":
            inputs[f"s2mm{channel}"] = [Beat(rng.getrandbits(32), False) for _ in range(words)]
    memory = np.asarray([rng.getrandbits(32) for _ in range(1024)], dtype=np.int64)
    faults = []
    for _, _, first, words in _FAULT_BDS[::2]:
        start, length = rng.randrange(words - 4), rng.randint(1, 4)
        faults.append(list(range(first + start, first + start + length)))
    program = WritesProgram(seed, "shim", [*bd_table_writes("shim", bds), *writes], memory,
                            inputs, f"bus errors at words {faults[0]} (read), "
                                    f"{faults[1]} (written)")
    return BusErrorProgram(program, *faults)


def expected_with_faults(case: BusErrorProgram) -> dict:
    """What the shim's top must do on ``case``: the model's run, where a faulted read
    gives 0 and a faulted write leaves its word, and the status of each channel that met
    a fault shows ``error_dm_access_to_unavailable`` (each runs one BD, so its stop
    after that BD changes nothing else)."""
    program = case.program
    zeroed = program.memory.copy()
    zeroed[case.read_faults] = 0
    want = expected_run(WritesProgram(program.seed, "shim", program.writes, zeroed,
                                      program.inputs, program.description))
    memory = want["memory"].copy()
    kept = [*case.read_faults, *case.write_faults]
    memory[kept] = program.memory[kept]
    faulted = {status_address("shim", d, 0) for d, way in (("mm2s", case.read_faults),
                                                           ("s2mm", case.write_faults)) if way}
    registers = [word | _UNAVAILABLE if address in faulted else word
                 for address, word in zip(want["reads"], want["registers"], strict=True)]
    return {**want, "memory": memory, "registers": registers}


def bus_error_runs(simulator: str, *, programs: int = 4, seed: int = 1, pause: float = 0.3,
                   build_root: str | Path = "build"
                   ) -> tuple[list[BusErrorProgram], dict, str | None]:
    """The bench's runs of ``programs`` bus-error programs (:func:`bus_error_program`,
    seeds ``seed`` on) on ``aiedma_axi_dma_shim``, its ``AxiRam`` answering SLVERR where
    each says, every stream and the RAM's channels paused at ``pause``: the programs,
    the bench's result, and its log's tail if it failed (else None)."""
    check_simulator(simulator, RUNS_ON, "run_axi_bus_errors")
    if programs < 1:
        raise ValueError(f"programs={programs}: must be at least 1")
    cases = [bus_error_program(s) for s in range(seed, seed + programs)]
    config = {"kind": "shim", "seed": seed, "pause": pause, "axil_pause": 0,
              "ram_bytes": 1 << (4 * 1024 - 1).bit_length(), "programs": [
        {**_bench_program(c.program, 0, outcome_registers("shim", c.program.writes),
                          20 * 200 + 500),
         "ops": [], "read_faults": c.read_faults, "write_faults": c.write_faults}
        for c in cases]}
    return cases, *_bench_runs("shim", simulator, config, build_root)


def run_axi_bus_errors(simulator: str, *, programs: int = 4, seed: int = 1,
                       pause: float = 0.3, build_root: str | Path = "build") -> dict:
    """Run :func:`bus_error_runs` and compare each run with :func:`expected_with_faults`
    (words, memory, tokens, registers).

    Returns
    -------
    dict
        As :func:`run_axi_dma`, and ``faults``: the faulted words in all.
    """
    cases, result, log = bus_error_runs(simulator, programs=programs, seed=seed,
                                                pause=pause, build_root=build_root)
    wants = [expected_with_faults(case) for case in cases]
    mismatches = [(case.program.seed, line)
                  for case, want, got in zip(cases, wants, result["runs"], strict=True)
                  for line in compare_run(want, got, timed=False)]
    summary = _summary([c.program for c in cases], wants, [[] for _ in cases], result,
                       mismatches, log)
    return {**summary, "faults": sum(len(c.read_faults) + len(c.write_faults) for c in cases)}
