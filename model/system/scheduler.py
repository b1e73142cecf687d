"""The cycle-level scheduler: every agent moves at most one word per cycle, until done or stuck.

An *agent* is anything that moves words: a DMA channel (:mod:`.channel`), a stream
element or end point (:mod:`.stream`), a kernel. Each cycle the scheduler calls
``step(cycle)`` on every agent in a fixed order, then ``commit()`` on every agent
and every stream the agents use (:class:`Agent`). ``step`` returns None when a
word moved, else a :class:`Stall` saying why not.

The run ends when no agent is busy (every task done). If a whole cycle passes in
which no agent moved a word or changed its state, the next cycle would be the
same, for ever: that is a deadlock, raised as :class:`DeadlockError` listing every
busy agent, its BD and what it waits for (the lock's ID, value and wanted value).

Decisions (the spec leaves timing to the model):

* **decision**: two-phase cycles, so the order of agents does not change the result
  (except which of two channels acquiring the same lock in the same cycle wins: the
  one stepped first). A word pushed into a stream in cycle ``t`` can be popped in
  ``t + 1``; space freed in ``t`` can be filled in ``t + 1``; a lock released in
  ``t`` can be acquired in ``t + 1``.
* **decision**: every agent gets exactly one entry per cycle, a word or a stall
  cause, so ``words + sum(stalls) == cycles`` for each agent in the report.
* **decision**: words still in streams when everything is done are not an error
  here; the report lists them (``stranded``) and callers that care check it.

The fast path (:func:`run_system` unless ``exact=True``; docs/cycle.md "Fast path"):
when the control state of every agent and the fill of every stream at the end of
a cycle equal those at the end of the cycle before, every agent will repeat its
last cycle's action (the same word move or the same stall) until one of its
counters reaches a threshold: the end of a BD's beats, a kernel buffer filled, a
source's last word, a sink's ready pattern changing, a lock release due. Each
agent says at which cycle that comes, its next *event* (:meth:`Steady.next_event`),
and the run jumps to the earliest event at once, moving the words in bulk, with the
same outputs, memory, cycle count and report as stepping every cycle; the event
cycle itself is stepped. Only agents that describe their steady state take part
(:class:`Steady`); one agent that does not (an RTL engine, a packet switch) keeps
the whole run stepping cycle by cycle.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import AiedmaError, field_error
from .locks import LockWait

__all__ = [
    "STALL_CAUSES",
    "STALL_MEANINGS",
    "Agent",
    "DeadlockError",
    "FastPlan",
    "Periodic",
    "Stall",
    "Steady",
    "SystemReport",
    "SystemRun",
    "report_legend",
    "run_system",
]

STALL_MEANINGS: dict[str, str] = {
    "lock": "waiting to acquire a lock",
    "empty": "its input stream has no word",
    "backpressure": "its output stream is full",
    "load": "it loaded a BD that moves no word (buffer_length 0)",
    "idle": "it has nothing to do",
}
"""Each stall cause and what it means (the legend of :meth:`SystemReport.text`)."""

STALL_CAUSES: tuple[str, ...] = tuple(STALL_MEANINGS)
"""Why an agent moved no word in a cycle (see :data:`STALL_MEANINGS`)."""


def report_legend() -> str:
    """The legend of a :meth:`SystemReport.text` table: what each column counts."""
    causes = "; ".join(f"{cause}: {meaning}" for cause, meaning in STALL_MEANINGS.items())
    return ("columns: words = words the agent moved; the others count the cycles in which "
            f"it moved none, by cause ({causes})")


@dataclass(frozen=True, init=False)
class Stall:
    """Why an agent moved no word this cycle.

    Attributes
    ----------
    cause : str
        One of :data:`STALL_CAUSES`.
    bd : int or None
        The BD the channel is running, if any.
    lock : LockWait or None
        The lock it waits on (cause ``"lock"``).
    progress : bool
        The agent still changed state (loaded a BD, acquired a lock) though no
        word moved; the scheduler needs this to tell a stall from a deadlock. An
        agent that the run told the cycle has made progress already (see
        :class:`Agent`, ``share_progress``) may set it without finding out.
    detail : str
        Anything else worth saying (e.g. which stream is empty).
    """

    cause: str
    bd: int | None = None
    lock: LockWait | None = None
    progress: bool = False
    detail: str = ""

    def __init__(self, cause: str, bd: int | None = None, lock: LockWait | None = None,
                 progress: bool = False, detail: str = "") -> None:
        if cause not in STALL_CAUSES:
            raise field_error(AiedmaError, "cause", cause,
                              f"must be one of {', '.join(STALL_CAUSES)}")
        # Frozen: the generated __init__ sets each field through object.__setattr__;
        # the instance dict takes them at a third of the cost (a channel makes a Stall
        # in most of its stepped cycles).
        fields_ = self.__dict__
        fields_["cause"], fields_["bd"], fields_["lock"] = cause, bd, lock
        fields_["progress"], fields_["detail"] = progress, detail

    def __str__(self) -> str:
        text = {"lock": "waits on", "empty": "waits for input", "load": "loads a BD",
                "backpressure": "waits for output space", "idle": "idle"}[self.cause]
        if self.lock is not None:
            text += f" {self.lock}"
        if self.detail:
            text += f" ({self.detail})"
        if self.bd is not None:
            text = f"BD {self.bd}: {text}"
        return text


class Agent(Protocol):
    """What the scheduler needs of a word-moving component."""

    name: str

    @property
    def busy(self) -> bool:
        """True while it has work left (a task, a packet half through, ...)."""
        ...

    def step(self, cycle: int) -> Stall | None:
        """Move at most one word; None if one moved, else why not."""
        ...

    def commit(self) -> None:
        """End of cycle: make this cycle's deferred effects (lock releases) visible."""
        ...

    def ports(self) -> Sequence:
        """The streams it pushes to or pops from (the scheduler commits them)."""
        ...

    # Optional: ``share_progress(flag)``, called once by :class:`SystemRun` with a
    # one-element list whose item is true, while the agents of a cycle are stepped,
    # once one of them moved a word or made progress (a Protocol cannot say optional).


