"""The ``scenes`` console script: signal handlers first, then the command line.

Importing the command line (Typer, Rich) takes a noticeable moment; a Ctrl-C or SIGTERM in it
would otherwise print a traceback or kill the process without a word. Nothing is written
before ``cli.main`` runs, so an interrupt here is just one ``interrupted`` line.
"""

from __future__ import annotations

import sys

from . import interrupts


def main() -> None:
    """Install the signal handlers, import the command line, run it (exit codes as
    ``cli.main``: 130 for Ctrl-C, 143 for SIGTERM)."""
    interrupts.install_handlers()
    try:
        from .cli import main as cli_main
    except (KeyboardInterrupt, interrupts.Terminated) as exc:
        print("interrupted", file=sys.stderr)
        sys.exit(interrupts.exit_code(exc))
    cli_main()
