"""The ``scenes`` console script: signal handlers first, then the command line.

Importing the command line (Typer, Rich) takes a noticeable moment; a Ctrl-C or SIGTERM in it
would otherwise print a traceback or kill the process without a word. Nothing is written
before ``cli.main`` runs, so an interrupt here is just one ``interrupted`` line. A plain
``search``, ``recall``, ``status`` or ``list`` skips that moment (``quick``): they only
read; so does an agent's ``hook`` (``hookdoor``).
"""

from __future__ import annotations

import os
import sys

from scene_engine.core import interrupts


def main() -> None:
    """Install the signal handlers; run a hook through its door, a plain search, recall,
    status or list through the quick door (``quick.run``: no Typer start-up), anything else
    through the command line (exit codes as ``cli.main``: 130 for Ctrl-C, 143 for
    SIGTERM)."""
    interrupts.install_handlers()
    try:
        from scene_engine.cli import hookdoor

        code = hookdoor.run(sys.argv[1:])
        if code is None:
            from scene_engine.cli import quick

            code = quick.run(sys.argv[1:])
        if code is None:
            from scene_engine.cli.commands import main as cli_main
    except (KeyboardInterrupt, interrupts.Terminated) as exc:
        print("interrupted", file=sys.stderr)
        sys.exit(interrupts.exit_code(exc))
    except BrokenPipeError:     # `scenes search x | head`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    if code is not None:
        interrupts.hold_for_exit()   # the outcome is decided: a late signal cannot undo it
        sys.exit(code)
    cli_main()
