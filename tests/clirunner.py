"""In-process command-line runs that cannot hide a crash.

Typer's ``CliRunner`` catches whatever the command raises: a crash then exits 1 with the
exception in ``result.exception`` and no "Traceback" in the output, so a test that accepts
exit 1 (a refusal) and looks for "Traceback" cannot tell a refusal from a bug. Every
in-process run in the suite goes through ``CheckedRunner`` (``tests/test_suite_rules.py``
holds the suite to that): a run whose exception is anything but the ``SystemExit`` of an exit
code fails the test there, with the command's traceback.
"""

from __future__ import annotations

import traceback

from typer.testing import CliRunner, Result


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
