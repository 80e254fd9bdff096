"""Ctrl-C and SIGTERM safety: no signal lands in the middle of a write-and-commit.

``critical()`` wraps each section that writes the store and commits (a batch's apply + commit,
``add``, a persona refresh, an undo, a hand-edit commit, recovery). Inside it SIGINT and SIGTERM
are blocked in the main thread, so git children started there inherit the block and a terminal
Ctrl-C sent to the whole process group cannot kill ``git commit`` half-way; a signal that still
reaches Python (through another thread) is recorded instead of raised. On leaving the section
the signal takes effect as usual (KeyboardInterrupt, ``Terminated``), after the commit.

``install_handlers()`` (the CLI's, once per process) turns SIGTERM into ``Terminated``, so the
engine unwinds — ``finally`` blocks run, the store lock is released — instead of dying.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git import Repo

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The process that started this one, read as the console script begins (this module is its
# first import): a stdio MCP server watches it, and under load the client could die before
# the slower imports end, after which getppid() names the adopting init, not the client.
STARTED_BY = os.getppid()
_depth = 0          # nesting of critical() in the main thread: only the outermost acts


class Terminated(BaseException):
    """SIGTERM arrived (after ``install_handlers()``). A BaseException, like KeyboardInterrupt,
    so ``except Exception`` clauses let it pass. ``exit_code`` is the shell's 128 + 15."""

    exit_code = 143


_received: list[int] = []   # signals the installed handlers raised for (see install_handlers)


def _raise_terminated(signum, frame) -> None:
    _received.append(signum)
    raise Terminated()


def _raise_keyboard_interrupt(signum, frame) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def install_handlers() -> None:
    """For a command-line process: SIGTERM raises ``Terminated`` and SIGINT, as always,
    KeyboardInterrupt (main thread; a signal the process ignores stays ignored).

    Python runs a signal's handler wherever the main thread is, also inside a ``__del__``
    (GitPython's objects wait there for their git helpers to exit), and an exception raised
    there is dropped: the interrupt would be lost. Such a drop re-sends the signal 10 ms later
    (SIGALRM), from ordinary code. Once a signal has arrived, other errors in ``__del__`` of
    objects it cut short half-built are not printed (they would print as a traceback). A
    no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _raise_terminated)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _raise_keyboard_interrupt)
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _redeliver)
    previous = sys.unraisablehook

    def hook(unraisable) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, KeyboardInterrupt | Terminated) and hasattr(signal, "setitimer"):
            _lost.append(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
            signal.setitimer(signal.ITIMER_REAL, 0.01)
        elif not _received:
            previous(unraisable)

    sys.unraisablehook = hook


_lost: list[int] = []       # signals whose exception a __del__ dropped, to be sent again


def _redeliver(signum, frame) -> None:
    """SIGALRM: send the dropped signals again. Outside ``critical()`` the handler raises
    right here; inside it the signal waits, blocked, for the section to end."""
    while _lost:
        signal.raise_signal(_lost.pop(0))


def received() -> BaseException | None:
    """The interrupt this process has received, as the exception its handler raises (None:
    none). A git child killed by the same Ctrl-C can make an operation fail with a git error
    before the interrupt itself surfaces; the command line reports such a failure as the
    interrupt it is."""
    if not _received:
        return None
    return Terminated() if _received[-1] == signal.SIGTERM else KeyboardInterrupt()


def reset_received() -> None:
    """Forget the interrupts received so far (a command starting afresh in this process)."""
    _received.clear()


def exit_code(exc: BaseException) -> int:
    """The shell's exit code for an interrupt: 143 for ``Terminated``, else 130 (SIGINT)."""
    return Terminated.exit_code if isinstance(exc, Terminated) else 130


@contextlib.contextmanager
def critical(repo: Repo | None = None) -> Iterator[None]:
    """Hold SIGINT and SIGTERM back for the ``with`` body; deliver them when it ends.

    Main thread only (elsewhere, and when nested, a no-op). The signal mask blocks both
    signals, which child processes started in the body inherit; Python-level handlers are
    swapped for ones that only record the signal (a signal can still reach the process
    through a thread that does not block it). On exit the handlers and the mask are restored,
    and a held-back signal is raised again, so it does what it normally does
    (KeyboardInterrupt, ``Terminated``) at the end of the ``with`` statement.

    ``repo``: a ``git.Repo`` the body uses. Its long-lived ``git cat-file`` helpers (which
    GitPython reads objects through, e.g. for ``repo.head.commit``) are restarted inside the
    section: started earlier, they would not block the signals, and a Ctrl-C sent to the
    process group would kill them half-way through the body.
    """
    global _depth
    if threading.current_thread() is not threading.main_thread() or _depth:
        yield
        return
    caught: list[int] = []
    saved = {s: signal.getsignal(s) for s in SIGNALS}
    _depth += 1
    mask = _block()
    try:
        if repo is not None:
            repo.git.clear_cache()    # the next object read starts a helper that blocks too
        for signum, handler in saved.items():
            if handler not in (signal.SIG_IGN, None):   # None: set outside Python; leave it
                signal.signal(signum, lambda s, frame: caught.append(s))
        yield
    finally:
        _depth -= 1
        _unblock(mask)              # a pending signal is delivered now, to the recorder
        for signum, handler in saved.items():
            if handler is not None:
                signal.signal(signum, handler)
        for held in dict.fromkeys(caught):  # deliver what was held back, in order
            signal.raise_signal(held)


def _block() -> set | None:
    if not hasattr(signal, "pthread_sigmask"):   # not on Windows: handlers alone defer there
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def _unblock(mask: set | None) -> None:
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def hold_for_exit() -> None:
    """Block SIGINT and SIGTERM for the rest of the process (main thread): the command's
    outcome and exit code are decided, and a late signal must not turn it into a traceback
    during interpreter shutdown. A no-op outside the main thread."""
    if threading.current_thread() is threading.main_thread():
        _block()