NEVER = sys.maxsize
"""A :meth:`Steady.next_event` that never comes (a stall nothing of its own ends)."""


@dataclass
class FastPlan:
    """What one agent does over a jump of many cycles (see :class:`Steady`).

    Attributes
    ----------
    push : callable, optional
        Moves the words it pushes in the jump into its streams (called first, for
        every agent, so consumers find them).
    pop : callable, optional
        Takes the words it pops in the jump (called after every ``push``).
    reads, writes : list of (Memory, numpy.ndarray)
        The memory words it reads or writes in the jump, so the scheduler can refuse
        a jump in which two agents touch the same word (their order would matter).
    """

    push: Callable[[], None] | None = None
    pop: Callable[[], None] | None = None
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)


@runtime_checkable
class Steady(Protocol):
    """What an agent implements to take part in the fast path.

    The scheduler calls these at the end of a cycle ``last`` (after every commit),
    knowing what the agent did in that cycle (a word, or a stall and its cause).
    """

    def steady_state(self) -> Hashable | None:
        """Its control state: everything that decides what it does next, except the
        counters that advance at a steady rate (positions, fills) and the data; None
        when it cannot say (then no jump happens)."""
        ...

    def next_event(self, last: int, moved: bool) -> int:
        """The first cycle after ``last`` in which it may not repeat what it did in
        ``last`` (``moved``: it moved a word), because one of its own counters reaches
        a threshold there; ``last + 1`` if the very next, :data:`NEVER` if nothing of
        its own ends it (a stall that only another agent's event ends)."""
        ...

    def plan(self, cycles: int, moved: bool) -> FastPlan | None:
        """The jump of ``cycles`` cycles (ending before its next event), or None to
        refuse it (e.g. a memory address it would fault on: stepping raises that
        error)."""
        ...


