"""``scenes worker`` that kills itself (SIGKILL) at a chosen point, for the serving simulation.

    python tests/fault_worker.py POINT N  worker's options...

POINT is where: ``after-commit`` (the job's batches are committed in the clone, nothing is
pushed), ``after-push`` (the server took the push; the inbox rows are not dropped and the
job is not marked done) or ``none``; N: at the Nth time the worker reaches it. Nothing of
this is in the engine: the points are patched in here.
"""

from __future__ import annotations

import os
import signal
import sys


def main() -> None:
    point, nth, *options = sys.argv[1:]
    reached = {"n": 0}

    def reach() -> None:
        reached["n"] += 1
        if reached["n"] == int(nth):
            os.kill(os.getpid(), signal.SIGKILL)

    from scene_engine.serving import remote

    real_push = remote.Clone.push

    def push(self) -> bool:
        if point == "after-commit":
            reach()
        taken = real_push(self)
        if point == "after-push" and taken:
            reach()
        return taken

    remote.Clone.push = push                     # type: ignore[method-assign]
    sys.argv = ["scenes", "worker", *options]
    from scene_engine.cli import main as cli

    cli()


if __name__ == "__main__":
    main()
