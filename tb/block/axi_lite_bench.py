"""cocotb tests of an ``aiedma_axi_dma_<kind>`` top's AXI4-Lite slave against the model.

Run by :mod:`.axi_lite_runner` (never imported by the rest of ``tb/``): the
configuration comes as JSON in a file named by :data:`CONFIG_ENV` and the verdict goes to
the file named by :data:`RESULT_ENV`.

A cocotbext-axi ``AxiLiteMaster`` drives the slave, with a random pause generator on
each of its five channels (AW, W and AR sources pause their ``valid``, the B and R
sinks their ``ready``). The DMA's ``pause`` is held high, so no channel takes a BD and
every register changes only by a host's write; the golden model is
:class:`~aiedma.model.system.register_bank.RegisterBank`.

:func:`axi_lite_fuzz` issues random batches: a batch's writes and reads are all
handed to the master at once, so they go back to back (the master keeps them queued),
reads beside writes. Writes are in order on AXI, reads in order, but a read and a write
of one batch have no order between them, so a batch reads only registers its writes
do not change (not their addresses, nor the status of a channel whose queue they push or
whose control they write).
Each write's response and each read's response and word are compared with the golden
model's, a batch must end within a bound of cycles (no hang), and a last sweep reads
every register back. Writes go to registers (with random words), to addresses no
register has, and with partial strobes; reads go to registers of every role (start
queues read 0), to unmapped and to unaligned addresses.

:func:`unmapped_addresses_answer_slverr` and :func:`partial_strobes_answer_slverr` are
the two error rules, directed, each followed by read-backs that show nothing changed;
:func:`back_to_back_one_a_cycle` measures the cycles of 64 writes and then 64 reads with
no pause.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import Combine, RisingEdge, SimTimeoutError, with_timeout
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.register_map import register_at, registers
from ...model.system.register_bank import RegisterBank
from ..common.stimulus import unmapped_address
from .axi_common import pause_master, reset_top

CONFIG_ENV = "AIEDMA_AXIL_CONFIG"
RESULT_ENV = "AIEDMA_AXIL_RESULT"

OKAY, SLVERR = 0, 2
_CYCLE_NS = 10
_CYCLES_PER_OP = 40      # a generous bound: a transaction takes 3 cycles, pauses add some


class TB:
    """The bench: clock, reset, the DMA's other inputs held, the master, the golden model."""

    def __init__(self, dut: object, config: dict) -> None:
        self.dut, self.config = dut, config
        self.kind = config["kind"]
        self.rng = random.Random(config["seed"])
        self.bank = RegisterBank(self.kind)
        self.cycle = 0
        self.failures: list[str] = []
        self.counts: dict[str, int] = {}
        cocotb.start_soon(Clock(dut.aclk, _CYCLE_NS, unit="ns").start())
        cocotb.start_soon(self._count_cycles())
        self._hold_other_inputs()
        self.master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.aclk,
                                    dut.aresetn, reset_active_level=False)

    async def _count_cycles(self) -> None:
        while True:
            await RisingEdge(self.dut.aclk)
            self.cycle += 1

    def _hold_other_inputs(self) -> None:
        """Every input but the AXI4-Lite port: streams idle, memory data 0 (an AXI4
        master's inputs 0), ``pause`` high."""
        dut, dma = self.dut, DMA_KINDS[self.kind]
        if hasattr(dut, "m_axi_arvalid"):
            for name in ("awready", "wready", "bid", "bresp", "bvalid", "arready", "rid",
                         "rdata", "rresp", "rlast", "rvalid"):
                getattr(dut, f"m_axi_{name}").value = 0
        for n in range(dma.channels):
            getattr(dut, f"m_axis_mm2s{n}_tready").value = 0
            if hasattr(dut, f"mm2s{n}_mem_data"):
                getattr(dut, f"mm2s{n}_mem_data").value = 0
            for port in ("tdata", "tvalid", "tlast"):
                getattr(dut, f"s_axis_s2mm{n}_{port}").value = 0
        if len(dma.windows) > 1:
            for p in range(2 * dma.channels):
                for side in ("acquire", "release"):
                    getattr(dut, f"neighbour_{side}__{p}__grant").value = 0
        dut.pause.value = 1

    async def reset(self) -> None:
        await reset_top(self.dut)

    def set_pauses(self, probability: float) -> None:
        """A random pause generator on each channel (0: none)."""
        pause_master(self.master, self.rng, probability)

    def check(self, what: str, got: object, want: object) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1
        if got != want and len(self.failures) < 20:
            self.failures.append(f"{what}: got {got!r}, model {want!r}")

    async def batch(self, writes: list, reads: list) -> None:
        """Hand every write (address, bytes) and read (address) to the master at once,
        wait for all within the bound, and compare with the golden model."""
        before = {address: self.bank.read(address & ~3) for address in reads}
        write_events = [self.master.init_write(a, data) for a, data in writes]
        read_events = [self.master.init_read(a, 4 - a % 4) for a in reads]
        events = write_events + read_events
        if not events:
            return
        bound = _CYCLE_NS * (_CYCLES_PER_OP * len(events) + 100)
        await with_timeout(Combine(*(e.wait() for e in events)), bound, "ns")
        for (address, data), event in zip(writes, write_events, strict=True):
            offset = address % 4     # the golden model takes them in AXI's write order
            taken = self.bank.write(address, int.from_bytes(data, "little") << 8 * offset,
                                    strobe=((1 << len(data)) - 1) << offset)
            self.check(_label("write", self.kind, address, len(data)),
                       int(event.data.resp), OKAY if taken else SLVERR)
        for address, event in zip(reads, read_events, strict=True):
            taken, word = before[address]
            self.check(_label("read", self.kind, address, 4),
                       (int(event.data.resp), int.from_bytes(event.data.data, "little")),
                       (OKAY if taken else SLVERR, word >> 8 * (address % 4)))


