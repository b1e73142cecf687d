"""A host's register accesses while a DMA's channels run, and how to check them with the model.

:func:`random_host_ops` draws the AXI4-Lite reads and writes a host makes while a random
stream program (:func:`~.stream_programs.random_stream_program`) runs: reads of every
register role (the program's BD words, controls, status, lock values, write counts,
now and then a count FIFO pop or a start queue), writes that leave the program's outcome to the
hardware's rules (a lock no BD names, a BD the program does not use, a BD word or a
control word written again as it is, a status word, a read-only register), and the
accesses no register takes: an unmapped address, or a write of part of a word. The
program still ends and still reads and writes only its own memory, so the bench's
checks hold; *what* the program does may change (a status write, a pop), and the model
is told exactly that.

:func:`host_timed_writes` turns what reached the DMA's register port in each cycle
(the bench's record) into the model's timed accesses (``run_dma``'s ``timed_writes``),
after checking each op's response against the bus rules
(:func:`~aiedma.model.arch.register_map.access_taken`) and that the port saw exactly
the ops taken, in their order. The runner then gives the model those accesses in the
same cycles, and every word a read returned must be the model's word in that cycle.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ...model.arch.kinds import DMA_KINDS
from ...model.arch.register_map import (
    ALL_BYTES,
    WORD_BYTES,
    access_taken,
    register_at,
    registers,
    role_access,
)
from ...model.bd.descriptor import BufferDescriptor
from ...model.bd.fields import FIELD_INDEX, WORDS
from ..common.stimulus import unmapped_address
from .random_programs import WritesProgram

__all__ = ["HOST_OKAY", "HOST_SLVERR", "HostOp", "host_timed_writes", "random_host_ops"]

HOST_OKAY, HOST_SLVERR = 0, 2
"""AXI responses: taken, refused."""

HostOp = tuple[int, bytes | None]
"""``(byte address, bytes to write)``, or ``(address, None)``: a read of a word."""

_READ_ROLES = ("bd", "control", "status", "lock_value", "write_count")


def _bd_images(program: WritesProgram) -> dict[int, list[int]]:
    """The words of each BD the program writes, by BD number."""
    images: dict[int, list[int]] = {}
    for address, value in program.writes:
        register = register_at(program.kind, address)
        if register is not None and register.role == "bd":
            images.setdefault(register.index, [0] * WORDS[program.kind])[register.word] = value
    return images


def _named_locks(program: WritesProgram, images: dict[int, list[int]]) -> set[int]:
    """The tile's own locks (0-based) any of the program's BDs names."""
    own = DMA_KINDS[program.kind].lock_window("own").start
    named = set()
    for words in images.values():
        bd = BufferDescriptor.decode_stored(program.kind, words)
        named.update((bd.lock_acq_id - own, bd.lock_rel_id - own))
    return named


def _controls(program: WritesProgram) -> dict[int, int]:
    """Every channel's control register address -> the word the program leaves in it."""
    words = {r.address: 0 for r in registers(program.kind) if r.role == "control"}
    for address, value in program.writes:
        if address in words:
            words[address] = value
    return words


def _word(value: int) -> bytes:
    return int(value).to_bytes(WORD_BYTES, "little")