class Periodic(Protocol):
    """What jumps whole periods of a run (``aiedma.model.system.periodic``)."""

    def after_cycle(self, run: SystemRun) -> bool:
        """Called after each stepped cycle on the fast path; True if it jumped."""
        ...


@dataclass(frozen=True)
class SystemReport:
    """What a run did.

    Attributes
    ----------
    cycles : int
        Cycles until every agent was done.
    words : dict of str to int
        Words moved per agent.
    stalls : dict of str to dict of str to int
        Per agent, cycles without a word by cause (:data:`STALL_CAUSES`).
    stranded : dict of str to int
        Words left in streams at the end (streams that ended empty are left out).
    """

    cycles: int
    words: dict[str, int]
    stalls: dict[str, dict[str, int]]
    stranded: dict[str, int] = field(default_factory=dict)

    @property
    def stall_totals(self) -> dict[str, int]:
        """Stall cycles by cause, summed over agents (``idle`` included)."""
        totals = dict.fromkeys(STALL_CAUSES, 0)
        for causes in self.stalls.values():
            for cause, n in causes.items():
                totals[cause] += n
        return totals

    def text(self) -> str:
        """A table a person can read: one line per agent."""
        width = max([len("agent"), *(len(n) for n in self.words)])
        head = f"{'agent':<{width}}  {'words':>7}" + "".join(f"  {c:>12}" for c in STALL_CAUSES)
        lines = [f"{self.cycles} cycles", head]
        for name, words in self.words.items():
            stalls = self.stalls[name]
            lines.append(f"{name:<{width}}  {words:>7}"
                         + "".join(f"  {stalls.get(c, 0):>12}" for c in STALL_CAUSES))
        for name, n in self.stranded.items():
            lines.append(f"stranded: {n} word(s) left in {name}")
        return "\n".join(lines)


class DeadlockError(AiedmaError):
    """Nothing can move but work is left.

    Attributes
    ----------
    cycle : int
        The first cycle in which nothing moved.
    waits : dict of str to Stall
        Every busy agent and why it waits.
    report : SystemReport
        The statistics up to the deadlock.
    status : dict of str to int
        The status register (``model/arch/registers.py``) of every waiting agent that has
        one (a DMA channel's ``status_word``), as the hardware would show it then.
    """

    def __init__(self, cycle: int, waits: dict[str, Stall], report: SystemReport,
                 status: dict[str, int] | None = None) -> None:
        self.cycle, self.waits, self.report = cycle, waits, report
        self.status = dict(status or {})
        lines = [f"{name}: {stall}" for name, stall in waits.items()]
        super().__init__(f"deadlock at cycle {cycle}: nothing can move and "
                         f"{len(waits)} agent(s) wait:\n  " + "\n  ".join(lines))


