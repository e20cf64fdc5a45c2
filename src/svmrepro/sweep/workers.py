"""A sweep's worker processes watch their parent from their start, not from their first job.

Hydra's joblib launcher names joblib's ``loky`` backend itself (``Parallel(backend="loky", ...)``), so a
:func:`joblib.parallel_config` around it cannot give the pool an initializer. For the launch,
:func:`watching_parent` registers the ``loky`` name again (:func:`joblib.register_parallel_backend`) as the
same backend with :func:`svmrepro.signals.end_with_parent` as its workers' initializer, and puts back the
backend it found afterwards. A ``kill -9`` of the sweep's process then ends every worker within seconds,
idle or starting a job (a fresh worker takes a second or more to reach its job: imports, Hydra's
set-up), and the resource trackers end with them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from joblib import register_parallel_backend
from joblib.parallel import BACKENDS

from svmrepro.signals import end_with_parent

LOKY = "loky"


@contextmanager
def watching_parent() -> Iterator[None]:
    """For the block, every ``loky`` pool starts its workers with :func:`end_with_parent` (an initializer
    given explicitly is kept)."""
    found = BACKENDS[LOKY]

    def watched(**kwargs):
        return found(**{"initializer": end_with_parent, **kwargs})

    register_parallel_backend(LOKY, watched)
    try:
        yield
    finally:
        register_parallel_backend(LOKY, found)
