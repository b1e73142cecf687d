"""cocotb test of a whole ``aiedma_axi_dma_<kind>`` top as a host and an FPGA design use it.

Run by :mod:`aiedma.tb.regress.axi_dma_runner` (never imported by the rest of ``tb/``): the programs
come as JSON in the file named by :data:`CONFIG_ENV`, what the top did goes to the file
named by :data:`RESULT_ENV`, and the runner compares it with the model.

Each program (:func:`~aiedma.tb.system.stream_programs.random_stream_program`) runs from
a reset of the top, as a host would run it:

* a cocotbext-axi ``AxiLiteMaster`` writes its BD words, control words and task pushes,
  all handed over at once (back to back), while the top's ``pause`` is high; every
  response must be OKAY;
* ``pause`` falls; each S2MM channel's words come from an ``AxiStreamSource`` (a frame
  ends at each word with TLAST) and each MM2S channel's stream goes into an
  ``AxiStreamSink``, both with a random pause generator (``pause`` is the chance of a
  pause in a cycle; 0: none);
* every cycle the bench answers each channel's memory port from the program's memory
  (a read gives the word in the next cycle, a write lands at the end of its cycle) and
  records every word each stream moves with its cycle, every completion token with its
  controller ID, and the cycles ``error`` is high; an access outside the program's
  memory is a failure. A top with an AXI4 master (the shim's, ``m_axi_*``) reaches the
  program's memory in a cocotbext-axi ``AxiRam`` instead, its five channels under the
  same pause generator as the streams, and the memory after the run is the RAM's; a
  program's ``read_faults`` and ``write_faults`` (word addresses) make the RAM answer
  SLVERR for those words (cocotbext-axi's slave answers so when its memory raises), and
  a faulted write leaves its word as it was. A top with its memory inside
  (``aiedma_axi_dma_<kind>_mem``, ``s_axil_mem_*``) gets the program's memory through a
  second ``AxiLiteMaster`` before ``pause`` falls, and the memory after the run is what
  that master reads back;
* the program ends when every source has sent its words and ``busy`` has stayed low
  for a few cycles, or at its bound of cycles (a hang: a failure);
* the master then reads every register the program's outcome decides (BD words with
  their iteration write-back, controls, status, lock values, write counts).

A program may carry ``ops``, AXI4-Lite reads and writes a host makes while its channels
run (:func:`~aiedma.tb.regress.axi_dma_runner.random_ops`): from the cycle ``pause``
falls they go to the master in batches of 1 to 8 (back to back) with a few idle cycles
between batches, the master's five channels paused at random (``axil_pause``), and the
program is not over before the last response. Every cycle the bench records what
reaches the DMA's register port (``reg_write``, ``reg_read``, ``reg_addr``,
``reg_wdata``, wires inside the top) with its cycle, so the runner can give the model
the same accesses in the same cycles; each op's response and word go to the result.
"""

from __future__ import annotations

import base64
import json
import os
import random
import time
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import Combine, RisingEdge, with_timeout
from cocotbext.axi import (
    AxiBus,
    AxiLiteBus,
    AxiLiteMaster,
    AxiRam,
    AxiStreamBus,
    AxiStreamFrame,
    AxiStreamSink,
    AxiStreamSource,
)

from ...model.arch.kinds import DMA_KINDS
from ...model.cycle.contract import DATA_BITS
from .axi_common import pause_master, pauses, reset_top

CONFIG_ENV = "AIEDMA_AXIDMA_CONFIG"
RESULT_ENV = "AIEDMA_AXIDMA_RESULT"

OKAY = 0
_CYCLE_NS = 10
_IDLE_CYCLES = 8          # busy low this long, every source empty: the program is over


def pack_words(words: np.ndarray) -> str:
    """Words as base64 of little-endian 32-bit words (what the runner unpacks)."""
    return base64.b64encode(np.asarray(words, dtype="<u4").tobytes()).decode()


def unpack_words(text: str) -> np.ndarray:
    """The words :func:`pack_words` packed, as int64."""
    return np.frombuffer(base64.b64decode(text), dtype="<u4").astype(np.int64)


