"""A worker asked to stop stops: SIGTERM or Ctrl-C once lets the running job finish and the
worker exits 0, whatever that stop raises and wherever the signal lands (between two runs,
while its database is away); a second signal exits at once (docs/DESIGN.md "Serving many
stores", the worker).

``scenes worker`` runs for real (the command line's signal handlers and exit codes), with
procrastinate's app replaced by a scripted one, so each case happens every time: CI once saw
a worker whose graceful stop raised "Database error." start again and never exit.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent('''
    import asyncio, contextlib, sys
    from procrastinate.exceptions import ConnectorException
    from scene_engine.serving import jobs

    MODE = sys.argv[1]

    class App:
        """procrastinate's App as the worker uses it: open_async, run_worker_async."""
        @contextlib.asynccontextmanager
        async def open_async(self):
            yield

        async def run_worker_async(self, **options):
            print("running", flush=True)
            if MODE == "database-away":
                raise ConnectorException()         # "Database error.": started again
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if MODE == "stop-fails":
                    raise ConnectorException()     # the stop's own query failed
                if MODE == "job-runs-on":
                    print("job still running", flush=True)
                    await asyncio.sleep(3600)      # the running job does not finish
                raise

    jobs.migrate = lambda url: None
    jobs.make_app = lambda url, sync=False: App()
    from scene_engine.cli.entry import main
    sys.argv = ["scenes", "worker", "--database", "postgresql://u@127.0.0.1:1/db",
                "--git", "git://127.0.0.1:1/", "--cache", sys.argv[2], "--name", "w1"]
    main()
''')


def _start(tmp_path: Path, mode: str) -> subprocess.Popen:
    script = tmp_path / "worker.py"
    script.write_text(SCRIPT)
    return subprocess.Popen([sys.executable, str(script), mode, str(tmp_path / "cache")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(proc: subprocess.Popen, line: str) -> None:
    assert proc.stdout is not None
    for got in proc.stdout:
        if got.strip() == line:
            return
    raise AssertionError(f"the worker ended before printing {line!r}: {proc.stderr.read()}")


def _ended(proc: subprocess.Popen, seconds: float = 15) -> tuple[int, str]:
    try:
        _out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
        raise AssertionError(f"the worker did not stop within {seconds} s: {err}") from None
    return proc.returncode, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_worker_even_when_its_stop_fails(tmp_path, sig):
    worker = _start(tmp_path, "stop-fails")
    _wait_for(worker, "running")
    worker.send_signal(sig)
    code, err = _ended(worker)
    assert code == 0, err
    assert "starting again" not in err, err       # it did not take the failure for a restart
    assert "its stop ended with an error: Database error." in err
    assert "Traceback" not in err


def test_a_signal_between_two_runs_stops_the_worker(tmp_path):
    """The database is away: the worker starts again every 2 s; SIGTERM in the wait."""
    worker = _start(tmp_path, "database-away")
    _wait_for(worker, "running")
    _wait_for(worker, "running")                  # started again once: between runs now
    time.sleep(0.5)
    began = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    code, err = _ended(worker)
    assert code == 0, err
    assert time.monotonic() - began < 5
    assert "stopping after its running job" in err and "Traceback" not in err


def test_a_second_signal_stops_a_worker_whose_job_runs_on(tmp_path):
    worker = _start(tmp_path, "job-runs-on")
    _wait_for(worker, "running")
    worker.send_signal(signal.SIGTERM)
    _wait_for(worker, "job still running")
    with pytest.raises(subprocess.TimeoutExpired):
        worker.wait(timeout=1)                    # the first one waits for the job
    worker.send_signal(signal.SIGTERM)
    code, err = _ended(worker)
    assert code == 143, err
    assert "stopping at once" in err and "Traceback" not in err