def _label(op: str, kind: str, address: int, length: int) -> str:
    """The check's bin: the op, the role it reaches, and why it is refused."""
    register = register_at(kind, address & ~3)
    if register is None:
        return f"{op} unmapped"
    if op == "write" and length != 4:
        return f"{op} partial strobe"
    return f"{op} {register.role}{' unaligned' if address % 4 else ''}"


def _by_role(kind: str) -> list[list]:
    """The registers of each role (and direction), so a draw reaches every role alike."""
    roles: dict[tuple, list] = {}
    for register in registers(kind):
        roles.setdefault((register.role, register.direction), []).append(register)
    return list(roles.values())


def _random_register(tb: TB, mapped: list[list]) -> int:
    return tb.rng.choice(tb.rng.choice(mapped)).address


def _random_write(tb: TB, mapped: list[list]) -> tuple[int, bytes]:
    rng = tb.rng
    mapped_one = rng.random() < 0.75
    address = _random_register(tb, mapped) if mapped_one else unmapped_address(rng, tb.kind)
    if rng.random() < 0.1:          # part of a word: 1-3 bytes inside it
        offset = rng.randrange(4)
        length = rng.randint(1, 4 - offset) if offset else rng.randint(1, 3)
        return address + offset, rng.randbytes(length)
    return address, rng.randbytes(4)


def _changed_by(kind: str, writes: list) -> set[int]:
    """The addresses a batch's writes may change: their own, and the status of a channel
    whose queue they push or whose control they write (a reset empties the queue)."""
    changed = set()
    for address, _ in writes:
        register = register_at(kind, address & ~3)
        if register is None:
            continue
        changed.add(register.address)
        if register.role in ("start_queue", "control"):
            changed.update(r.address for r in registers(kind) if r.role == "status"
                           and (r.direction, r.index) == (register.direction, register.index))
    return changed


def _random_read(tb: TB, mapped: list[list], changed: set[int]) -> int | None:
    rng = tb.rng
    for _ in range(8):
        mapped_one = rng.random() < 0.8
        address = _random_register(tb, mapped) if mapped_one else unmapped_address(rng, tb.kind)
        if address in changed:
            continue
        if rng.random() < 0.05:
            address += rng.randrange(1, 4)      # unaligned: the low bits are dropped
        return address
    return None


def _config() -> dict:
    return json.loads(Path(os.environ[CONFIG_ENV]).read_text())