class TB:
    """The top, its clock, the AXI4-Lite master and the streams' sources and sinks."""

    def __init__(self, dut: object, config: dict) -> None:
        self.dut, self.config = dut, config
        self.kind = config["kind"]
        self.channels = DMA_KINDS[self.kind].channels
        self.rng = random.Random(config["seed"])
        self.cycle = 0
        cocotb.start_soon(Clock(dut.aclk, _CYCLE_NS, unit="ns").start())
        self.master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.aclk,
                                    dut.aresetn, reset_active_level=False)
        # One 32-bit word a beat (not four bytes): a frame's tdata is its words.
        self.sources = [AxiStreamSource(AxiStreamBus.from_prefix(dut, f"s_axis_s2mm{n}"),
                                        dut.aclk, dut.aresetn, reset_active_level=False,
                                        byte_size=DATA_BITS) for n in range(self.channels)]
        self.sinks = [AxiStreamSink(AxiStreamBus.from_prefix(dut, f"m_axis_mm2s{n}"),
                                    dut.aclk, dut.aresetn, reset_active_level=False,
                                    byte_size=DATA_BITS) for n in range(self.channels)]
        self.ram = None
        self.faults: dict[str, set[int]] = {"read": set(), "write": set()}
        if hasattr(dut, "m_axi_arvalid"):
            self.ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.aclk, dut.aresetn,
                              reset_active_level=False, size=config["ram_bytes"])
            _fail_on(self.ram, self.faults)
        self.memory_master = None
        if hasattr(dut, "s_axil_mem_awvalid"):
            self.memory_master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil_mem"),
                                               dut.aclk, dut.aresetn, reset_active_level=False)
        self._ports = _Ports(dut, self.channels,
                             memory_ports=self.ram is None and self.memory_master is None)
        dut.pause.value = 1
        if len(DMA_KINDS[self.kind].windows) > 1:   # no program names a neighbour's lock
            for p in range(2 * self.channels):
                for side in ("acquire", "release"):
                    getattr(dut, f"neighbour_{side}__{p}__grant").value = 0

    async def reset(self) -> None:
        self.dut.pause.value = 1
        await reset_top(self.dut)

    def set_pauses(self, probability: float) -> None:
        """A random pause generator on every stream and the RAM's channels (0: none)."""
        ram = () if self.ram is None else (
            self.ram.write_if.aw_channel, self.ram.write_if.w_channel,
            self.ram.write_if.b_channel, self.ram.read_if.ar_channel,
            self.ram.read_if.r_channel)
        for end in (*self.sources, *self.sinks, *ram):
            if probability:
                end.set_pause_generator(pauses(self.rng.getrandbits(32), probability))
            else:
                end.clear_pause_generator()

    async def write_registers(self, writes: list) -> list[str]:
        """Every write at once (back to back); the failures (a response not OKAY)."""
        events = [self.master.init_write(address, int(value).to_bytes(4, "little"))
                  for address, value in writes]
        await with_timeout(Combine(*(e.wait() for e in events)),
                           _CYCLE_NS * (40 * len(events) + 100), "ns")
        return [f"write of {value:#010x} at {address:#x} answered {int(e.data.resp)}"
                for (address, value), e in zip(writes, events, strict=True)
                if int(e.data.resp) != OKAY]

    async def read_registers(self, addresses: list[int]) -> list[list[int]]:
        """``[address, response, word]`` of each read, 32 handed over at a time."""
        found = []
        for k in range(0, len(addresses), 32):
            batch = addresses[k:k + 32]
            events = [self.master.init_read(a, 4) for a in batch]
            await with_timeout(Combine(*(e.wait() for e in events)),
                               _CYCLE_NS * (40 * len(events) + 100), "ns")
            found += [[a, int(e.data.resp), int.from_bytes(e.data.data, "little")]
                      for a, e in zip(batch, events, strict=True)]
        return found

    async def host_ops(self, ops: list) -> list[list[int]]:
        """``ops`` (``[address, bytes as hex]`` a write, ``[address, None]`` a read of a
        word) in random batches handed to the master at once, a few idle cycles
        between; ``[response, word]`` of each (a write's word 0)."""
        answers: list[list[int]] = []
        k = 0
        while k < len(ops):
            batch = ops[k:k + self.rng.randint(1, 8)]
            k += len(batch)
            events = [self.master.init_read(address, 4) if data is None
                      else self.master.init_write(address, bytes.fromhex(data))
                      for address, data in batch]
            await with_timeout(Combine(*(e.wait() for e in events)),
                               _CYCLE_NS * (40 * len(events) + 100), "ns")
            answers += [[int(e.data.resp),
                         0 if data is not None else int.from_bytes(e.data.data, "little")]
                        for (_, data), e in zip(batch, events, strict=True)]
            for _ in range(self.rng.randrange(12)):
                await RisingEdge(self.dut.aclk)
        return answers

    async def run_program(self, program: dict) -> dict:
        """One program from reset: registers, streams, memory, a host's accesses while it
        runs; what the top did."""
        await self.reset()
        failures = await self.write_registers(program["writes"])
        memory = _Memory(program["first"], unpack_words(program["memory"]))
        for way in self.faults:
            self.faults[way] = set(program.get(f"{way}_faults", ()))
        if self.ram is not None:
            self.ram.write(4 * memory.first, _as_bytes(memory.words))
        if self.memory_master is not None:   # (the memory's window starts at ``first``)
            await self.memory_master.write(0, _as_bytes(memory.words))
        for n, source in enumerate(self.sources):
            for frame in _frames(program["inputs"].get(f"s2mm{n}", [])):
                source.send_nowait(AxiStreamFrame(frame))
        self.dut.pause.value = 0
        host = cocotb.start_soon(self.host_ops(program.get("ops", [])))
        seen = await self._ports.watch(memory, self.sources, program["bound"],
                                       host=host)
        if seen.pop("hang"):
            failures.append(f"hang: not done within {program['bound']} cycles")
        failures += memory.failures
        if host.done():
            answers = host.result()
        else:                                 # the hang above
            answers = []
            host.cancel()
        self.dut.pause.value = 1
        if self.ram is not None:
            memory.words = _from_bytes(self.ram.read(4 * memory.first, 4 * memory.words.size))
        if self.memory_master is not None:
            memory.words = _from_bytes(
                (await self.memory_master.read(0, 4 * memory.words.size)).data)
        registers = await self.read_registers(program["reads"])
        for n, sink in enumerate(self.sinks):
            failures += _sink_agrees(sink, seen["outputs"][f"mm2s{n}"], f"mm2s{n}")
        return {**seen, "memory": pack_words(memory.words), "registers": registers,
                "answers": answers, "failures": failures}


