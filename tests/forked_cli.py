"""svmrepro's command lines for the tests, started as forks of one process that has done their imports.

A command line of svmrepro spends seconds importing (scikit-learn, MLflow, its SQL store, Hydra, pandas) before
it reads its first argument, and the suite starts about a hundred of them. :func:`run` and :func:`start` take the
arguments of :func:`subprocess.run` and :class:`subprocess.Popen`, and start ``[sys.executable, "-m", module,
*args]`` (``module`` one of :data:`MODULES`) as a fork of a server process instead: one per test process, started
at the first call, that imported those libraries once (:data:`PRELOAD`, never svmrepro's own modules). The child
is then what ``python -m`` would be from that point on:

- its own process (its pid, which the caller may signal and which, once the command ended, names a zombie until
  the caller's ``poll`` or ``wait`` has seen it end, as a Popen's does; a session of its own with
  ``start_new_session``);
- the caller's standard input, output and error (file descriptors passed over a Unix socket), folder and
  environment (``os.environ`` replaced whole, ``PYTHONPATH`` applied to ``sys.path``), ``sys.argv`` and
  ``sys.path[0]`` as ``-m`` sets them;
- signal dispositions as an exec from the caller leaves them (ignored stays ignored, the rest default), then
  Python's own (SIGINT raises KeyboardInterrupt, SIGPIPE ignored);
- its module run by :func:`runpy.run_module`, and the interpreter's own exit (atexit functions, threads joined,
  an uncaught exception's traceback and exit code 1, KeyboardInterrupt's SIGINT).

What a fork cannot give is not faked: a command whose environment differs from the server's in a variable read
while a library is imported or loaded (``PYTHON*`` but ``PYTHONPATH``, the BLAS and OpenMP thread counts,
joblib's, loky's), or whose ``PYTHONPATH`` adds a ``sitecustomize`` or a module named as a preloaded one, runs as
a real process (:func:`forkable`); so does any other command, and every command with ``SVMREPRO_TEST_REAL_PROCESSES=1``.
A server started before the test process's own environment changed in such a variable is replaced. The tests of
what happens during a command's imports (a signal then: tests/test_signals.py, tests/test_stop_from_csv.py) and of
the installed console scripts (tests/test_wheel.py) call :mod:`subprocess` themselves. tests/test_forked_cli.py
runs the same commands both ways.
"""
from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

#: what the server imports: the libraries whose imports are most of a command's start (about 3 s on 2 cores).
#: Not svmrepro's own modules: a command imports those itself, with their effects at import (its stop line's
#: handler, Hydra's config store, the skops types) as the real command has them
PRELOAD = ("numpy", "scipy.stats", "pandas", "sklearn.base", "sklearn.svm", "sklearn.model_selection",
           "sklearn.metrics", "joblib", "omegaconf", "hydra", "hydra.utils", "hydra.core.config_store", "mlflow",
           "mlflow.tracking", "mlflow.entities", "mlflow.store.tracking.sqlalchemy_store", "sqlalchemy", "alembic",
           "psutil", "threadpoolctl", "yaml")
#: environment variables read while a library is imported or its shared library loaded: a command whose
#: environment differs from the server's in one of them is started as a real process
IMPORT_TIME_PREFIXES = ("PYTHON", "OMP_", "OPENBLAS_", "MKL_", "KMP_", "GOTO", "BLIS_", "VECLIB_", "NUMEXPR_",
                        "JOBLIB_", "LOKY_", "SKLEARN", "LD_", "MALLOC", "GLIBC_", "HYDRA_", "MPL", "NUMBA_")
#: the modules the server runs as ``-m``
MODULES = ("svmrepro", "svmrepro.reproduce", "svmrepro.app")
#: set to 1, every command is a real process (to compare both ways, or to rule the forks out)
REAL_ENV = "SVMREPRO_TEST_REAL_PROCESSES"


def _import_time_vars(env) -> dict:
    """The variables of ``env`` read at import time, but ``PYTHONPATH``, which the child applies itself."""
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_PREFIXES) and k != "PYTHONPATH"}


def _python_path(env, cwd: str) -> list[str]:
    """The folders ``PYTHONPATH`` of ``env`` puts after ``sys.path[0]``, as the interpreter makes them absolute."""
    return [os.path.abspath(os.path.join(cwd, p)) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]


def _shadows(folder: str) -> bool:
    """Whether ``folder`` would change what the server imported: a ``sitecustomize`` or ``usercustomize`` (run
    at start) or a module named as a preloaded package."""
    tops = {name.partition(".")[0] for name in PRELOAD} | {"sitecustomize", "usercustomize"}
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(name.partition(".")[0] in tops for name in names)


# --- the server -------------------------------------------------------------------------------------------------

