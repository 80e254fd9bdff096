"""One error root for the engine (docs/DESIGN.md "Errors"), and an exception as plain text.

Every error the engine raises to a caller derives from ``SceneEngineError``, which carries the
command line's exit code: 1, the operation failed (a batch, git, a model, a busy store), or 2,
bad usage or bad input (``InputError``, which is also a ``ValueError`` for callers that catch
that). The command line and the MCP server each turn it into a message in one place
(``cli.base.handled``, ``mcpserver.server``); nothing looks an error up by name.

The exceptions the standard library raises for the disk (``OSError``), the signals
(``interrupts.Terminated``) and a closed pipe stay what they are: the faces handle them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["SceneEngineError", "InputError", "UnavailableError", "NotUtf8Error",
           "plain_problems", "plain_error"]


class SceneEngineError(Exception):
    """The root of the engine's errors; ``exit_code`` 1 (the operation failed) unless a
    subclass or the raiser says otherwise (``exit_code=`` keyword)."""

    exit_code: int = 1

    def __init__(self, *args: object, exit_code: int | None = None) -> None:
        super().__init__(*args)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(SceneEngineError, ValueError):
    """Bad usage or bad input (exit code 2): nothing was done, say what to give instead."""

    exit_code = 2


class UnavailableError(SceneEngineError, RuntimeError):
    """A service the engine needs (Postgres, the git server) does not answer now: nothing was
    done, the same call later may work (HTTP 503)."""


class NotUtf8Error(SceneEngineError, UnicodeDecodeError):
    """A file a person may edit (a scene, the persona, a ledger, the config) or one of its
    versions in git holds bytes that are not UTF-8: one line naming the file and the byte,
    pointing at ``scenes doctor`` (which names every such file). Also a
    ``UnicodeDecodeError`` (``start`` is the byte), so the readers that leave such a file
    alone (the batch, ``list``, ``doctor``) still catch it as one."""

    def __init__(self, where: str, exc: UnicodeDecodeError):
        UnicodeDecodeError.__init__(self, exc.encoding, exc.object, exc.start, exc.end,
                                    exc.reason)
        self.where = where

    def __str__(self) -> str:
        return (f"{self.where} is not UTF-8 (byte {self.start}): save it as UTF-8; "
                "`scenes doctor` names every such file")

    def __reduce__(self):            # a worker thread or process hands it on whole
        return _not_utf8, (self.where, self.encoding, self.object, self.start, self.end,
                           self.reason)


def _not_utf8(where: str, *args) -> NotUtf8Error:
    return NotUtf8Error(where, UnicodeDecodeError(*args))


def plain_problems(exc: ValidationError, arguments: bool = False) -> str:
    """pydantic's complaint as one plain line, ``name: what is wrong`` for each field, "; "
    between fields: the one wording the command line, the config file and the MCP tools use,
    never with the help URL that pydantic's own text carries. ``arguments``: the errors of a
    tool's arguments, each named by its argument (a union's alternatives joined by "or") with
    the value refused."""
    fields: dict[str, list[str]] = {}
    values: dict[str, str] = {}
    for err in exc.errors(include_url=False):
        path = [str(part) for part in err.get("loc") or ()]
        name = (path[0] if arguments else ".".join(path)) if path else "input"
        said = fields.setdefault(name, [])
        text = err.get("msg", "invalid").removeprefix("Value error, ")
        if said:            # "... a valid integer or input should be a valid string"
            text = text[:1].lower() + text[1:]
        if text not in said:
            said.append(text)
        if arguments and err.get("type") != "missing":
            values.setdefault(name, f" (given {err.get('input')!r})")
    return "; ".join(f"{name}: {' or '.join(said)}{values.get(name, '')}"
                     for name, said in fields.items())


def plain_error(exc: BaseException) -> str:
    """An exception as text for a person or an agent: a pydantic ``ValidationError`` as
    ``plain_problems`` (its own text carries a help URL and a dump of the input), anything else
    as ``str(exc)``. For the places that report an exception of any kind."""
    from pydantic import ValidationError

    return plain_problems(exc) if isinstance(exc, ValidationError) else str(exc)
