"""Ctrl-C at any moment of ``svmrepro-reproduce --from-csv`` is the one stop line and exit code 130 (killed by
SIGINT), never a configuration error or a traceback, and leaves no half-written page (issue 46, item 9)."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
OUTPUT = "potential_sv/example"


@pytest.mark.parametrize("delay", [0.5, 2.0, 3.5, 5.0, 6.5, 8.0])
def test_ctrl_c_during_a_rebuild_from_csv_is_the_stop_line(tmp_path, delay):
    results = tmp_path / "results"
    (results / "potential_sv").mkdir(parents=True)
    # what a rebuild from CSV reads: the runs table, and the points its scatter is drawn from (without them the
    # rebuild fails at once, exit 1, and a late signal tests nothing)
    for suffix in ("runs.csv", "points.json"):
        shutil.copy(CHECKOUT / "results" / f"{OUTPUT}.{suffix}", results / "potential_sv")
    process = subprocess.Popen([sys.executable, "-m", "svmrepro.reproduce", "--mode", "full", "--from-csv",
                                "--experiment", OUTPUT, "--results-dir", str(results)],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    if process.returncode == 0:  # it had finished before the signal came: nothing was tested, and it says so
        assert delay > 2.0, "the rebuild ended within 2 s (its imports alone take longer): the signal was lost"
        pytest.skip(f"the rebuild had ended before the signal at {delay} s")
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("[")]
    assert process.returncode in (130, -signal.SIGINT), (process.returncode, err[-3000:])
    assert lines == ["svmrepro-reproduce: stopped by SIGINT"], err[-3000:]
    assert not list(results.rglob("*.tmp"))  # every page is written whole or not at all (svmrepro.writing)


SWALLOWED = """
import os, signal, sys, time
from svmrepro import reproduce

class Finalized:
    def __del__(self):  # the stop lands here, where Python can only print it and go on
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(200000))

def command(argv):
    Finalized()
    for _ in range(300):
        time.sleep(0.01)
    print("ran on")
    return 0

reproduce.reproduce_command = command
sys.exit(reproduce.main([]))
"""


def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_svmrepro_reproduce(tmp_path):
    """The stop at 2.0 s above once landed in a compiled library's callback ("Exception ignored in: 'cls_name'",
    KeyboardInterrupt's traceback, the rebuild going on): raised again in the main thread, it is the stop."""
    done = subprocess.run([sys.executable, "-c", SWALLOWED], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "ran on" not in done.stdout
    assert done.returncode in (130, -signal.SIGINT), done.stderr[-3000:]
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]


def _swallowing(*args, **kwargs):
    """A library that catches the Ctrl-C where it lands and carries on: the stop at 2.0 s above once landed in
    OmegaConf's merge of a claim, the cleanup of its half-built node failed, OmegaConf raised its own error in the
    stop's place, and the claims file was merged again whole; the rebuild then ran to its end, exit 0."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises here
    except KeyboardInterrupt:
        pass
    return []


@pytest.mark.parametrize("where", ["checks", "outputs"])
def test_a_ctrl_c_that_a_library_went_on_from_is_still_the_stop(monkeypatch, tmp_path, where):
    """During the checks: svmrepro-reproduce stops once they are done, before any output is built; while the
    outputs are built: once they are, with the stop's exit rather than success."""
    from svmrepro import reproduce

    built = []
    monkeypatch.setattr(reproduce, "_STOPS", [])  # this process's stops, the test's own: none left for the next test
    if where == "checks":
        monkeypatch.setattr(reproduce, "mistakes", _swallowing)
        monkeypatch.setattr(reproduce, "reproduce", lambda *args: built.append(args) or 0)
    else:
        monkeypatch.setattr(reproduce, "mistakes", lambda *args: [])
        monkeypatch.setattr(reproduce, "reproduce", lambda *args: _swallowing() or built.append(args) or 0)
    with pytest.raises(KeyboardInterrupt):
        reproduce.main(["--mode", "full", "--from-csv", "--experiment", OUTPUT, "--results-dir", str(tmp_path)])
    assert len(built) == (where == "outputs")