#: the server's sys.path after its own folder (it runs without PYTHONPATH)
_BASE_PATH: list[str] = []


def _recv(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            raise EOFError
        data += more
    return json.loads(data), fds


def _fresh_signals(ignored: list[int]) -> None:
    """Signal dispositions as a new interpreter started by the caller has them: what the caller ignores stays
    ignored across an exec, the rest is default; then Python's own (SIGPIPE and SIGXFSZ ignored, SIGINT raising
    KeyboardInterrupt unless ignored)."""
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(signum, signal.SIG_IGN if signum in ignored else signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    if signal.SIGINT not in ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _become(request: dict, fds: list[int]) -> str:
    """In the child: take the request's descriptors, folder, environment, session and argv; the module to run."""
    if request["setsid"]:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-m", *request["args"]]
    # what -m puts first, then PYTHONPATH's folders, then the interpreter's own (site-packages...)
    sys.path[:] = [os.getcwd(), *_python_path(request["env"], os.getcwd()), *_BASE_PATH]
    _fresh_signals(request["ignored"])
    return request["module"]


def serve(path: str) -> str:
    """Answer requests on the Unix socket ``path`` until its client goes: each a child that returns from here
    (in the child only) to run its module; the server and its waiters never return."""
    global _BASE_PATH
    _BASE_PATH = sys.path[1:]  # started without PYTHONPATH: its own folder, then the interpreter's
    for module in PRELOAD:
        __import__(module)
    # what is imported now lives as long as the server: the garbage collector of a child need not walk it (nor,
    # walking it, copy the pages it shares with the server)
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready:  # the test process went (its end of our standard input closed): so do we
            os.unlink(path)
            os.rmdir(os.path.dirname(path))
            os._exit(0)
        conn, _ = listener.accept()
        if os.fork():
            conn.close()
            continue
        # a waiter: starts the child, tells its pid, waits for it, tells how it ended, and reaps it once told
        listener.close()
        try:
            request, fds = _recv(conn)
        except (EOFError, OSError, ValueError):
            os._exit(0)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            conn.close()
            return _become(request, fds)
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except OSError:
            pass
        # ended, but left a zombie, as a Popen's child is until its parent polls: its pid names it (psutil,
        # os.kill) until the caller has read how it ended and let go of the connection
        ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        code = ended.si_status if ended.si_code == os.CLD_EXITED else -ended.si_status
        try:
            conn.sendall(json.dumps({"returncode": code}).encode() + b"\n")
            conn.recv(1)  # the caller's close
        except OSError:
            pass
        os.waitpid(pid, 0)
        os._exit(0)


# --- the client -------------------------------------------------------------------------------------------------

_server: dict = {}
_lock = threading.Lock()


def _socket_path() -> str:
    """The server's socket; the server (re)started if this process has none running, or one started when this
    process's environment differed in a variable read at import time (``ray.init`` sets ``OMP_NUM_THREADS`` in
    the process that calls it, which every command started after it then inherits)."""
    with _lock:
        if _server.get("owner") == os.getpid() and _server["process"].poll() is None \
                and _import_time_vars(os.environ) != _import_time_vars(_server["env"]):
            _server["process"].stdin.close()  # the old server ends
            _server["process"].wait()
        if _server.get("owner") != os.getpid() or _server["process"].poll() is not None:
            folder = tempfile.mkdtemp(prefix="svmrepro-forked-cli-")
            path = os.path.join(folder, "s")
            # without PYTHONPATH: what a test put there (a sitecustomize) must not reach the server, whose imports
            # every fork shares; each child applies its own caller's
            own = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            process = subprocess.Popen([sys.executable, __file__, path], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, env=own)
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the forked-command server did not start (exit code {process.wait()})")
            _server.update(owner=os.getpid(), process=process, path=path, env=own)
        return _server["path"]


def forkable(env: dict | None, cwd=None) -> bool:
    """Whether a command with environment ``env`` (None: this process's) may be a fork of the server: no
    variable read at import time differs from the server's, and a folder its ``PYTHONPATH`` adds shadows
    nothing the server imported."""
    _socket_path()
    env = env if env is not None else os.environ
    if _import_time_vars(env) != _import_time_vars(_server["env"]):
        return False
    return not any(map(_shadows, _python_path(env, str(cwd or os.getcwd()))))


def _fd(spec, default: int, opened: list, ours: list) -> int:
    """The descriptor a child gets for ``spec`` (None: ours; PIPE; DEVNULL; a file object or a descriptor)."""
    if spec is None:
        return default
    if spec == subprocess.DEVNULL:
        fd = os.open(os.devnull, os.O_RDWR)
        opened.append(fd)
        return fd
    if spec == subprocess.PIPE:
        read, write = os.pipe()
        ours.append(read)
        opened.append(write)
        return write
    return spec if isinstance(spec, int) else spec.fileno()


class Forked:
    """A started command, as much of :class:`subprocess.Popen` as the tests use."""

    def __init__(self, args, module, stdin, stdout, stderr, env, cwd, start_new_session, text):
        self.args = [sys.executable, "-m", module, *args]
        self.returncode = None
        self.stdin = None
        opened, ours = [], []
        in_fd = _fd(stdin, 0, opened, [])
        out_fd = _fd(stdout, 1, opened, ours)
        self._out = ours[-1] if stdout == subprocess.PIPE else None
        err_fd = out_fd if stderr == subprocess.STDOUT else _fd(stderr, 2, opened, ours)
        self._err = ours[-1] if stderr == subprocess.PIPE else None
        ignored = [int(signum) for signum in signal.valid_signals()
                   if signum not in (signal.SIGKILL, signal.SIGSTOP) and signal.getsignal(signum) == signal.SIG_IGN]
        request = {"module": module, "args": list(map(str, args)), "cwd": str(cwd or os.getcwd()),
                   "env": dict(env if env is not None else os.environ), "setsid": bool(start_new_session),
                   "ignored": ignored}
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(_socket_path())
        socket.send_fds(self._conn, [json.dumps(request).encode() + b"\n"], [in_fd, out_fd, err_fd])
        for fd in opened:
            os.close(fd)
        self._buf = b""
        self.pid = json.loads(self._line(None))["pid"]
        self.stdout = os.fdopen(self._out, "r" if text else "rb") if self._out is not None else None
        self.stderr = os.fdopen(self._err, "r" if text else "rb") if self._err is not None else None

    def _line(self, timeout: float | None) -> bytes | None:
        """The server's next line; None if none came within ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self._conn], [], [], left)[0]:
                return None
            chunk = self._conn.recv(4096)
            if not chunk:
                raise RuntimeError(f"the forked-command server ended before command {self.args} did")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def poll(self):
        return self.wait(0.0, raising=False)

    def wait(self, timeout: float | None = None, raising: bool = True):
        if self.returncode is None:
            line = self._line(timeout)
            if line is None:
                if raising:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                return None
            self.returncode = json.loads(line)["returncode"]
            self._conn.close()
        return self.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None):
        """The output and error read to their end (pipes read in threads, as subprocess does), then the exit."""
        deadline = None if timeout is None else time.monotonic() + timeout
        results: dict = {}
        threads = [threading.Thread(target=lambda s=stream, n=name: results.__setitem__(n, s.read()), daemon=True)
                   for name, stream in (("out", self.stdout), ("err", self.stderr)) if stream is not None]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(None if deadline is None else max(0, deadline - time.monotonic()))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(None if deadline is None else max(0.01, deadline - time.monotonic()))
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        return results.get("out"), results.get("err")


def _split(command) -> tuple[str, list[str]] | None:
    """``(module, args)`` of a command ``[sys.executable, "-m", module, *args]`` of :data:`MODULES`; else None."""
    command = [str(part) for part in command]
    if len(command) >= 3 and command[0] == sys.executable and command[1] == "-m" and command[2] in MODULES:
        return command[2], command[3:]
    return None


def start(command, *, stdin=None, stdout=None, stderr=None, env=None, cwd=None, start_new_session: bool = False,
          text: bool = False):
    """``subprocess.Popen(command, ...)`` for ``command = [sys.executable, "-m", module, *args]``: a fork of the
    server where :func:`forkable`; the real process otherwise, or for any other command."""
    split = _split(command)
    if split is None or stdin == subprocess.PIPE or os.environ.get(REAL_ENV) == "1" or not forkable(env, cwd):
        return subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=stderr, env=env, cwd=cwd,
                                start_new_session=start_new_session, text=text)
    return Forked(split[1], split[0], stdin, stdout, stderr, env, cwd, start_new_session, text)


def run(command, *, input=None, capture_output: bool = False, stdout=None, stderr=None, env=None, cwd=None,
        timeout: float | None = None, text: bool = False, check: bool = False,
        start_new_session: bool = False) -> subprocess.CompletedProcess:
    """``subprocess.run(command, ...)``, through :func:`start`."""
    if capture_output:
        stdout = stderr = subprocess.PIPE
    process = start(command, stdin=subprocess.PIPE if input is not None else None, stdout=stdout, stderr=stderr,
                    env=env, cwd=cwd, start_new_session=start_new_session, text=text)
    try:
        if isinstance(process, subprocess.Popen):
            with process:
                out, err = process.communicate(input, timeout=timeout)
        else:
            out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    if check:
        done.check_returncode()
    return done


if __name__ == "__main__":
    import runpy

    runpy.run_module(serve(sys.argv[1]), run_name="__main__", alter_sys=True)
