"""Where a run's sub-fits ran: the ``parallel.*`` tags of a run.

Read from the live engine once its context is entered (:func:`svmrepro.algorithms.parallel.backend_context`),
through public APIs: a dask ``Client.scheduler_info()``, ray's ``ray.nodes()``; for loky and
threading this host and the workers joblib gives the run's ``n_jobs``. A run's numbers do not depend
on them (every engine fits the same models), its timings do, so a timing reader can tell a run on one
laptop from one on a cluster.

- ``parallel.backend``: the joblib backend (``loky``, ``threading``, ``dask``, ``ray``);
- ``parallel.address``: the dask scheduler's or ray cluster's address, a password in it masked
  (:func:`svmrepro.redact.redact`); none for loky and threading;
- ``parallel.workers``: the workers (dask workers, ray nodes, loky processes or threads);
- ``parallel.hosts``: the workers per host and the threads of each (the tasks it runs at once; a
  ray node's CPUs), e.g. ``127.0.0.1: 2 workers x 1 thread``; the first :data:`MAX_LISTED` groups
  and a count of the rest, so a large cluster's tag stays short (MLflow keeps 8000 characters);
- ``parallel.n_jobs``: the sub-fits at once the algorithm's ``n_jobs`` gives on that engine
  (joblib's ``effective_n_jobs``: ``-1`` is every worker's thread).
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterable

from joblib import effective_n_jobs

from svmrepro.redact import redact

BACKEND_TAG, ADDRESS_TAG, WORKERS_TAG, HOSTS_TAG, N_JOBS_TAG = (
    "parallel.backend", "parallel.address", "parallel.workers", "parallel.hosts", "parallel.n_jobs",
)
#: host groups listed in ``parallel.hosts``; a larger cluster is summed up after them
MAX_LISTED = 20


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def hosts_text(workers: Iterable[tuple[str, int]]) -> str:
    """``host: <n> workers x <t> threads`` per (host, threads per worker), sorted, joined by ``; ``;
    after :data:`MAX_LISTED` groups, ``; ... and <k> other workers on <h> hosts``."""
    groups = sorted(Counter((str(host), int(threads)) for host, threads in workers).items())
    listed = [f"{host}: {_plural(count, 'worker')} x {_plural(threads, 'thread')}"
              for (host, threads), count in groups[:MAX_LISTED]]
    rest = groups[MAX_LISTED:]
    if rest:
        listed.append(f"... and {_plural(sum(c for _, c in rest), 'other worker')} on "
                      f"{_plural(len({host for (host, _), _ in rest}), 'host')}")
    return "; ".join(listed)


def _dask() -> tuple[str, list[tuple[str, int]]]:
    from distributed import default_client

    info = default_client().scheduler_info(n_workers=-1)
    return info["address"], [(w["host"], w["nthreads"]) for w in info["workers"].values()]


def _ray() -> tuple[str, list[tuple[str, int]]]:
    import ray

    nodes = [node for node in ray.nodes() if node["Alive"]]
    return (ray.get_runtime_context().gcs_address,
            [(node["NodeManagerAddress"], int(node["Resources"].get("CPU", 0))) for node in nodes])


#: backend -> its address and (host, threads) of each worker, read from its live client
CLUSTERS = {"dask": _dask, "ray": _ray}


def placement_tags(backend: str, n_jobs: object = None) -> dict[str, str]:
    """The ``parallel.*`` tags (but ``parallel.backend``, known before the engine starts) of a run
    whose algorithm has ``n_jobs`` (a list: a benchmark's, each value's), read inside the engine's
    ``backend_context``."""
    used = [effective_n_jobs(k) for k in (n_jobs if isinstance(n_jobs, list) else [n_jobs])]
    tags = {}
    if backend in CLUSTERS:
        address, workers = CLUSTERS[backend]()
        tags[ADDRESS_TAG] = redact(address)
    else:  # loky processes or threads of this machine, one task at a time each
        workers = [(socket.gethostname(), 1)] * max(used)
    return {**tags, WORKERS_TAG: str(len(workers)), HOSTS_TAG: hosts_text(workers),
            N_JOBS_TAG: ",".join(map(str, used))}