class SystemRun:
    """A run of agents, one :meth:`cycle` at a time (what :func:`run_system` loops over).

    A runner that interleaves something with the cycles (an RTL simulator's clock
    edge, :mod:`aiedma.tb.system.loop`) calls :meth:`cycle` while :attr:`busy`, then
    :meth:`report`.

    Parameters
    ----------
    agents : iterable of Agent
        Stepped in this order every cycle.
    max_cycles : int
        A guard against runaway runs.
    exact : bool
        Step every cycle (True), or let :meth:`advance` jump steady stretches
        (the fast path, see the module text). :meth:`cycle` always steps one.
    periodic : Periodic, optional
        On the fast path, asked after every stepped cycle whether it jumped whole
        periods (``aiedma.model.system.periodic.PeriodicJump``, which ``Graph.run``
        gives).
    """

    JUMP_RETRY = 32
    """Cycles stepped one by one after a refused jump before the next try."""

    def __init__(self, agents: Iterable[Agent], max_cycles: int = 10_000_000,
                 exact: bool = True, periodic: Periodic | None = None) -> None:
        self.agents = list(agents)
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise field_error(AiedmaError, "agents", twice, "agent names must be unique")
        self.max_cycles = max_cycles
        self.streams = list({id(s): s for a in self.agents for s in a.ports()}.values())
        self.words = dict.fromkeys(names, 0)
        self.stalls: dict[str, dict[str, int]] = {n: {} for n in names}
        self._rows = [(a, self.stalls[a.name]) for a in self.agents]   # looked up once
        self.cycles = 0
        self.exact = exact
        self.jumps = 0              # fast-path jumps taken
        self.jumped = 0             # cycles they covered
        self._moved: list[bool] = []
        self._causes: list[str | None] = []
        self._shape: tuple | None = None
        self._retry = 0
        self._steady = (not exact and all(isinstance(a, Steady) for a in self.agents))
        self._periodic = periodic if self._steady else None
        # Whether the cycle being stepped has made progress yet (a word moved, a stall
        # with progress), shared with the agents that ask for it (``share_progress``):
        # once it is true the cycle is no deadlock, and an agent need not find out
        # whether it changed state itself (a channel compares its whole state for that).
        self._progress = [False]
        for agent in self.agents:
            share = getattr(agent, "share_progress", None)
            if share is not None:
                share(self._progress)

    @property
    def busy(self) -> bool:
        """Some agent has work left."""
        for agent in self.agents:   # asked before every cycle: a loop, not a generator
            if agent.busy:
                return True
        return False

    def cycle(self) -> None:
        """Run one cycle: step every agent, then commit agents and streams.

        Raises
        ------
        DeadlockError, AiedmaError
            As :func:`run_system`.
        """
        cycle = self.cycles
        if cycle >= self.max_cycles:
            raise field_error(AiedmaError, "max_cycles", self.max_cycles,
                              "the run did not finish within this many cycles")
        progress = False
        shared = self._progress
        shared[0] = False
        moved, kinds, words = self._moved, self._causes, self.words
        moved.clear()
        kinds.clear()
        stalls = []
        for agent, causes in self._rows:
            stall = agent.step(cycle)
            stalls.append(stall)
            if stall is None:
                moved.append(True)
                kinds.append(None)
                words[agent.name] += 1
                progress = shared[0] = True
                continue
            cause = stall.cause
            moved.append(False)
            kinds.append(cause)
            causes[cause] = causes.get(cause, 0) + 1
            if stall.progress:
                progress = shared[0] = True
        shared[0] = False   # an agent stepped outside a cycle finds out for itself
        for agent in self.agents:
            agent.commit()
        for stream in self.streams:
            stream.commit()
        self.cycles += 1
        if not progress:
            # Nothing moved or changed in the cycle, so who is busy now was busy at its
            # start: asked only here, not of every agent in every cycle.
            waiting = [(agent, stall) for agent, stall in zip(self.agents, stalls, strict=True)
                       if agent.busy]
            status = {agent.name: agent.status_word() for agent, _ in waiting
                      if hasattr(agent, "status_word")}
            raise DeadlockError(cycle, {agent.name: stall for agent, stall in waiting},
                                self.report(), status)

    def advance(self) -> None:
        """One :meth:`cycle`, then, on the fast path, a jump over a steady stretch.

        Raises
        ------
        DeadlockError, AiedmaError
            As :func:`run_system`.
        """
        self.cycle()
        if not self._steady:
            return
        if self._periodic is not None and self._periodic.after_cycle(self):
            return
        if self._retry:
            self._retry -= 1
            self._shape = None
            return
        shape = self._control_state()
        before, self._shape = self._shape, shape
        if shape is None or shape != before:
            return
        self._jump()

    def _control_state(self) -> tuple | None:
        # What the agents did is no part of it: a cycle that starts from the control
        # state another started from does what that one did (counters aside, which the
        # events cover), whatever the cycle before did.
        states = [agent.steady_state() for agent in self.agents]
        if None in states:
            return None
        states.append(tuple([len(s) for s in self.streams]))
        return tuple(states)

    def _jump(self) -> None:
        """Jump every agent to the cycle before the earliest event: every cycle up to it
        repeats the last one for every agent."""
        last = self.cycles - 1
        event = self.max_cycles   # the guard's cycle is stepped, and raises there
        for agent, moved in zip(self.agents, self._moved, strict=True):
            event = min(event, agent.next_event(last, moved))
            if event <= last + 1:
                return
        n = event - last - 1
        plans = []
        for agent, moved in zip(self.agents, self._moved, strict=True):
            plan = agent.plan(n, moved)
            if plan is None:
                self._retry = self.JUMP_RETRY
                return
            plans.append(plan)
        if _touch_same_word(plans):
            self._retry = self.JUMP_RETRY
            return
        for plan in plans:
            if plan.push is not None:
                plan.push()
        for plan in plans:
            if plan.pop is not None:
                plan.pop()
        for stream in self.streams:
            stream.settle()   # words a jump pushed as an array and nobody popped
        for agent, cause in zip(self.agents, self._causes, strict=True):
            if cause is None:
                self.words[agent.name] += n
            else:
                self.stalls[agent.name][cause] += n
        self.cycles += n
        self.jumps += 1
        self.jumped += n
        self._shape = None   # the next jump needs two steady cycles after this one

    def report(self) -> SystemReport:
        """The statistics so far."""
        return SystemReport(self.cycles, self.words, self.stalls, _stranded(self.streams))


