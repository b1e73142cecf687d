"""Sweeps split by seed, run on a Dask cluster: all local cores by default.

A *shard* is one call ``fn(seed, *rest)``; a sweep is a list of such calls, its work split
into shards by :func:`shard_sizes`. Dask's
distributed scheduler runs the shards (:func:`run_shards`): without a scheduler
address on a :class:`~dask.distributed.LocalCluster` of one single-threaded worker
process per core, with one (``tcp://host:port``) on that cluster, whose workers
must have this package installed and see the same file system paths. Results
come back in shard order; a shard that raises is reported with its seed rather
than stopping the sweep.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["SHARD_SEED_STEP", "ShardResult", "run_forked", "run_shards", "shard_progress",
           "shard_seed", "shard_sizes"]


SHARD_SEED_STEP = 100_000
"""Seed distance between the shards of one kind: see :func:`shard_seed`."""


def shard_seed(seed: int, kind_index: int, shard: int = 0) -> int:
    """The seed of shard ``shard`` of a sweep's ``kind_index``-th kind, from base ``seed``.

    ``seed * 1000 + kind_index + shard * SHARD_SEED_STEP``: each kind has its own seeds,
    and shard 0 keeps the kind's base seed, so a sweep of one shard is the unsharded run.
    """
    return seed * 1000 + kind_index + shard * SHARD_SEED_STEP


def shard_sizes(total: int, shards: int) -> list[int]:
    """``total`` items (BDs, programs) split into at most ``shards`` shards, as evenly as
    can be: the first ``total % shards`` shards take one more, and no shard is empty.

    Shard ``i`` of a sweep is the ``i``-th size; each sweep gives its shards their seeds
    (consecutive seed ranges, or seeds a fixed step apart).
    """
    if shards < 1:
        raise ValueError(f"shards={shards}: must be at least 1")
    sizes = [total // shards + (i < total % shards) for i in range(shards)]
    return [size for size in sizes if size]


@dataclass(frozen=True)
class ShardResult:
    """One shard's outcome: its seed, and its value or the error it raised."""

    seed: int
    value: Any = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


def shard_progress(describe: Callable[[ShardResult], str]) -> Callable[[ShardResult], None]:
    """An ``on_result`` printer: a failed shard by its seed and error, any other as
    ``describe(result)`` says, one line each as the shards arrive."""

    def report(result: ShardResult) -> None:
        line = (f"shard seed {result.seed}: FAILED: {result.error}" if result.failed
                else describe(result))
        print(f"  {line}", flush=True)

    return report


def _call(fn: Callable[..., Any], call: tuple) -> ShardResult:
    """Run one shard on a worker; an exception becomes the shard's error, with its seed."""
    seed = call[0]
    try:
        return ShardResult(seed, fn(*call))
    except Exception as error:   # any failure is the shard's result, named by its seed
        lines = traceback.format_exception_only(type(error), error)
        return ShardResult(seed, error="".join(lines).strip())


def run_forked(fn: Callable[..., Any], calls: Sequence[tuple],
               jobs: int | None = None) -> list[ShardResult]:
    """``fn(*call)`` for every call on ``jobs`` processes forked from this one; the
    results in the order of ``calls``.

    For sweeps of seconds, where a Dask cluster's start (seconds: fresh interpreters
    that import the package and load every library again) would cost more than the
    sweep: a forked worker starts in milliseconds with what this process has loaded
    (Verilated libraries, exported Verilog, elaborated designs). ``jobs`` defaults to
    every core; with one job, or one call, the calls run here. Linux only (``fork``).

    Raises
    ------
    ValueError
        ``jobs`` below 1.
    """
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs={jobs}: must be at least 1 (None: every core)")
    jobs = min(jobs or os.cpu_count() or 1, len(calls))
    if jobs <= 1:
        return [_call(fn, call) for call in calls]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return pool.starmap(_call, [(fn, call) for call in calls], chunksize=1)


def run_shards(fn: Callable[..., Any], calls: Sequence[tuple], *,
               scheduler: str | None = None, workers: int | None = None,
               processes: bool = True,
               on_result: Callable[[ShardResult], None] | None = None) -> list[ShardResult]:
    """``fn(*call)`` for every call, on Dask; the results in the order of ``calls``.

    Parameters
    ----------
    fn : callable
        A module-level function (workers import it by name).
    calls : sequence of tuple
        One shard each: its arguments, the seed first.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:port``); default: a local
        cluster, started and stopped here.
    workers : int, optional
        Workers of the local cluster (default: every core, ``os.cpu_count()``).
    processes : bool
        Local workers as processes (default) or as threads of this one (tests).
    on_result : callable, optional
        Called with each :class:`ShardResult` as it arrives (progress).
    """
    from dask.distributed import Client, LocalCluster, as_completed

    if scheduler is not None:
        client, cluster = Client(scheduler), None
    else:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=processes, dashboard_address=None)
        client = Client(cluster)
    try:
        futures = [client.submit(_call, fn, call, pure=False) for call in calls]
        order = {future.key: n for n, future in enumerate(futures)}
        results: list[ShardResult | None] = [None] * len(futures)
        for future in as_completed(futures):
            result = future.result()
            results[order[future.key]] = result
            if on_result is not None:
                on_result(result)
        return [r for r in results if r is not None]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
