"""The RTL task queue against the model channel's queue rules: depth 4, order, overflow and
its write-1-to-clear."""

import random
from collections import deque

from amaranth.sim import Simulator

from aiedma.hdl.task_queue import TaskQueue
from aiedma.model import Task
from aiedma.model.system.channel import TASK_QUEUE_DEPTH


def test_the_task_queue_keeps_order_flags_a_fifth_push_and_clears_the_flag():
    rng = random.Random(3)
    dut = TaskQueue()
    log = {"overflows": 0, "pops": 0, "clears": 0}

    async def bench(ctx):
        model: deque[Task] = deque()
        overflow = False
        for cycle in range(400):
            push = rng.random() < 0.5
            task = Task(rng.randrange(48), rng.randint(1, 256), rng.random() < 0.5)
            pop = rng.random() < 0.35
            clear = rng.random() < 0.05
            ctx.set(dut.push, push)
            ctx.set(dut.clear_overflow, clear)
            ctx.set(dut.word, task.encode())
            ctx.set(dut.o.ready, pop)
            assert ctx.get(dut.size) == len(model), cycle
            assert ctx.get(dut.o.valid) == bool(model), cycle
            if model:
                head = model[0]
                got = ctx.get(dut.o.payload)
                assert (got.start_bd, got.repeat + 1, got.token) == (
                    head.start_bd, head.repeat_count, head.enable_token_issue), cycle
            # The model's order: a push checks the queue as the cycle found it.
            if clear:   # a push onto a full queue in the same cycle wins
                overflow = False
                log["clears"] += 1
            if push:
                if len(model) >= TASK_QUEUE_DEPTH:
                    overflow = True
                    log["overflows"] += 1
                else:
                    model.append(task)
            if pop and ctx.get(dut.o.valid):
                model.popleft()
                log["pops"] += 1
            await ctx.tick()
            assert bool(ctx.get(dut.overflow)) == overflow, cycle

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert log["overflows"] and log["clears"] and log["pops"] > 50, log
