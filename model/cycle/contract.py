"""The cycle contract of the RTL: latencies, handshake rules and the RTL-facing facts.

This module is the written contract between the Amaranth RTL (``hdl/``) and the cycle
timing model of ``model/``: everything a timing model needs to predict the RTL cycle
by cycle is stated here, and the RTL is built to meet it (its tests check every rule
below on every cycle). It is pure Python; it never imports Amaranth.

Notation
--------
Cycle ``t`` is the interval that ends with rising clock edge ``t``. A signal's value
"in cycle ``t``" is its settled value just before that edge (what the edge samples).
A stream transfers a payload in cycle ``t`` when ``valid`` and ``ready`` are both high
in cycle ``t``. Every stream follows the Amaranth ``lib.stream`` rules: ``valid`` never
waits for ``ready``, and a payload holds (with ``valid`` high) until it is taken. After
reset every register below is empty and every count is 0; cycle 0 is the first cycle
after reset.

BD address generator (``hdl.addrgen.BDAddressGenerator``)
--------------------------------------------------------
Ports: ``i`` takes one BD per transfer (the fields of :func:`address_generation_fields`,
actual values); ``o`` gives one beat per transfer: ``address`` (word address modulo
``2**ADDRESS_BITS[kind]``), ``zero`` (a padding word: ``address`` is then 0) and
``last`` (the BD's final beat).

State: a chain of ``S = ADDRGEN_PREPARE_SLOTS`` *prepare* slots ``P[0] .. P[S-1]``,
then the *running* slot ``R``; each holds at most one BD. An accepted BD enters
``P[0]`` and passes down the chain, at most one slot per cycle, keeping its order with
the other BDs; the RTL spends these cycles on the BD's per-BD arithmetic (below). ``R``
executes one BD and has ``R.n >= 1`` beats left to give while it is valid. At most
``ADDRGEN_BD_SLOTS = S + 1`` BDs are held. With ``S = 1`` the chain is one holding
slot ``P = P[0]``.

The rules of cycle ``t`` (combinational on the registers and on ``o.ready``)::

    o.valid    = R.valid                   # never depends on o.ready
    take       = R.valid and o.ready       # a beat is transferred
    free       = not R.valid or (take and (R.n == 1 or cut))
    leave      = P[S-1].valid and (P[S-1].buffer_length == 0 or free)
    ready[S-1] = not P[S-1].valid or leave
    ready[s]   = not P[s].valid or ready[s+1]       # s = S-2 .. 0
    move[s]    = P[s].valid and ready[s+1]          # s = 0 .. S-2
    i.ready    = ready[0]                  # depends on o.ready (combinationally)

``ready[s]`` says slot ``s`` can take a BD at the edge (it is empty, or its BD passes
on); ``move[s]`` says ``P[s]`` passes its BD to ``P[s+1]``; ``leave`` says the last
slot empties. The updates at edge ``t``::

    if leave and P[S-1].buffer_length > 0:  R = (valid, n = P[S-1].buffer_length)
    elif take and (R.n == 1 or cut):        R.valid = 0
    elif take:                              R.n -= 1
    for every slot s:
        come = (i.valid and i.ready) if s == 0 else move[s-1]
        go   = move[s] if s < S-1 else leave
        if come:  P[s] = (valid, the BD on i if s == 0 else P[s-1]'s BD)
        elif go:  P[s].valid = 0

In words: a slot takes a BD when it is empty or passes its own on in the same cycle,
so a chain of full slots advances as one in the cycle the last slot empties, and
``i.ready`` follows ``o.ready`` combinationally through all ``S`` slots. The last slot
empties when the running slot is free (idle, or its last beat is taken in this cycle)
or when it holds a BD of ``buffer_length`` 0, which is dropped there. A BD loaded
into ``R`` at edge ``t`` shows its first beat in cycle ``t + 1``. ``cut`` is an input
(0 unless an S2MM channel finishes on TLAST: the beat taken now ends its BD, the
beats it had left are never given; docs/cycle.md "Channel").

Consequences (the tests check each, for ``S`` = 1, 2 and 3):

* Idle generator: a BD accepted in cycle ``c`` shows its first beat in cycle
  ``c + ADDRGEN_LATENCY`` (``= c + S + 1``: one cycle in each prepare slot, then
  ``R``).
* Beats within a BD: one per cycle while ``o.ready`` is high, whatever the pattern
  does (wraps, padding runs, the end of the buffer length mid-pattern).
* Chain order: with ``i.valid`` held high, BD ``k + 1`` enters every slot at the edge
  BD ``k`` leaves it, so it is in ``P[S-1]`` in the cycle right after BD ``k`` leaves
  ``P[S-1]``. (``P[0]`` is refilled at the edge it hands on, since ``i.ready`` is then
  high; and a slot holding BD ``k`` is ready exactly when BD ``k`` moves on, so BD
  ``k + 1``, one slot behind, moves with it.)
* Back to back: with ``i.valid`` and ``o.ready`` held high and every
  ``buffer_length >= 1`` (length 1 included), the first beat of BD ``k + 1`` comes in
  the cycle right after the last beat of BD ``k``: no bubble. By the chain order,
  BD ``k + 1`` waits in ``P[S-1]`` while BD ``k`` runs and is loaded into ``R`` at the
  edge BD ``k``'s last beat is taken.
* ``buffer_length`` 0: the BD is accepted (``i.ready`` as above), passes through the
  prepare slots like any BD, gives no beat and costs exactly one cycle of the last
  slot. Back to back (``i.valid`` and ``o.ready`` held high), a BD of ``a`` beats
  followed by ``k`` BDs of length 0 and then a BD of length >= 1 leaves
  ``max(0, k + 1 - a)`` empty cycles between the two non-empty BDs' beats, whatever
  ``S``: by the chain order the empty BDs leave ``P[S-1]`` at the ``k`` edges after
  the one that loads the ``a``-beat BD, and the next BD is loaded at the later of the
  edge after those and the edge of the ``a``-beat BD's last beat. From idle, ``k``
  leading BDs of length 0 delay the next BD's first beat by ``k`` cycles.

Per-BD values computed in the prepare slots (the RTL's structure, not part of the
interface): ``start = base_address + iteration_current * iteration_stepsize`` as a
tree of additions, one level per slot, the last slot holding ``start``; each
dimension's padded span ``before + wrap + after``; and the lowest dimension whose wrap
is not 1, with its stride. ``iteration_current`` is *used*, never written back:
advancing it is the BD's owner's job (docs/bd.md "Iteration",
:meth:`~aiedma.model.bd.descriptor.BufferDescriptor.next_iteration`).

MM2S datapath (``hdl.mm2s.MM2SDatapath``)
----------------------------------------
Ports: ``beats`` in (from the address generator), ``o`` out (``data`` 32 bits,
``last``), and a BRAM-style read port: ``mem_addr``/``mem_en`` out, ``mem_data`` in,
where ``mem_data`` in cycle ``t + 1`` is the word at ``mem_addr`` if ``mem_en`` was high
in cycle ``t`` (one cycle read latency; nothing is assumed about ``mem_data`` in other
cycles).

State: ``F`` (in flight: a beat accepted in the previous cycle, its word on
``mem_data`` now) and a buffer of ``B.count <= MM2S_BUFFER_DEPTH`` (2) words. Cycle ``t``::

    beats.ready = (B.count + F.valid) <= 1      # registers only: no combinational
                                                # path from o.ready to beats.ready
    mem_en      = beats.valid and beats.ready and not beats.payload.zero
    mem_addr    = beats.payload.address
    o.valid     = B.count > 0 or F.valid
    o.payload   = oldest of B, else F's word (data 0 if F is a zero beat, last = F's last)

At edge ``t`` the word shown is removed if taken; the in-flight word, if not shown or
not taken, joins the buffer; a beat accepted in ``t`` becomes ``F``. Words leave in
the order their beats came. A beat accepted in cycle ``c`` is on ``o`` from cycle
``c + MM2S_LATENCY`` (= ``c + 1``) when nothing is ahead of it. With ``o.ready`` and
``beats.valid`` held high the datapath moves one word per cycle; zero beats never
enable the read port and give ``data`` 0.

S2MM datapath (``hdl.s2mm.S2MMDatapath``)
----------------------------------------
Ports: ``i`` in (``data``, ``last``), ``beats`` in, and a write port ``mem_addr``,
``mem_data``, ``mem_we`` (a word is stored at the edge that ends a cycle with
``mem_we`` high). Cycle ``t``::

    i.ready = beats.valid;  beats.ready = i.valid        # a word and its address pair up
    join    = i.valid and beats.valid

A join in cycle ``t`` drives ``mem_we`` (unless the beat is a zero beat), ``mem_addr``,
``mem_data`` in cycle ``t + S2MM_WRITE_LATENCY`` (= ``t + 1``), so the word is in
memory after edge ``t + 1``. **decision**: a zero beat (padding exists on MM2S only)
consumes its data word and writes nothing; a channel clears the padding fields of an
S2MM BD before the address generator sees it. **decision**: the data stream's
``last`` does not end a BD (``buffer_length`` alone does); the datapath ignores it.

Channel (``model/system/channel.py``, ``hdl/channel/``)
------------------------------------------------------
A channel is a *fetch* stage, the *engine* (the address generator, a *lock gate* on
its ``o``, the MM2S or S2MM datapath: :mod:`.engine`), and a *stream stage*.

* **Fetch.** A task pushed to an idle channel is in its queue (depth 4). The fetch
  stage holds up to ``FETCH_DEPTH`` BDs, those fetched and not yet arrived included. In
  a cycle it holds fewer at the start of the cycle, it asks for the next BD of the
  running task (else of the next queued task): the question comes from registers, and
  does not wait for the address generator's answer in that cycle. A DMA's BD table has
  one fetch port: of the channels asking in a cycle, the first in channel order (MM2S
  0.., then S2MM 0..) after the channel served last (round robin; none served yet
  counts as the last channel served) fetches; the others keep their place (the next
  BD of a running task stays decided, a queued task stays queued) and ask again the
  next cycle. A fetch reads the BD from the BD table, checks it, and writes its
  ``iteration_current`` back (one walk: ``TaskWalk`` in ``model/bd/task.py``). A BD
  fetched in cycle ``t`` is offered on ``i`` from cycle ``t + BD_OFFER_LATENCY``, in
  fetch order, from the stage's own entries (the table's words show in
  ``t + BD_FETCH_LATENCY``). The next load (``use_next_bd`` / ``next_bd``, a repeat, or the task's
  end and the next queued task) is read from the fetched BD's own words, so it is
  known in ``t + BD_FETCH_LATENCY`` and a channel fetches at most every
  ``FETCH_INTERVAL`` cycles: a channel the port serves alone offers the BDs of a
  chain, of a repeat and of queued tasks back to back when they have two beats or
  more (the address generator's no-bubble rule carries over), one-beat BDs every
  other cycle; channels that ask in the same cycles share the port, one fetch a
  cycle in all.
* **Lock gate.** Between the generator's ``o`` and the datapath's ``beats``: ``first``
  (a register, set after reset and after a beat with ``last`` moves, cleared after
  any other beat moves) marks a BD's first beat. In cycle ``t``::

      d_ready      = beats.ready of the datapath (MM2S: registers; S2MM: i.valid)
      lock_request = o.valid and first and d_ready
      passes       = not first or lock_grant
      o.ready      = d_ready and passes        # the generator's o.ready
      beats.valid  = o.valid and passes

  ``lock_grant`` is high while the channel *holds* the lock of the BD at the gate
  (registers of the channel and of the lock unit, never a decision of the cycle).
  MM2S: the gate's ``i`` (the ``o`` of the rules above) is the generator's ``o``.
  **S2MM: a skid** (one beat,
  ``hdl.skid.SkidBuffer``) stands between them, because ``d_ready`` there is a
  word's arrival, late in the cycle, and the generator's ``o.ready`` fans out to
  every slot. In cycle ``t``, with ``K`` the skid's register (a beat, or empty) and
  ``D`` the register *dropping*::

      gate.i       = K if K is full, else the generator's o unless D (else nothing)
      gate.i.ready = the o.ready of the gate's rules above
      o.ready      = K is empty                # the generator's, a register
      cut          = D                         # the generator's cut input
      at the edge:   K = empty if K is full and gate.i moves
                     K = the generator's beat  if K is empty, not D, o.valid and it
                                               does not move
                     D = gate.i moves and its word has TLAST (finish on TLAST) and
                         the beat is not ``last``

  So the skid adds no cycle to a beat (an empty skid passes ``o`` through): the gate
  sees every beat in the cycle it would see it without one. What moves is the
  generator: it gives a beat into the skid in the first cycle the gate stalls and
  stops from the next, so its slots move, and ``i.ready`` rises, up to the whole
  stall earlier (a BD taken earlier frees a fetch stage entry earlier). A word with
  TLAST that ends its BD in cycle ``t`` (on a beat not its ``last``) drops the beats the
  generator still holds of that BD in ``t + 1``, the cycle ``R`` frees in; the next
  BD's first beat comes in ``t + 2`` at the earliest (one cycle later than without
  the skid, the price of keeping the stream's ``last`` off the generator's slots).
* **Lock requests.** At most one BD of a channel holds its lock or asks for it. At
  the end of cycle ``t``, when after the edge no BD would hold or ask, the next BD at
  the gate (one the engine took before ``t``; else a BD of length 0 that may run)
  *asks* if the BD ahead of it at the gate has at most ``LOCK_ASK_AHEAD`` beats left
  to pass after ``t`` and, when it releases, its channel will owe fewer than
  ``RELEASE_QUEUE_DEPTH`` releases after ``t`` (below). A BD without an acquire holds
  from ``t + 1`` at once; a BD with one sets the channel's request register (lock ID
  and value), shown from ``t + 1``. The tile's lock unit *tests* a request in each
  cycle it shows (not in the cycle its grant shows) and may *grant* it from the next:
  in cycle ``u``, of the channels whose request was tested in ``u - 1``, whose lock
  was not written at the end of ``u - 1`` (an acquire granted, a release applied, a
  register write) and whose acquire holds on the lock values at the start of ``u``,
  the first in channel order (MM2S 0.., then S2MM 0..) is granted (**one acquire a
  cycle per tile**), its lock takes its new value at the end of ``u``, and its grant
  register shows in ``u + 1``; a channel's request is not looked at in the cycle its
  grant shows, and drops at its end. A BD holds from the cycle its grant shows until
  its first beat passes the gate (a length-0 BD: until it completes). So a BD that
  asks in ``t`` with its lock free passes from ``t + LOCK_GRANT_LATENCY``: after a BD
  of ``LOCK_GRANT_LATENCY`` beats or more, the next BD's first beat follows its last
  beat with no bubble; after a shorter one it comes ``LOCK_GRANT_LATENCY - length``
  cycles late (the request starts in that BD's first cycle); a lock written at the
  end of ``t`` (released, or acquired by another channel) is granted again in
  ``t + 2`` at the earliest, so its next BD passes from ``t + 3``.
  **decision**: requests and grants are registers and a grant starts from the
  registers of the unit's test, so no path runs from one channel, or from the lock
  unit's decision, into another channel's logic in one cycle, and none from a lock's
  value through its test into the grant (docs/decisions.md); asking ahead keeps the
  no-bubble rule. A channel holds the lock of a BD only while the BD waits for the
  engine's own pipeline and at most ``LOCK_ASK_AHEAD`` beats of the BD ahead, never
  for a fetch or another lock.
* **Completion and release.** A BD is complete when its last memory access is done:
  MM2S in the cycle its last beat enters the datapath (the read port samples memory
  at that edge), S2MM ``S2MM_WRITE_LATENCY`` cycles after its last join (its last
  write). The end of its task (with the task's completion token) happens at the end
  of that cycle (``COMPLETION_LATENCY``), and its lock release joins the channel's
  release queue. **decision**: MM2S releases when the data has been read, not when
  it has left on the stream: the lock guards memory, and the words still in the
  datapath wait for nothing the lock holds.
* **Release port.** In cycle ``t`` the channels with a release queued (at the start
  of ``t``) ask for their tile's release port, except one whose release the unit
  applies in ``t``; the first in channel order has it: the unit keeps its queue's
  head in registers and applies it at the end of ``t + 1``, after that cycle's
  acquire, if the channel still asks (a channel reset drops it), so other channels
  see it from ``t + 2`` (two-phase cycles, ``model/system/scheduler.py``). **One
  release a cycle per tile**. The port's grant is a register: it shows in ``t + 2``,
  when the head leaves the queue and the release behind it asks in its place, so a
  channel can release every other cycle. A channel owes a release from its BD's first
  beat passing the gate (or a length-0 BD's completion) until the head leaves the
  queue, and owes at most ``RELEASE_QUEUE_DEPTH``.
* **Deadlock.** Between its first beat passing and its completion a BD holds its
  lock. The next BD's lock may be taken in that window only once the BD has at most
  ``LOCK_ASK_AHEAD`` beats left to pass; after its last beat the completion is a
  fixed number of cycles away (0 or ``S2MM_WRITE_LATENCY``) and waits for nothing,
  and the release then waits only for the release port and the unit's next cycle.
  So while a channel waits on
  anything outside it, it holds the locks the untimed order (acquire, move the words,
  release, next BD) holds at that point, plus, for at most ``LOCK_ASK_AHEAD`` beats
  of a BD, the lock of the BD after it: the one wait-for edge the timing adds is
  from that lock to the stream those beats wait on (MM2S: room, S2MM: a word). The
  hardware has the same edge: its MM2S takes the next BD's lock once the current
  BD's reads are issued, with its words still in the channel's FIFO.
* **Stream stage.** MM2S: a BD with ``enable_packet`` sends its header word in the
  first cycle, after its lock is granted, in which the stream has room (the
  datapath's ``o.ready`` is low in that cycle); TLAST is the datapath's ``last``
  unless ``tlast_suppress``. S2MM: the first word received for a BD with
  ``enable_packet`` is its header, checked and dropped (``i.valid`` is low for it);
  it is taken once every word of the BDs before has passed. S2MM ignores TLAST.
* **BDs of length 0** never enter the engine: once no earlier BD of the channel is
  incomplete, the BD asks for its lock (above) and completes in the first cycle it
  holds it (stall cause ``load``), leaving the fetch stage.
* **Latency**: an idle channel with a task in its queue in cycle ``c``, the fetch
  port and its lock free, moves its first word on its stream in cycle
  ``c + CHANNEL_LATENCY[direction]`` (MM2S: fetch, generator, read; S2MM: fetch,
  generator, then the join).

Compression
-----------
The compressor (MM2S, after the packet stage) and decompressor (S2MM, before it) of core
and memory tiles have their own cycle model, :mod:`.compression`, with its rules in its
docstring and docs/cycle.md "Compression"; their latencies are ``COMPRESS_LATENCY`` and
``DECOMPRESS_LATENCY``. With compression off no cycle above changes.

Addresses
---------
**decision**: the RTL computes addresses modulo ``2**ADDRESS_BITS[kind]`` (a hardware
counter's behaviour); :meth:`~aiedma.model.bd.descriptor.BufferDescriptor.stream` does not wrap,
so comparisons mask with :func:`wrap_addresses`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..arch.kinds import DMA_KINDS
from ..bd.fields import ADDRESS_DIMENSIONS, FIELDS, HAS_PADDING, Field

__all__ = [
    "ADDRESS_BITS",
    "ADDRGEN_BD_SLOTS",
    "ADDRGEN_LATENCY",
    "ADDRGEN_PREPARE_SLOTS",
    "BD_FETCH_LATENCY",
    "BD_OFFER_LATENCY",
    "CHANNEL_LATENCY",
    "COMPLETION_LATENCY",
    "COMPRESS_LATENCY",
    "DATA_BITS",
    "DECOMPRESS_LATENCY",
    "FETCH_DEPTH",
    "FETCH_INTERVAL",
    "LOCK_ASK_AHEAD",
    "LOCK_GRANT_LATENCY",
    "MM2S_BUFFER_DEPTH",
    "MM2S_LATENCY",
    "OUT_OF_ORDER_FETCH_LATENCY",
    "RELEASE_QUEUE_DEPTH",
    "S2MM_WRITE_LATENCY",
    "address_generation_fields",
    "load_word_offsets",
    "wrap_addresses",
]

ADDRGEN_PREPARE_SLOTS = 4
"""Prepare slots ``P[0] .. P[S-1]`` of the address generator before its running slot
(``S`` in the rules above). A constant of the design, not a knob: the RTL has the BD
as it came and one slot per level of the iteration offset's adder tree
(``hdl/addrgen_prepare.py``, which checks it against this value). The timing model
takes other depths only to test the rules above; tests derive every latency and cycle
number from this constant (through the constants below), never from its value."""

ADDRGEN_LATENCY = ADDRGEN_PREPARE_SLOTS + 1
"""Cycles from a BD accepted on ``i`` (cycle ``c``, idle generator) to its first beat
valid on ``o`` (cycle ``c + ADDRGEN_LATENCY``): one per prepare slot, one to load ``R``."""

ADDRGEN_BD_SLOTS = ADDRGEN_PREPARE_SLOTS + 1
"""BDs the address generator holds: one per prepare slot (``P[s]``), one running (``R``)."""

MM2S_LATENCY = 1
"""Cycles from an address beat accepted (cycle ``c``) to its data word valid on ``o``
(cycle ``c + MM2S_LATENCY``), with a read port of one cycle latency and nothing ahead."""

MM2S_BUFFER_DEPTH = 2
"""Words the MM2S datapath buffers so the word returning after a stall is not lost."""

S2MM_WRITE_LATENCY = 1
"""Cycles from a word/address join (cycle ``t``) to its write cycle (``mem_we`` high)."""

BD_FETCH_LATENCY = 2
"""Cycles from a BD fetched from the table (cycle ``t``) to the cycle its words show
(``t + BD_FETCH_LATENCY``), where the fetch walk reads them: the BD table is a block
RAM (one cycle of read latency) whose output is registered before any logic reads it."""

BD_OFFER_LATENCY = BD_FETCH_LATENCY + 1
"""Cycles from a BD fetched (cycle ``t``) to its offer on the address generator's ``i``
(cycle ``t + BD_OFFER_LATENCY``): the BD's words, shown in ``t + BD_FETCH_LATENCY``,
are written into the fetch stage's own entries, and the engine is offered the oldest
entry, never the table's words. So the engine's BD is one LUT from a memory of the
channel's own (no multiplexer of the whole BD between the table and the engine), and
no path runs from the shared table's output register into a channel's engine. Fetched
ahead, a running task's next BD waits in the entries, so this cycle shows only where a
BD arrives to a stage that has nothing else to offer (a task's start on an idle
channel, one-beat BDs)."""

FETCH_INTERVAL = BD_FETCH_LATENCY
"""Cycles from a channel's fetch (cycle ``t``) to the first cycle it may fetch again:
what a task loads next (``use_next_bd``, ``next_bd``, or the end of the task) is
read from the fetched BD's own words, which show in ``t + BD_FETCH_LATENCY``; the
walk decides the next fetch from them in that cycle. So the only path from one fetch
to the next is the block RAM's registered word through the walk's choice of address:
no table in flip-flops is read at an address decided in the same cycle. A chain or a
repeat of BDs of ``FETCH_INTERVAL`` beats or more still streams without a bubble
(:func:`load_word_offsets`)."""

FETCH_DEPTH = BD_FETCH_LATENCY
"""BDs a channel's fetch stage holds, fetched and not yet arrived included. It asks
for a fetch only while it holds fewer at the start of a cycle (no wait for the address
generator's answer); a BD on its way and one held keep a fetch every
``FETCH_INTERVAL`` cycles going, so BDs of ``FETCH_INTERVAL`` beats or more stream back
to back."""

OUT_OF_ORDER_FETCH_LATENCY = 1
"""An out-of-order S2MM (its control register's ``enable_out_of_order``): cycles from the
packet header taken off the stream (cycle ``h``) to the first cycle the channel may
fetch the BD it names (``h + OUT_OF_ORDER_FETCH_LATENCY``). The header's BD ID is
written into the fetch stage's registers, so the fetch port's address comes from a
register, as for every fetch, never from the stream's word in the same cycle. The BD is
then offered ``BD_OFFER_LATENCY`` cycles after its fetch: a packet's first data word is
written no earlier than ``h + 1 + BD_OFFER_LATENCY + ADDRGEN_LATENCY + 1``."""

CHANNEL_LATENCY: dict[str, int] = {
    "mm2s": BD_OFFER_LATENCY + ADDRGEN_LATENCY + MM2S_LATENCY,
    "s2mm": BD_OFFER_LATENCY + ADDRGEN_LATENCY,
}
"""Cycles from a task in an idle channel's queue (cycle ``c``) to its first word on the
channel's stream, when its lock is free and the stream is ready."""

COMPLETION_LATENCY: dict[str, int] = {"mm2s": 0, "s2mm": S2MM_WRITE_LATENCY}
"""Cycles from a BD's last beat entering the datapath to the cycle at whose end the BD
completes (its task ends, its lock release joins the channel's release queue)."""

LOCK_GRANT_LATENCY = 3
"""Cycles from a channel's decision to ask for a BD's lock (cycle ``t``) to the first
cycle the BD may pass the lock gate (``t + LOCK_GRANT_LATENCY``): the request is a
register of the channel (shown in ``t + 1``), the lock unit tests it in ``t + 1``,
grants it in ``t + 2`` when its lock was not written at the end of ``t + 1``, and its
grant is a register of the lock unit (shown in ``t + 3``)."""

LOCK_ASK_AHEAD = LOCK_GRANT_LATENCY - 1
"""A BD asks for its lock once the BD ahead of it at the gate has at most this many
beats left to pass after the cycle, so a free lock is held by the cycle after that
BD's last beat: no bubble at the boundary of BDs of ``LOCK_GRANT_LATENCY`` beats or
more."""

RELEASE_QUEUE_DEPTH = 3
"""Lock releases a channel may owe: BDs past the lock gate (or length-0 BDs past the
fetch stage) whose release the lock unit has not applied yet. A BD that releases
passes the gate only while its channel owes fewer. Three keep one channel's BDs from
waiting for the queue, one beat each (one every ``FETCH_INTERVAL`` cycles) included,
when no other channel's release waits."""

COMPRESS_LATENCY = 2
"""MM2S with compression in effect (``model/cycle/compression.py``): cycles from a block's
last word taken by the compressor (cycle ``t``, into its input register; it joins the
block in ``t + 1``) to its mask on the stream (``t + 2`` when the compressor's drain is
free); its packed words follow one a cycle. A word without compression passes the
compressor in its cycle (no latency) when it holds no word."""

DECOMPRESS_LATENCY = 2
"""S2MM with decompression in effect: cycles from a block's mask taken off the stream
(cycle ``t``) to the block's first word offered to the packet stage and engine from the
decompressor's output register (``t + 2``, when its packed bytes have come); the next
mask is taken once the block's last word has left the register. A word without
decompression passes in its cycle when the decompressor holds no word."""

DATA_BITS = 32
"""Width of a stream word."""

ADDRESS_BITS: dict[str, int] = {name: k.address_bits for name, k in DMA_KINDS.items()}
"""Word-address width per kind, from :mod:`..arch.kinds` (the BD field table checks at
import that every ``base_address`` is this wide); generated addresses wrap modulo
``2**ADDRESS_BITS[kind]``."""


def address_generation_fields(kind: str) -> tuple[Field, ...]:
    """The fields of ``FIELDS[kind]`` the address generator needs, in table order.

    These are ``base_address``, ``buffer_length``, every ``dK_stepsize`` and
    ``dK_wrap``, the ``dK_zero_before/after`` padding fields where the kind has them,
    and ``iteration_current``, ``iteration_wrap``, ``iteration_stepsize``.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}

    Returns
    -------
    tuple of Field
        The selected rows of the BD field table, in the table's order.
    """
    n = ADDRESS_DIMENSIONS[kind]
    names = {"base_address", "buffer_length",
             "iteration_current", "iteration_wrap", "iteration_stepsize"}
    names |= {f"d{k}_stepsize" for k in range(n)}
    names |= {f"d{k}_wrap" for k in range(n - 1)}
    if HAS_PADDING[kind]:
        names |= {f"d{k}_zero_{side}" for k in range(n - 1) for side in ("before", "after")}
    fields = tuple(f for f in FIELDS[kind] if f.name in names)
    missing = names - {f.name for f in fields}
    if missing:
        raise AssertionError(f"{kind} field table lacks {sorted(missing)}")
    return fields


def load_word_offsets(lengths: Sequence[int]) -> list[int]:
    """The cycles of a channel's words after its first, for the loads (BDs, or passes of
    a repeated BD) of one task, of ``lengths`` beats, that nothing else holds back (locks
    free, the stream ready, and few enough loads fetched ahead to fit the fetch stage and
    the address generator's slots).

    Load ``k`` is fetched ``FETCH_INTERVAL`` cycles after load ``k - 1`` and offered
    as many cycles after its fetch as the first, so it starts at offset
    ``max(end of load k - 1, FETCH_INTERVAL * k)``: loads shorter than the interval
    leave bubbles, unless longer loads before them gave the fetch a head start.

    Parameters
    ----------
    lengths : sequence of int
        Beats of each load, in order, each at least 1 (a length-0 BD waits for the BDs
        before it to complete, a rule of its own).

    Returns
    -------
    list of int
        One offset per word, the first 0.

    Raises
    ------
    ValueError
        For a length below 1.

    Examples
    --------
    >>> load_word_offsets([FETCH_INTERVAL, 1, 1])[-1] == FETCH_INTERVAL * 2
    True
    >>> load_word_offsets([3 * FETCH_INTERVAL, 1])[-1] == 3 * FETCH_INTERVAL
    True
    """
    offsets, end = [], 0
    for k, length in enumerate(lengths):
        if length < 1:
            raise ValueError(f"lengths[{k}]={length}: a load has at least one beat")
        start = max(end, FETCH_INTERVAL * k)
        offsets += [start + beat for beat in range(length)]
        end = start + length
    return offsets


def wrap_addresses(kind: str, stream: np.ndarray) -> np.ndarray:
    """A model stream as the RTL shows it: addresses modulo ``2**ADDRESS_BITS[kind]``.

    Parameters
    ----------
    kind : {"tile", "memtile", "shim"}
    stream : numpy.ndarray
        Word addresses from :meth:`~aiedma.model.bd.descriptor.BufferDescriptor.stream`,
        ``-1`` for a zero word.

    Returns
    -------
    numpy.ndarray
        int64 addresses reduced modulo the address width; ``-1`` stays ``-1``.
    """
    stream = np.asarray(stream, dtype=np.int64)
    return np.where(stream < 0, -1, stream & ((1 << ADDRESS_BITS[kind]) - 1))
