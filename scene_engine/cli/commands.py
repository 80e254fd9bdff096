"""Every command of ``scenes``, registered on the one Typer app (``cli.base``) in the order
``scenes -h`` lists them, each with its whole line of help (``cli.help``), and ``main``, the
command line's entry point."""

from __future__ import annotations

import contextlib
import sys

import typer

from scene_engine.cli import base as app_module

# The order of `scenes -h`: the store, memories in, the scenes, history, serving.
# isort: off
from scene_engine.cli import store_commands  # noqa: F401
from scene_engine.cli import memories  # noqa: F401
from scene_engine.cli import scenes  # noqa: F401
from scene_engine.cli import history  # noqa: F401
from scene_engine.cli import serve  # noqa: F401
from scene_engine.cli import serving  # noqa: F401
from scene_engine.cli import hooks  # noqa: F401
# isort: on
from scene_engine.cli.base import app
from scene_engine.cli.help import short_help

short_help(app)

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point. A closed pipe (``scenes log | head``) ends quietly.

    SIGTERM unwinds like Ctrl-C (``interrupts.install_handlers``); an interrupt anywhere is
    one ``interrupted`` line and exit 130 (SIGINT) or 143 (SIGTERM), never a traceback. Once
    the outcome is decided, further signals are held back so they cannot turn it into one.
    """
    import os

    from scene_engine.core import interrupts

    interrupts.install_handlers()
    try:
        app()
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at devnull so that cannot fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except (KeyboardInterrupt, interrupts.Terminated) as exc:   # outside a command's body
        with contextlib.suppress(typer.Exit):
            app_module.interrupted(exc)
        sys.exit(interrupts.exit_code(exc))
    except SystemExit as exc:
        if exc.code == 130 and not app_module._INTERRUPT["reported"]:   # Typer's quiet Ctrl-C exit
            app_module._INTERRUPT["reported"] = True
            typer.echo("interrupted", err=True)
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            # Typer's own answer to a closed pipe outside a command (`scenes -h | head -1`):
            # it wraps stdout so and exits 1; a reader that had enough is no failure.
            with contextlib.suppress(OSError, ValueError):
                if sys.__stdout__ is not None:   # else there is no final flush to fail
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
            sys.exit(0)
        raise
    finally:
        interrupts.hold_for_exit()
