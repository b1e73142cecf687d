"""Sweeps split by seed, run on a Dask cluster: all local cores by default.

A *shard* is one call ``fn(seed, *rest)``; a sweep is a list of such calls. Dask's
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

__all__ = ["ShardResult", "run_shards"]


@dataclass(frozen=True)
class ShardResult:
    """One shard's outcome: its seed, and its value or the error it raised."""

    seed: int
    value: Any = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


def _call(fn: Callable[..., Any], call: tuple) -> ShardResult:
    """Run one shard on a worker; an exception becomes the shard's error, with its seed."""
    seed = call[0]
    try:
        return ShardResult(seed, fn(*call))
    except Exception as error:   # any failure is the shard's result, named by its seed
        lines = traceback.format_exception_only(type(error), error)
        return ShardResult(seed, error="".join(lines).strip())


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
