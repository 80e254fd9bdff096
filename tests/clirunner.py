"""In-process command-line runs that cannot hide a crash.

Typer's ``CliRunner`` catches whatever the command raises: a crash then exits 1 with the
exception in ``result.exception`` and no "Traceback" in the output, so a test that accepts
exit 1 (a refusal) and looks for "Traceback" cannot tell a refusal from a bug. Every
in-process run in the suite goes through ``CheckedRunner`` (``tests/test_suite_rules.py``
holds the suite to that): a run whose exception is anything but the ``SystemExit`` of an exit
code fails the test there, with the command's traceback.

Typer turns its app into a click command on every ``invoke`` (reading the type hints of every
command's parameters: about 0.1 s a run, a tenth of the quick loop). ``CheckedRunner`` builds
it once per app and runs that same command each time: what a run does is read from the
command's functions when it runs, so a test that patches a service still reaches it.
"""

from __future__ import annotations

import traceback
from typing import Any

import typer.testing
from typer.testing import CliRunner, Result

_BUILT: dict[int, tuple[Any, Any]] = {}     # id(app) -> (app, its click command)
_build = typer.testing._get_command


def _command_once(app: Any) -> Any:
    """The click command of ``app``, built on the first call for it."""
    held = _BUILT.get(id(app))
    if held is None or held[0] is not app:
        held = _BUILT[id(app)] = (app, _build(app))
    return held[1]


typer.testing._get_command = _command_once   # what typer's CliRunner.invoke calls


class CommandCrashed(AssertionError):
    """An in-process command raised an exception the command line did not handle."""


class CheckedRunner(CliRunner):
    """``CliRunner`` whose ``invoke`` fails on an unexpected exception (anything but the
    ``SystemExit`` an exit code is): ``result.exception`` is None or a ``SystemExit`` in
    every result a test sees."""

    def invoke(self, *args, **kwargs) -> Result:
        result = super().invoke(*args, **kwargs)
        unexpected(result)
        return result


def unexpected(result: Result) -> None:
    """Raise ``CommandCrashed`` when ``result`` holds an exception other than ``SystemExit``."""
    error = result.exception
    if error is None or isinstance(error, SystemExit):
        return
    shown = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info else ""
    raise CommandCrashed(f"the command crashed (exit {result.exit_code}): {error!r}\n"
                         f"{shown}\noutput:\n{result.output}") from error