async def _run(dut: object, body: Callable[[TB], Awaitable[dict | None]]) -> TB:
    """Reset, run ``body(tb)``, write the result file (a hang is a failure in it), and
    fail the cocotb test on any failure."""
    tb = TB(dut, _config())
    await tb.reset()
    started = time.perf_counter()
    try:
        extra = await body(tb)
    except SimTimeoutError:
        tb.failures.append(f"hang: a batch did not end within its bound (cycle {tb.cycle})")
        extra = None
    except AssertionError as error:
        tb.failures.append(f"{error}")
        extra = None
    seconds = time.perf_counter() - started
    transactions = sum(tb.counts.values())
    result = {"kind": tb.kind, "transactions": transactions, "cycles": tb.cycle,
              "seconds": seconds, "transactions_per_second": transactions / max(seconds, 1e-9),
              "counts": dict(sorted(tb.counts.items())), "failures": tb.failures,
              **(extra or {})}
    Path(os.environ[RESULT_ENV]).write_text(json.dumps(result, indent=1))
    assert not tb.failures, "\n".join(tb.failures)
    return tb


@cocotb.test()
async def axi_lite_fuzz(dut: object) -> None:
    """Random back-to-back batches under random pauses, then a sweep of every register."""
    async def body(tb: TB) -> None:
        tb.set_pauses(tb.config["pause"])
        done, mapped = 0, _by_role(tb.kind)
        while done < tb.config["transactions"]:
            writes = [_random_write(tb, mapped) for _ in range(tb.rng.randint(0, 12))]
            changed = _changed_by(tb.kind, writes)
            reads = [a for a in (_random_read(tb, mapped, changed)
                                 for _ in range(tb.rng.randint(0, 12))) if a is not None]
            await tb.batch(writes, reads)
            done += len(writes) + len(reads)
        sweep = [r.address for r in registers(tb.kind)]
        for k in range(0, len(sweep), 32):
            await tb.batch([], sweep[k:k + 32])

    await _run(dut, body)


@cocotb.test()
async def unmapped_addresses_answer_slverr(dut: object) -> None:
    """Writes and reads of unmapped addresses: SLVERR each, and every register still 0."""
    async def body(tb: TB) -> None:
        tb.set_pauses(0.3)
        addresses = [unmapped_address(tb.rng, tb.kind) for _ in range(64)]
        await tb.batch([(a, tb.rng.randbytes(4)) for a in addresses], addresses)
        await tb.batch([], [r.address for r in registers(tb.kind)])
        assert tb.counts["write unmapped"] == tb.counts["read unmapped"] == len(addresses), \
            tb.counts

    await _run(dut, body)


@cocotb.test()
async def partial_strobes_answer_slverr(dut: object) -> None:
    """Every partial strobe on a register of every role: SLVERR, and the register as it was."""
    async def body(tb: TB) -> None:
        tb.set_pauses(0.3)
        mapped = registers(tb.kind)
        targets = [tb.rng.choice([r for r in mapped if r.role == role]).address
                   for role in ("bd", "lock_value", "start_queue", "status")]
        await tb.batch([(a, bytes([0xA5, 0x5A, 0xFF, 0x3C])) for a in targets], [])
        partial = [(a + offset, tb.rng.randbytes(length)) for a in targets
                   for offset in range(4) for length in range(1, 5 - offset)
                   if (offset, length) != (0, 4)]
        await tb.batch(partial, [])
        await tb.batch([], [r.address for r in mapped])
        assert tb.counts["write partial strobe"] == len(partial)

    await _run(dut, body)


@cocotb.test()
async def back_to_back_one_a_cycle(dut: object) -> None:
    """64 writes, then 64 reads, with no pause: the cycles each stream takes."""
    async def body(tb: TB) -> dict:
        mapped = [r.address for r in registers(tb.kind) if r.role in ("bd", "lock_value")]
        figures = {}
        for name, writes, reads in (
                ("writes", [(a, tb.rng.randbytes(4)) for a in mapped[:64]], []),
                ("reads", [], mapped[:64])):
            first = tb.cycle
            await tb.batch(writes, reads)
            figures[f"{name}_cycles"] = tb.cycle - first
        # 64 transactions, a few cycles of latency and of the master's at each end
        if max(figures.values()) > 64 + 8:
            tb.failures.append(f"not one a cycle: {figures}")
        return figures

    await _run(dut, body)