def run_system(agents: Iterable[Agent], max_cycles: int = 10_000_000,
               exact: bool = False, periodic: Periodic | None = None) -> SystemReport:
    """Run agents cycle by cycle until none is busy.

    Parameters
    ----------
    agents : iterable of Agent
        Stepped in this order every cycle.
    max_cycles : int
        A guard against runaway runs.
    exact : bool
        Step every single cycle. By default steady stretches are jumped (the fast
        path, see the module text): same outputs, memory, cycles and report.
    periodic : Periodic, optional
        On the fast path, what may jump whole periods (:class:`SystemRun`).

    Returns
    -------
    SystemReport

    Raises
    ------
    DeadlockError
        When a cycle passes in which nothing moved or changed while some agent is
        busy; lists every busy agent and what it waits on.
    AiedmaError
        Anything an agent raises (a memory access outside a memory, a lock
        overflow, a BD with ``valid_bd = 0``, ...), as it is raised.
    """
    run = SystemRun(agents, max_cycles, exact=exact, periodic=periodic)
    while run.busy:
        run.advance()
    return run.report()


def _touch_same_word(plans: Sequence[FastPlan]) -> bool:
    """Two plans write one word, or one writes a word another reads (or it twice)."""
    reads: dict[int, list] = {}
    writes: dict[int, list] = {}
    for plan in plans:
        for memory, offsets in plan.reads:
            reads.setdefault(id(memory), []).append(offsets)
        for memory, offsets in plan.writes:
            writes.setdefault(id(memory), []).append(offsets)
    for key, written in writes.items():
        every = np.concatenate(written)
        if not _distinct(every):
            return True
        if key in reads and _meet(np.concatenate(reads[key]), every):
            return True
    return False


def _distinct(offsets: np.ndarray) -> bool:
    """No offset twice: one pass for a rising run (a BD's walk, the usual case), else a sort."""
    if offsets.size < 2 or (np.diff(offsets) > 0).all():
        return True
    return np.unique(offsets).size == offsets.size


def _meet(read: np.ndarray, written: np.ndarray) -> bool:
    """Some offset is in both; ranges apart (ping-pong buffers) are told without a search."""
    if not read.size or not written.size:
        return False
    if read.max() < written.min() or read.min() > written.max():
        return False
    return bool(np.isin(read, written).any())


def _stranded(streams: Sequence) -> dict[str, int]:
    return {s.name: len(s) for s in streams if len(s)}
