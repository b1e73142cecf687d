"""AIE-ML semaphore locks: every acquire/release rule, errors, lock-ID routing."""

import pytest

from aiedma.model.system.locks import (
    LOCK_VALUE_MAX,
    LOCKS_PER_TILE,
    LockError,
    LockTable,
    LockWait,
    lock_space,
    wanted_text,
)


def table(value, count=16):
    return LockTable("t", count, {0: value})


@pytest.mark.parametrize(("start", "acquire", "ok", "after"), [
    # V < 0: wait until lock >= -V, then lock += V
    (0, -1, False, 0), (1, -1, True, 0), (5, -2, True, 3), (1, -2, False, 1),
    (63, -63, True, 0), (62, -63, False, 62),
    # V >= 0: wait until lock == V, value unchanged
    (0, 0, True, 0), (1, 0, False, 1), (3, 3, True, 3), (4, 3, False, 4), (63, 63, True, 63),
])
def test_acquire_rules(start, acquire, ok, after):
    locks = table(start)
    assert locks.can_acquire(0, acquire) is ok
    assert locks[0] == start, "can_acquire changes nothing"
    assert locks.try_acquire(0, acquire) is ok
    assert locks[0] == after


@pytest.mark.parametrize(("start", "release", "after"), [
    (0, 1, 1), (5, 3, 8), (62, 1, 63), (5, -5, 0), (5, -2, 3), (7, 0, 7),
])
def test_release_adds_and_zero_releases_nothing(start, release, after):
    locks = table(start)
    locks.release(0, release)
    assert locks[0] == after


def test_release_overflow_is_an_error_not_a_wrap():
    locks = table(60)
    with pytest.raises(LockError, match=r"^lock_rel_value=4: lock 0 of t is 60; 60 \+ 4 = 64 "
                                        r"overflows 0..63; channel c, BD 2$"):
        locks.release(0, 4, "channel c, BD 2")
    assert locks[0] == 60, "a failed release changes nothing"


def test_release_underflow_is_an_error_not_a_wrap():
    locks = table(1)
    with pytest.raises(LockError, match=r"^lock_rel_value=-2: lock 0 of t is 1; 1 - 2 = -1 "
                                        r"underflows 0..63$"):
        locks.release(0, -2)
    assert locks[0] == 1


def test_an_acquire_that_can_never_succeed_is_an_error():
    with pytest.raises(LockError, match=r"^lock_acq_value=-64: waits for lock 0 of t >= 64, "
                                        r"which a lock \(0..63\) never reaches; channel c, BD 1"):
        table(63).try_acquire(0, -64, "channel c, BD 1")


@pytest.mark.parametrize(("call", "message"), [
    (lambda t: t.try_acquire(16, -1), r"^lock_id=16: t has locks 0..15"),
    (lambda t: t.release(-1, 1), r"^lock_id=-1: t has locks 0..15"),
    (lambda t: t.try_acquire(0, 64), r"^lock_acq_value=64: must be in -64..63"),
    (lambda t: t.release(0, -65), r"^lock_rel_value=-65: must be in -64..63"),
    (lambda t: t.set(0, 64), r"^value=64: a lock holds 0..63 \(lock 0 of t\)"),
    (lambda t: t.set(0, -1), r"^value=-1: a lock holds 0..63"),
])
def test_lock_argument_errors(call, message):
    with pytest.raises(LockError, match=message):
        call(table(0))


def test_lock_wait_describes_what_an_acquire_waits_for():
    locks = table(2)
    wait = locks.wait(0, -3)
    assert wait == LockWait(0, "t", 0, 2, -3)
    assert wait.wanted == ">= 3"
    assert str(wait) == "lock 0 (t lock 0) = 2, wants >= 3"
    assert wanted_text(0) == "== 0"


def test_resources():
    assert LOCK_VALUE_MAX == 63
    assert LOCKS_PER_TILE == {"tile": 16, "memtile": 64, "shim": 16}


