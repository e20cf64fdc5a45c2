""":func:`svmrepro.forks.ahead`: work started at once in one fork while the caller goes on (a reproduction's store
skip beside its pages, its cost page beside its claims: issue 44, item 5), each result what this process would
have made; and no fork uses a database connection its parent opened. Each test runs its script in a process of
its own: a process forks only without another thread, and a pytest-xdist worker has some."""

import json
import subprocess
import sys

AHEAD_SCRIPT = r"""
import json, os, signal, sys, threading
from svmrepro.forks import ahead

parent = os.getpid()

def square(x):
    if x == "boom":
        raise ValueError("boom at its item")
    return [x * x, os.getpid()]

def dies_at_two(x):
    if x == 2 and os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)  # killed from outside, as it were
    return [x * x, os.getpid()]

out = {"parent": parent}
with ahead(square, [1, 2, 3], 2) as found:
    out["forked"] = list(found)
with ahead(square, [4, "boom", 5], 2) as found:
    out["first"] = next(found)
    try:
        next(found)
    except ValueError as exc:
        out["error"] = str(exc)
with ahead(dies_at_two, [1, 2, 3], 2) as found:
    out["died"] = list(found)
with ahead(square, [1, 2], 1) as found:
    out["one_core"] = list(found)
gate = threading.Event()
other = threading.Thread(target=gate.wait)
other.start()
with ahead(square, [1, 2], 2) as found:
    out["threaded"] = list(found)
gate.set()
other.join()
with ahead(square, [1, 2, 3], 2) as found:  # left before its results are read: the fork is waited for
    pass
out["left"] = threading.active_count()
print(json.dumps(out))
"""


def _run(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_ahead_gives_each_result_in_order_from_one_fork_and_this_process_s_where_it_cannot():
    out = _run(AHEAD_SCRIPT)
    parent = out["parent"]
    squares, pids = zip(*out["forked"])
    assert list(squares) == [1, 4, 9]
    assert len(set(pids)) == 1 and parent not in pids, "not computed by one fork of the process"
    assert out["first"][0] == 16 and out["error"] == "boom at its item"  # raised when its result is asked for
    assert [s for s, _ in out["died"]] == [1, 4, 9], "a fork that died lost its items"
    assert out["died"][0][1] != parent and out["died"][1][1] == parent == out["died"][2][1]
    # one core, or another thread (a fork would inherit a lock it holds): computed here, in order
    assert out["one_core"] == [[1, parent], [4, parent]] and out["threaded"] == [[1, parent], [4, parent]]
    assert out["left"] == 1, "the fork's pool left a thread behind"


CONNECTION_SCRIPT = r"""
import json, os, sys
import sqlalchemy
from svmrepro.forks import OPENED_BY, ahead

engine = sqlalchemy.create_engine(f"sqlite:///{sys.argv[1]}")  # a pool, as an MLflow store's engine has
with engine.connect() as connection:  # opened here, then back in the pool: the fork inherits it
    connection.execute(sqlalchemy.text("create table t (x integer)"))
    connection.commit()
    before = id(connection.connection.dbapi_connection)

def use(_):
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text("insert into t values (1)"))
        connection.commit()
        return [connection.info.get(OPENED_BY) == os.getpid(), id(connection.connection.dbapi_connection) == before]

with ahead(use, [0, 1], 2) as found:
    forked = list(found)
with engine.connect() as connection:  # the parent's own connection, still its own and still working
    rows = connection.execute(sqlalchemy.text("select count(*) from t")).scalar()
    mine = id(connection.connection.dbapi_connection) == before
print(json.dumps({"forked": forked, "rows": rows, "mine": mine}))
"""


def test_a_fork_opens_its_own_database_connection_and_leaves_its_parent_s_alone(tmp_path):
    """SQLite's rule (no connection carried across a fork): the fork's pool hands out a connection the fork opened,
    never the one its parent opened and left in the pool, which the parent goes on using."""
    out = _run(CONNECTION_SCRIPT, str(tmp_path / "pool.db"))
    assert out["forked"] == [[True, False], [True, False]], "the fork used a connection its parent opened"
    assert out["rows"] == 2 and out["mine"]