class BusFault(Exception):
    """An access the program marks as faulty: cocotbext-axi's slave answers it SLVERR."""


def _fail_on(ram: AxiRam, faults: dict[str, set[int]]) -> None:
    """Make ``ram``'s slave raise on the words of ``faults["read"]`` and
    ``faults["write"]`` (word addresses, looked up at each access)."""
    read, write = ram.read_if._read, ram.write_if._write

    async def faulty_read(address: int, length: int) -> bytes:
        if address // 4 in faults["read"]:
            raise BusFault(f"read of word {address // 4}")
        return await read(address, length)

    async def faulty_write(address: int, data: bytes) -> None:
        if address // 4 in faults["write"]:
            raise BusFault(f"write of word {address // 4}")
        await write(address, data)

    ram.read_if._read, ram.write_if._write = faulty_read, faulty_write


def _as_bytes(words: np.ndarray) -> bytes:
    return np.asarray(words, dtype="<u4").tobytes()


def _from_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype="<u4").astype(np.int64)


def _frames(beats: list) -> list[list[int]]:
    """The S2MM words ``[data, last]`` cut into frames at each TLAST (the program's last
    word has one, so no word is left out of a frame)."""
    frames, frame = [], []
    for data, last in beats:
        frame.append(data)
        if last:
            frames.append(frame)
            frame = []
    return frames + ([frame] if frame else [])


def _sink_agrees(sink: AxiStreamSink, words: list, name: str) -> list[str]:
    """The sink's whole frames against the words the bench saw move, up to the last
    TLAST (the sink keeps a frame without one to itself); the sink emptied."""
    taken = []
    while not sink.empty():
        taken += list(sink.recv_nowait().tdata)
    ends = [k for k, (_, last) in enumerate(words) if last]
    seen = [data for data, _ in words[:ends[-1] + 1]] if ends else []
    return [] if taken == seen else [f"{name}: the AxiStreamSink's frames {taken} are not "
                                     f"the words seen on the stream {seen}"]


class _Memory:
    """The program's memory: ``words`` from word address ``first``."""

    def __init__(self, first: int, words: np.ndarray) -> None:
        self.first, self.words = first, words.copy()
        self.failures: list[str] = []

    def _index(self, address: int, what: str) -> int | None:
        index = address - self.first
        if 0 <= index < self.words.size:
            return index
        if len(self.failures) < 10:
            self.failures.append(f"{what} at word address {address:#x}, outside the "
                                 f"program's {self.words.size} words from {self.first:#x}")
        return None

    def read(self, address: int) -> int:
        index = self._index(address, "read")
        return 0 if index is None else int(self.words[index])

    def write(self, address: int, word: int) -> None:
        index = self._index(address, "write")
        if index is not None:
            self.words[index] = word


