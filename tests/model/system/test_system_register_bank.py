"""The golden register bank of a paused DMA (model/system/register_bank.py)."""

from aiedma.model.arch.registers import (
    COMPRESSION_FIELDS,
    CONTROL_FIELDS,
    STATUS_FIELDS,
    control_address,
    lock_value_address,
    start_queue_address,
    status_address,
)
from aiedma.model.system.register_bank import RegisterBank


def field(word, name):
    lsb, width = STATUS_FIELDS[name]
    return word >> lsb & ((1 << width) - 1)


def test_words_locks_and_refusals():
    bank = RegisterBank("memtile")
    assert bank.write(0xA0004, 0xDEADBEEF) and bank.read(0xA0004) == (True, 0xDEADBEEF)
    assert bank.write(lock_value_address("memtile", 5), 0x1FF)
    assert bank.read(lock_value_address("memtile", 5)) == (True, 0x3F)
    assert not bank.write(0xA0008, 1, strobe=0x3) and bank.read(0xA0008) == (True, 0)
    assert bank.read(0xB0000) == (False, 0) and not bank.write(0xB0000, 1)


def test_the_queue_fills_and_overflows_and_the_queue_reads_0():
    bank = RegisterBank("tile")
    queue, status = start_queue_address("tile", "s2mm", 1), status_address("tile", "s2mm", 1)
    assert bank.read(status) == (True, 0)
    sizes = []
    for _ in range(5):
        assert bank.write(queue, 0x1234)
        sizes.append(bank.read(status)[1])
    assert [field(w, "task_queue_size") for w in sizes] == [1, 2, 3, 4, 4]
    assert [field(w, "task_queue_overflow") for w in sizes] == [0, 0, 0, 0, 1]
    assert field(sizes[0], "status") == 2 and field(sizes[0], "channel_running") == 1
    assert bank.read(queue) == (True, 0)
    # AM025's write-1-to-clear: only a 1 in task_queue_overflow changes the status
    overflow = 1 << STATUS_FIELDS["task_queue_overflow"][0]
    assert bank.write(status, 0xFFFF_FFFF ^ overflow) and bank.read(status) == (True, sizes[-1])
    assert bank.write(status, overflow) and bank.read(status) == (True, sizes[-1] ^ overflow)


def test_without_compressors_the_enables_read_0():
    for direction in ("mm2s", "s2mm"):
        address = control_address("memtile", direction, 2)
        enable = 1 << CONTROL_FIELDS["memtile", direction][COMPRESSION_FIELDS[direction]][0]
        full, lite = RegisterBank("memtile"), RegisterBank("memtile", compression=False)
        for bank in (full, lite):
            assert bank.write(address, enable | 0x5A00)
        assert full.read(address) == (True, enable | 0x5A00)
        assert lite.read(address) == (True, 0x5A00)   # the controller ID as written