def random_host_ops(program: WritesProgram, count: int, seed: int) -> list[HostOp]:
    """``count`` random accesses a host makes while ``program`` runs (see the module).

    Parameters
    ----------
    program : WritesProgram
        A stream program: its locks are counts of passes and its channels read and
        write their own words, which the writes drawn here leave so.
    count : int
    seed : int
        The same program, count and seed, the same accesses.
    """
    rng, kind = random.Random(seed), program.kind
    images = _bd_images(program)
    named = _named_locks(program, images)
    controls = _controls(program)
    by_role: dict[str, list] = {}
    for register in registers(kind):
        by_role.setdefault(register.role, []).append(register)
    free_locks = [r for r in by_role["lock_value"] if r.index not in named]
    spare_bds = [r for r in by_role["bd"] if r.index not in images]
    own_bds = [r for r in by_role["bd"] if r.index in images]
    (iteration,) = FIELD_INDEX[kind]["iteration_current"].slices
    # A used BD's word written again as it is; not the word the fetch writes back
    # (written again, it would restart the iteration count).
    again = [(r.address, images[r.index][r.word]) for r in by_role["bd"]
             if r.index in images and r.word != iteration.word]

    def read() -> HostOp:
        draw = rng.random()
        if draw < 0.05:
            return unmapped_address(rng, kind), None
        if draw < 0.08 and "fot_count" in by_role:     # pops the channel's count FIFO
            return rng.choice(by_role["fot_count"]).address, None
        if draw < 0.10:                                  # reads 0
            return rng.choice(by_role["start_queue"]).address, None
        role = rng.choice([r for r in _READ_ROLES if r in by_role])
        # A BD the program does not write holds what the last one left (a reset of
        # the top keeps the table, as the hardware's): not the model's to say.
        pool = own_bds if role == "bd" else by_role[role]
        return rng.choice(pool).address, None

    def write() -> HostOp:
        draw = rng.random()
        if draw < 0.08:
            return unmapped_address(rng, kind), rng.randbytes(WORD_BYTES)
        if draw < 0.16:                                  # part of a register's word
            address = rng.choice(registers(kind)).address
            offset = rng.randrange(WORD_BYTES)
            length = rng.randint(1, WORD_BYTES - offset) if offset else rng.randint(1, 3)
            return address + offset, rng.randbytes(length)
        choices = [("lock", free_locks), ("spare", spare_bds), ("again", again),
                   ("control", list(controls)), ("status", by_role["status"]),
                   ("read_only", by_role.get("write_count", []))]
        what, pool = rng.choice([(w, p) for w, p in choices if p])
        if what == "lock":
            return rng.choice(pool).address, _word(rng.randrange(64))
        if what == "spare":      # a BD no task loads stays a never-written (zero) slot
            return rng.choice(pool).address, _word(0)
        if what == "again":
            address, value = rng.choice(pool)
            return address, _word(value)
        if what == "control":
            address = rng.choice(pool)
            return address, _word(controls[address])
        return rng.choice(pool).address, rng.randbytes(WORD_BYTES)

    return [read() if rng.random() < 0.6 else write() for _ in range(count)]


def _strobe(address: int, data: bytes) -> int:
    """The byte strobes of a write of ``data`` at ``address`` (AXI: the bytes it covers)."""
    return ((1 << len(data)) - 1) << address % WORD_BYTES & ALL_BYTES


def host_timed_writes(kind: str, ops: Sequence[HostOp], answers: Sequence[Sequence[int]],
                      accesses: Sequence[Sequence[int | None]]
                      ) -> tuple[list[tuple[int, int, int | None]], list[int], list[str]]:
    """The model's timed accesses for what the top's register port did, checked.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    ops : sequence of HostOp
    answers : sequence of (response, word)
        The top's answer to each op (a write's word is 0).
    accesses : sequence of (cycle, address, word or None)
        Each write (a word) and read (None) on the DMA's register port, in cycle order.

    Returns
    -------
    timed : list of (cycle, address, word or None)
        The port's accesses, for ``run_dma``: the writes that change something and the
        reads that give something (the slave answers a write to a read-only register
        and a read of a start queue itself).
    read_ops : list of int
        For each read in ``timed``, in order, the index of the op it answers (when the
        port's reads are those taken).
    problems : list of str
        Each response that breaks the bus rules, and any difference between the ops
        taken and the port's accesses (empty when all agree).
    """
    problems: list[str] = []
    taken_writes, taken_reads = [], []
    for k, ((address, data), (response, word)) in enumerate(zip(ops, answers, strict=True)):
        write = data is not None
        taken = access_taken(kind, address, write=write,
                             strobe=_strobe(address, data) if write else ALL_BYTES)
        want = HOST_OKAY if taken else HOST_SLVERR
        if response != want:
            problems.append(f"op {k}: {'write' if write else 'read'} at {address:#x} answered "
                            f"{response}, the bus rules say {want}")
        if not taken:
            if not write and word != 0:
                problems.append(f"op {k}: a refused read at {address:#x} gave {word:#x}, not 0")
            continue
        aligned = address & ~(WORD_BYTES - 1)
        access = role_access(register_at(kind, aligned).role)
        if write and access.writable:
            taken_writes.append((aligned, int.from_bytes(data, "little")))
        elif not write and access.readable:
            taken_reads.append((aligned, k))
        elif not write and word != 0:
            problems.append(f"op {k}: a read of the write-only register {aligned:#x} gave "
                            f"{word:#x}, not 0")
    # The port sees a write that changes something and a read that gives something.
    port_writes = [(a, w) for _, a, w in accesses if w is not None]
    port_reads = [a for _, a, w in accesses if w is None]
    if port_writes != taken_writes:
        problems.append(f"the register port's writes {port_writes} are not the writes taken "
                        f"{taken_writes}")
    if port_reads != [a for a, _ in taken_reads]:
        problems.append(f"the register port's reads {port_reads} are not the reads taken "
                        f"{[a for a, _ in taken_reads]}")
    timed = [(cycle, address, word) for cycle, address, word in accesses]
    return timed, [k for _, k in taken_reads], problems