class _Ports:
    """Every cycle's look at the channels' memory ports, streams and tokens."""

    def __init__(self, dut: object, channels: int, memory_ports: bool = True) -> None:
        self.dut = dut
        mm2s = ("mem_addr", "mem_en", "mem_data") if memory_ports else ()
        s2mm = ("mem_addr", "mem_data", "mem_we") if memory_ports else ()
        self.mm2s = [{name: getattr(dut, f"mm2s{n}_{name}") for name in
                      (*mm2s, "token", "token_controller")} for n in range(channels)]
        self.s2mm = [{name: getattr(dut, f"s2mm{n}_{name}") for name in
                      (*s2mm, "token", "token_controller")} for n in range(channels)]
        self.out = [{name: getattr(dut, f"m_axis_mm2s{n}_{name}") for name in
                     ("tdata", "tlast", "tvalid", "tready")} for n in range(channels)]
        self.into = [{name: getattr(dut, f"s_axis_s2mm{n}_{name}") for name in
                      ("tvalid", "tready")} for n in range(channels)]
        # The DMA's register port inside the top (public on Verilator and Icarus).
        self.registers = {name: getattr(dut, name) for name in
                          ("reg_write", "reg_read", "reg_addr", "reg_wdata")}
        for port in self.mm2s:
            if "mem_data" in port:
                port["mem_data"].value = 0

    def _register_access(self, cycle: int) -> list | None:
        """``[cycle, address, word]`` of a write on the DMA's register port in this
        cycle, ``[cycle, address, None]`` of a read, or None."""
        port = self.registers
        if port["reg_write"].value:
            return [cycle, int(port["reg_addr"].value), int(port["reg_wdata"].value)]
        if port["reg_read"].value:
            return [cycle, int(port["reg_addr"].value), None]
        return None

    async def watch(self, memory: _Memory, sources: list, bound: int,
                    host: object = None) -> dict:
        """Run until done (and the ``host`` task done) or ``bound`` cycles; what moved,
        by channel, with its cycle (cycle 0: the first with ``pause`` low), and the
        accesses on the register port."""
        names = [f"mm2s{n}" for n in range(len(self.mm2s))]
        words = {name: [] for name in names}
        cycles = {name: [] for name in names + [f"s2mm{n}" for n in range(len(self.s2mm))]}
        tokens = {name: [] for name in cycles}
        errors, idle, accesses = 0, 0, []
        for cycle in range(bound):
            await RisingEdge(self.dut.aclk)   # values read now are those of ``cycle``
            if host is not None and (access := self._register_access(cycle)) is not None:
                accesses.append(access)
            for n, port in enumerate(self.mm2s):
                address = (int(port["mem_addr"].value)
                           if "mem_en" in port and port["mem_en"].value else None)
                out = self.out[n]
                if out["tvalid"].value and out["tready"].value:
                    words[f"mm2s{n}"].append([int(out["tdata"].value), int(out["tlast"].value)])
                    cycles[f"mm2s{n}"].append(cycle)
                if port["token"].value:
                    tokens[f"mm2s{n}"].append(int(port["token_controller"].value))
                if address is not None:
                    port["mem_data"].value = memory.read(address)
            for n, port in enumerate(self.s2mm):
                if "mem_we" in port and port["mem_we"].value:
                    memory.write(int(port["mem_addr"].value), int(port["mem_data"].value))
                if self.into[n]["tvalid"].value and self.into[n]["tready"].value:
                    cycles[f"s2mm{n}"].append(cycle)
                if port["token"].value:
                    tokens[f"s2mm{n}"].append(int(port["token_controller"].value))
            errors += int(self.dut.error.value)
            sent = all(s.empty() and not s.active for s in sources)
            sent = sent and (host is None or host.done())
            idle = idle + 1 if sent and not self.dut.busy.value else 0
            if idle >= _IDLE_CYCLES:
                length, hang = cycle + 1, False
                break
        else:
            length, hang = bound, True
        return {"outputs": words, "cycles": cycles, "tokens": tokens, "error_cycles": errors,
                "length": length, "hang": hang, "accesses": accesses}


@cocotb.test()
async def axi_dma_programs(dut: object) -> None:
    """Every program of the configuration, each from reset; the result file gets what
    the top did in each, and the test fails on a failure the bench itself sees (a
    refused register write, a hang, a memory access outside the program's memory)."""
    config = json.loads(Path(os.environ[CONFIG_ENV]).read_text())
    tb = TB(dut, config)
    tb.set_pauses(config["pause"])
    pause_master(tb.master, tb.rng, config.get("axil_pause", 0))
    started = time.perf_counter()
    runs = []
    for program in config["programs"]:
        runs.append(await tb.run_program(program))
    seconds = time.perf_counter() - started
    result = {"kind": tb.kind, "seconds": seconds, "runs": runs}
    Path(os.environ[RESULT_ENV]).write_text(json.dumps(result))
    failures = [f for run in runs for f in run["failures"]]
    assert not failures, "\n".join(failures[:10])
