"""svmrepro.timing: the CPU time of a call counts the worker processes it used."""

import time

from joblib import Parallel, delayed

from svmrepro.timing import timed


def _spin(seconds: float) -> None:
    """Spend ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_cpu_time_counts_the_worker_processes():
    Parallel(n_jobs=2, backend="loky")(delayed(_spin)(0.0) for _ in range(2))  # workers up before timing
    _, wall, cpu = timed(lambda: Parallel(n_jobs=2, backend="loky")(delayed(_spin)(0.3) for _ in range(2)))
    assert cpu >= 0.55  # two workers' 0.3 s each, whatever the parent spent waiting


def test_cpu_time_of_a_serial_call_is_its_own():
    _, wall, cpu = timed(lambda: _spin(0.2))
    assert 0.19 <= cpu < 0.5
    _, wall, cpu = timed(lambda: time.sleep(0.2))
    assert wall >= 0.2 and cpu < 0.1