def test_memory_tile_lock_ids_route_west_own_east():
    west, own, east = (LockTable(n, 64) for n in ("west", "own", "east"))
    space = lock_space("memtile", "memtile(1,1)", own, west, east)
    for lock_id, (expected, local) in {0: (west, 0), 63: (west, 63), 64: (own, 0),
                                       100: (own, 36), 127: (own, 63), 128: (east, 0),
                                       191: (east, 63)}.items():
        got, got_local = space.route(lock_id)
        assert got is expected and got_local == local
    space.release(130, 5)
    assert east[2] == 5
    assert space.try_acquire(130, -5) and east[2] == 0
    assert space.wait(66, -1) == LockWait(66, "own", 2, 0, -1)
    with pytest.raises(LockError, match=r"^lock_id=192: memtile\(1,1\) has lock IDs 0-63 west, "
                                        r"64-127 own, 128-191 east; channel c, BD 0"):
        space.route(192, "channel c, BD 0")


def test_a_missing_neighbour_has_no_locks():
    space = lock_space("memtile", "memtile(0,1)", LockTable("own", 64))
    with pytest.raises(LockError, match=r"^lock_id=3: IDs 0-63 of memtile\(0,1\) are the west "
                                        r"neighbour's locks, and there is none"):
        space.try_acquire(3, -1)


def test_core_tile_and_shim_lock_ids_are_their_own():
    for kind in ("tile", "shim"):
        space = lock_space(kind, kind, LockTable(kind, 16))
        assert space.route(15)[1] == 15
        with pytest.raises(LockError, match=rf"^lock_id=16: {kind} has lock IDs 0-15 own"):
            space.route(16)


@pytest.mark.parametrize(("args", "message"), [
    (("tile", "t", LockTable("x", 64)), r"^locks=64: the own table x of a tile has 16 locks"),
    (("tile", "t", LockTable("x", 16), LockTable("w", 16)),
     r"^kind='tile': only a memory-tile DMA reaches its neighbours' locks"),
    (("core", "t", LockTable("x", 16)), r"^kind='core': must be one of tile, memtile, shim"),
])
def test_lock_space_errors(args, message):
    with pytest.raises(LockError, match=message):
        lock_space(*args)


def test_one_acquire_a_cycle_per_table():
    table = LockTable("t", 4, {1: 3, 2: 1})
    assert not table.try_acquire(2, -2, cycle=7), "one that cannot hold takes no turn"
    assert table.try_acquire(1, -1, cycle=7)
    assert not table.try_acquire(1, -1, cycle=7), "a second acquire in the same cycle"
    assert not table.try_acquire(2, -1, cycle=7), "of another lock of the table too"
    assert table[1] == 2 and table[2] == 1
    assert table.try_acquire(1, -1, cycle=8) and table[1] == 1
    # Without a cycle (untimed), only the value decides.
    assert table.try_acquire(1, -1) and table[1] == 0


def test_the_release_port_goes_to_the_first_asking_in_a_cycle():
    table = LockTable("t", 4)
    assert table.take_release_port(7)
    assert not table.take_release_port(7), "one release a cycle"
    assert table.take_release_port(8)
    own, east = LockTable("own", 64), LockTable("east", 64)
    space = lock_space("memtile", "dma", own, east=east)
    assert space.take_release_port(130, 9) and space.take_release_port(70, 9), \
        "each table has its own port"
    assert not east.take_release_port(9)


def test_a_read_in_a_cycle_gives_the_lock_as_it_stood_at_the_start_of_that_cycle():
    """A host's read in cycle c sees neither the acquire granted in c nor the release or
    the write applied at its end (the RTL's register port reads the lock unit's value
    register); from c + 1 on it sees them."""
    table = LockTable("t", 4, {1: 3})
    assert table.try_acquire(1, -1, cycle=5)
    table.release(1, 2, cycle=5)
    assert table.value_at_start(1, 5) == 3 and table[1] == 4
    assert table.value_at_start(1, 6) == 4
    table.set(2, 7, cycle=6)
    assert table.value_at_start(2, 6) == 0 and table.value_at_start(2, 7) == 7
    assert table.value_at_start(3, 6) == 0          # never written
