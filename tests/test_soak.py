"""Soak test: what users do to a store, many times over, and nothing lost or duplicated.

1. A sweep of 24 tiny runs (each fit sleeps 0.05 s) at 2 jobs (joblib launcher), SIGKILLed as a whole process group at
   random moments (the first within the store's creation, the others while runs are under way)
   and started again until it ends.
2. Three identical sweeps started at once on a new store: more processes than the suite's two cores race
   on creating it, as four and eight did, at less cost (issue 44: 40 runs and four sweeps before).

Then: every configuration has exactly one FINISHED run with its metrics and ``config.yaml``, no
run is left RUNNING, and SQLite's integrity check says ``ok``. The counts are printed (``pytest
-s``) and are in the assertion messages. About a minute on two cores.
"""

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import forked_cli
import pytest
from mlflow.tracking import MlflowClient
from test_faults import SLEEP_ENV, _env

N_RUNS, MAX_KILLS, N_AT_ONCE, AT_ONCE_RUNS = 24, 3, 3, 3
#: seconds each fit sleeps (tests/test_faults.py's FaultyClassifier), so kills often meet a run RUNNING
FIT_S = "0.05"


def _sweep(root: Path, db: Path, name: str, seeds: int, *launcher: str) -> list[str]:
    return [sys.executable, "-m", "svmrepro", "-m", "--quiet", f"hydra.searchpath=[file://{root / 'conf'}]",
            "algorithm=faulty", "dataset.n_train=30", "dataset.n_test=30", f"seed=range({seeds})", *launcher,
            f"tracking.uri=sqlite:///{db}", f"hydra.sweep.dir={root / name}"]


def _finished(db: Path) -> int:
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=1) as con:
            return con.execute("select count(*) from runs where status = 'FINISHED' and run_uuid not in (select"
                               " run_uuid from tags where key = 'svmrepro.kind' and value = 'sweep')").fetchone()[0]
    except sqlite3.Error:
        return 0


def _audit(db: Path, seeds: int) -> dict[str, object]:
    """Integrity, and per seed its FINISHED runs; fails on a FINISHED run missing its metrics or config."""
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as con:
        integrity = con.execute("pragma integrity_check").fetchall()
    client = MlflowClient(f"sqlite:///{db}")
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id], max_results=5000)
    runs = [r for r in runs if r.data.tags.get("svmrepro.kind") != "sweep"]  # not the sweeps' parent runs
    finished = [r for r in runs if r.info.status == "FINISHED"]
    for r in finished:
        assert "test_error" in r.data.metrics, r.info.run_id
        assert (Path(r.info.artifact_uri.removeprefix("file://")) / "config.yaml").is_file(), r.info.run_id
    per_seed = Counter(int(r.data.tags["seed"]) for r in finished)
    return {
        "integrity": integrity,
        "statuses": Counter(r.info.status for r in runs),
        "lost": sum(1 for s in range(seeds) if per_seed[s] == 0),
        "duplicated": sum(n - 1 for n in per_seed.values() if n > 1),
    }


@pytest.mark.slow
def test_sweeps_killed_at_random_and_started_at_once_lose_and_duplicate_nothing(tmp_path):
    rng = random.Random(int(os.environ.get("SOAK_SEED", "16")))
    (tmp_path / "conf" / "algorithm").mkdir(parents=True)
    (tmp_path / "conf" / "algorithm" / "faulty.yaml").write_text("_target_: test_faults.FaultyClassifier\n")
    env = _env(**{SLEEP_ENV: FIT_S})
    db = tmp_path / "killed" / "mlflow.db"
    kills, attempts, finished_at_kill = 0, 0, []
    deadline = time.monotonic() + 420
    while True:
        attempts += 1
        name, before = f"attempt{attempts}", _finished(db)
        log = open(tmp_path / f"{name}.log", "w")
        command = _sweep(tmp_path, db, name, N_RUNS, "hydra/launcher=parallel", "hydra.launcher.n_jobs=2")
        sweep = forked_cli.start(command,
                                 cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        # the first kill lands 0-1.5 s after the store's first file appeared (its creation takes
        # seconds), the others 0-3 s after the attempt's first run FINISHED
        kill_at = None
        while kills < MAX_KILLS and sweep.poll() is None and time.monotonic() < deadline:
            if kill_at is None and (db.parent.is_dir() and any(db.parent.iterdir()) if kills == 0
                                    else _finished(db) > before):
                kill_at = time.monotonic() + rng.uniform(0, 1.5 if kills == 0 else 3)
            if kill_at is not None and time.monotonic() >= kill_at:
                os.killpg(sweep.pid, signal.SIGKILL)
                kills += 1
                finished_at_kill.append(_finished(db))
                break
            time.sleep(0.02)
        sweep.wait(timeout=max(1, deadline - time.monotonic()))
        log.close()
        assert time.monotonic() < deadline, "the soak sweep did not end in time"
        if sweep.returncode != -signal.SIGKILL:
            assert sweep.returncode == 0, (tmp_path / f"{name}.log").read_text()[-3000:]
            break
    killed = _audit(db, N_RUNS)

    # identical sweeps started at once on a new store, each in its own process
    fresh = tmp_path / "at_once" / "mlflow.db"
    starts = [forked_cli.start(_sweep(tmp_path, fresh, f"at_once{i}", AT_ONCE_RUNS), cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(N_AT_ONCE)]
    outputs = [p.communicate(timeout=300)[0] for p in starts]
    at_once = _audit(fresh, AT_ONCE_RUNS)

    summary = (f"soak: {N_RUNS} configurations, {attempts} attempts, {kills} SIGKILLs (FINISHED at each: "
               f"{finished_at_kill}), statuses {dict(killed['statuses'])}, lost {killed['lost']}, duplicated "
               f"{killed['duplicated']}, integrity {killed['integrity']}; {N_AT_ONCE} identical sweeps of "
               f"{AT_ONCE_RUNS} at once on a new store: exit codes {[p.returncode for p in starts]}, statuses "
               f"{dict(at_once['statuses'])}, lost {at_once['lost']}, duplicated {at_once['duplicated']}, "
               f"integrity {at_once['integrity']}")
    print(summary)
    assert kills == MAX_KILLS and len(set(finished_at_kill[1:])) > 1, summary
    for audit in (killed, at_once):
        assert audit["integrity"] == [("ok",)], summary
        assert audit["lost"] == 0 and audit["duplicated"] == 0, summary
        assert set(audit["statuses"]) <= {"FINISHED", "KILLED"}, summary
    assert [p.returncode for p in starts] == [0] * N_AT_ONCE, "\n".join(o[-1500:] for o in outputs)
