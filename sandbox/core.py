"""The Sandbox: three file tools for a model over one flat directory, with staged, atomic writes.

docs/DESIGN.md "The sandbox" is the contract. The model only ever gets strings back from
``execute``; the caller gets exceptions (ConflictError, ApplyError, RootError, NameRefused).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .arguments import ArgumentProblem, check_fields, parse_arguments
from .atomic import Planned, write_all
from .content import ContentProblem, check_content, count_occurrences, is_delete_marker
from .errors import ConflictError, RootError, SandboxError
from .model import DELETED, CallRecord, Change, Content
from .names import NameRefused, name_key, validate_name
from .rootdir import DiskProblem, Root, list_names, read_text
from .specs import tool_specs

log = logging.getLogger(__name__)

Policy = Callable[[Change], "str | None"]
TOOLS = ("read_file", "write_to_file", "replace_in_file")
_LIST_LIMIT = 30  # names listed in "does not exist" hints


class _Refusal(Exception):
    """Internal: a tool call is refused; ``str(exc)`` is the text after "Error: "."""


class _Conflict(Exception):
    """Internal: a staged file no longer matches its baseline on disk."""


def _short(value: object, limit: int = 80) -> str:
    """``repr`` of a model-sent value, cut so a huge or hostile path cannot flood a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Sandbox:
    """Read and change files under one root through the tools read_file, write_to_file and
    replace_in_file; everything is staged until ``apply()``.

    ``root``: an existing directory (str or PathLike); RootError if it is missing or a link.
    ``readable``: None (any legal file may be read) or names the model may read (the files it was
    shown); files it creates and names passed to ``note_seen`` are added. NameRefused if a name is
    illegal. ``suffixes``: allowed endings, each starting with "." (case-insensitive).
    ``max_content_chars``: limit for one file's content in characters.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        readable: Iterable[str] | None = None,
        suffixes: Iterable[str] = (".md",),
        max_content_chars: int = 200_000,
    ):
        self.suffixes = tuple(suffixes)
        if not self.suffixes or any(not s.startswith(".") or len(s) < 2 for s in self.suffixes):
            raise ValueError(f"suffixes must be like '.md', got {self.suffixes!r}")
        if max_content_chars < 1:
            raise ValueError("max_content_chars must be positive")
        self.max_content_chars = max_content_chars
        self._max_bytes = 4 * max_content_chars  # UTF-8 needs at most 4 bytes a character
        self._root = Root(root)
        self._allowed: set[str] | None = None
        if readable is not None:
            self._allowed = {name_key(validate_name(n, self.suffixes)) for n in readable}
        self._baseline: dict[str, str | None] = {}
        self._staged: dict[str, tuple[str, Content]] = {}
        self._policies: list[Policy] = []
        self.read_names: set[str] = set()
        self.calls: list[CallRecord] = []
        self._call_name: str | None = None  # canonical name of the call in progress, for calls

    @property
    def root(self) -> Path:
        """Absolute path of the root directory."""
        return self._root.path

    # ----- caller API -------------------------------------------------------------------------

    def tool_specs(self) -> list[dict]:
        """OpenAI-style specs of the three tools (a new list each call)."""
        return tool_specs(self.suffixes)

    def add_policy(self, check: Policy) -> None:
        """Register ``check(change) -> str | None`` run before every model write/replace/delete.

        Returning a string refuses the change; the text reaches the model after "refused by
        policy:". A check that raises is treated as a refusal. ``stage()`` skips policies.
        """
        self._policies.append(check)

    def pending(self) -> dict[str, Content]:
        """Staged net changes: ``{canonical name: new content or DELETED}``, sorted by name."""
        return dict(sorted(self._staged.values()))

    def discard(self) -> None:
        """Drop every staged change and every conflict baseline (a fresh start on the files).

        The call record, ``read_names`` and the read allow-list are kept.
        """
        self._staged.clear()
        self._baseline.clear()

    def note_seen(self, name: str, content: str | None) -> None:
        """Record that the caller showed the model ``content`` of ``name`` (None: "absent").

        The name becomes readable, and ``content`` is its conflict baseline unless the sandbox
        already saw the file. Raises NameRefused for an illegal name.
        """
        name, key = self._resolve_for_caller(name)
        if self._allowed is not None:
            self._allowed.add(key)
        self._baseline.setdefault(key, content)

    def stage(self, name: str, content: Content) -> None:
        """Stage a change made by the caller itself (e.g. engine-owned headers).

        ``content``: text or DELETED. The name is validated; policies do not run. Raises
        NameRefused, TypeError for other content types, SandboxError when the file is unusable
        on disk, cannot be stored as UTF-8 or is deleted while absent.
        """
        if content is not DELETED and not isinstance(content, str):
            raise TypeError(f"content must be str or DELETED, not {type(content).__name__}")
        name, key = self._resolve_for_caller(name)
        try:
            current = self._view(name, key)
        except DiskProblem as exc:
            raise SandboxError(str(exc)) from None
        if content is DELETED and not isinstance(current, str):
            raise SandboxError(f"cannot delete {name}: it does not exist")
        if isinstance(content, str):
            try:
                content.encode("utf-8")
            except UnicodeEncodeError:
                raise SandboxError(f"content for {name} cannot be stored as UTF-8") from None
        self._put(key, name, content)

    def unstage(self, name: str) -> None:
        """Drop the staged change of ``name``, whatever it is: a caller taking back its own
        change of several steps when a later step was refused (a rename whose delete the
        policy refused). Policies do not run. Raises NameRefused for an illegal name."""
        _, key = self._resolve_for_caller(name)
        self._staged.pop(key, None)

    def apply(self) -> dict[str, Content]:
        """Write all staged changes; return them (as ``pending()``) and clear staging.

        First every file to change must still hold what the sandbox saw (its baseline: content
        first read, noted or snapshotted; or absence for a new file), else ConflictError
        (``.names``) and nothing is written; checked again once the temp files are written,
        just before the renames (their fsyncs take the longest: an edit made meanwhile would
        be replaced). Writing is temp file + fsync + rename per file, then
        a directory fsync; on failure everything written is restored and ApplyError is raised.
        Staging is kept after either error, so the caller may ``discard()`` or retry.
        """
        if not self._staged:
            return {}
        with self._root.open() as fd:
            write_all(fd, self._checked_plans(fd), recheck=lambda: self._checked_plans(fd))
        applied = self.pending()
        for key, (_name, new) in self._staged.items():
            self._baseline[key] = new if isinstance(new, str) else None
        self._staged.clear()
        return applied

    def execute(self, name: Any, arguments: Any) -> str:
        """Run one tool call from the model and return the text for the model; never raises.

        ``name``: tool name. ``arguments``: JSON object text (a Markdown code fence around it is
        removed) or a mapping. Returns the file text for read_file, a one-line confirmation for
        changes, or a refusal starting with "Error:" that says what was wrong and what to do.
        Every call is appended to ``calls``.
        """
        raw_path: str | None = None
        self._call_name = None
        try:
            handler = self._handlers().get(name) if isinstance(name, str) else None
            if handler is None:
                raise _Refusal(
                    f"unknown tool {_short(name)}. Available tools: {', '.join(TOOLS)}."
                )
            args = parse_arguments(arguments, 6 * self.max_content_chars + 10_000)
            path = args.get("path")
            raw_path = path if isinstance(path, str) else None
            result, ok = handler(args), True
        except (_Refusal, ArgumentProblem, ContentProblem, DiskProblem) as exc:
            result, ok = f"Error: {exc}", False
        except RootError as exc:
            result, ok = f"Error: the folder cannot be used right now ({exc}).", False
        except Exception as exc:  # a bug must not reach the model loop as an exception
            log.exception("sandbox tool %r failed", name)
            result, ok = (
                f"Error: internal error in the sandbox ({type(exc).__name__}); "
                "this call changed nothing. Try again or use another tool.",
                False,
            )
        tool = name if isinstance(name, str) else _short(name)
        self.calls.append(CallRecord(tool, raw_path, self._call_name, ok, result[:300]))
        return result

    # ----- tools ------------------------------------------------------------------------------

    def _handlers(self) -> dict[str, Callable[[dict], str]]:
        return {
            "read_file": self._read_file,
            "write_to_file": self._write_to_file,
            "replace_in_file": self._replace_in_file,
        }

    def _read_file(self, args: dict) -> str:
        check_fields(args, "read_file", ("path",))
        name, key = self._resolve(args["path"])
        current = self._view(name, key)
        if current is not None and not self._may_read(key):
            raise _Refusal(
                f"{name} is not available to read in this session. "
                f"Files you may read: {self._listing_hint()}."
            )
        if current is DELETED:
            raise _Refusal(
                f"{name} is marked as deleted in this session. To keep it, write its full "
                "content again with write_to_file."
            )
        if current is None:
            raise _Refusal(
                f"{name} does not exist. Files you may read: {self._listing_hint()}. "
                "Use write_to_file to create a new file."
            )
        assert isinstance(current, str)
        self.read_names.add(name)
        return current

    def _write_to_file(self, args: dict) -> str:
        check_fields(args, "write_to_file", ("path", "content"))
        name, key = self._resolve(args["path"])
        content: str = args["content"]
        current = self._view(name, key)
        old = current if isinstance(current, str) else None
        created = self._baseline[key] is None
        if is_delete_marker(content):
            if old is None:
                raise _Refusal(f"{name} does not exist, so there is nothing to delete.")
            self._check_policies(Change("delete", name, old, None, created))
            self._put(key, name, DELETED)
            return f"OK: {name} marked for deletion (removed when the changes are applied)."
        check_content(content, self.max_content_chars)
        self._check_policies(Change("write", name, old, content, created))
        self._put(key, name, content)
        verb = "created" if old is None else "updated"
        return f"OK: {name} {verb} ({len(content)} characters, staged)."

    def _replace_in_file(self, args: dict) -> str:
        check_fields(args, "replace_in_file", ("path", "old", "new"))
        name, key = self._resolve(args["path"])
        old_text: str = args["old"]
        new_text: str = args["new"]
        if not old_text:
            raise _Refusal("'old' is empty. Copy the exact text to replace from the file.")
        current = self._view(name, key)
        if current is not None and not self._may_read(key):
            raise _Refusal(
                f"{name} is not available in this session; only files you may read can be "
                f"edited piecewise. Files you may read: {self._listing_hint()}."
            )
        if current is DELETED:
            raise _Refusal(f"{name} is marked as deleted. Use write_to_file to write it anew.")
        if current is None:
            raise _Refusal(f"{name} does not exist. Use write_to_file to create it.")
        assert isinstance(current, str)
        count = count_occurrences(current, old_text)
        if count != 1:
            hint = (
                "Read the file and copy the exact text, including whitespace and line breaks."
                if count == 0
                else "Include more surrounding text so that 'old' occurs exactly once."
            )
            raise _Refusal(f"'old' occurs {count} times in {name}; it must occur exactly once. {hint}")
        result = current.replace(old_text, new_text, 1)  # str.replace is literal, never a pattern
        if is_delete_marker(result):
            raise _Refusal("to delete a file, use write_to_file with the content [DELETED].")
        check_content(result, self.max_content_chars)
        self._check_policies(Change("replace", name, current, result, self._baseline[key] is None))
        self._put(key, name, result)
        return f"OK: replaced 1 occurrence in {name} (now {len(result)} characters, staged)."

    # ----- helpers ----------------------------------------------------------------------------

    def _resolve(self, raw: object) -> tuple[str, str]:
        """Canonical ``(name, key)`` for a model-sent path; _Refusal when illegal or ambiguous."""
        try:
            name, key = self._canonical(raw)
        except NameRefused as exc:
            raise _Refusal(f"invalid path {_short(raw)}: {exc}") from None
        self._call_name = name
        return name, key

    def _resolve_for_caller(self, raw: str) -> tuple[str, str]:
        """Like ``_resolve`` but raising NameRefused/SandboxError for the caller."""
        try:
            return self._canonical(raw)
        except DiskProblem as exc:
            raise SandboxError(str(exc)) from None

    def _canonical(self, raw: object) -> tuple[str, str]:
        """Staged spelling, else the on-disk spelling, else the NFC name; plus its key."""
        nfc = validate_name(raw, self.suffixes)
        key = name_key(nfc)
        if key in self._staged:
            return self._staged[key][0], key
        with self._root.open() as fd:
            spellings = list_names(fd, self.suffixes).get(key, [])
        if len(spellings) > 1:
            raise DiskProblem(
                f"{' and '.join(sorted(spellings))} differ only by case or accents, so the name is "
                "ambiguous. Leave these files alone and tell the user."
            )
        return (spellings[0] if spellings else nfc), key

    def _view(self, name: str, key: str) -> Content | None:
        """What the model sees now: staged content, else disk content, else None (absent).

        Snapshots the disk state as the conflict baseline the first time a name is touched.
        Raises DiskProblem for links, non-regular, oversized or non-UTF-8 files.
        """
        if key in self._staged:
            return self._staged[key][1]
        with self._root.open() as fd:
            try:
                text: str | None = read_text(fd, name, self._max_bytes)[0]
            except FileNotFoundError:
                text = None
        self._baseline.setdefault(key, text)
        return text

    def _put(self, key: str, name: str, content: Content) -> None:
        """Stage ``content`` as a net change against the baseline (no-ops are dropped)."""
        base = self._baseline.get(key)
        if (content is DELETED and base is None) or content == base:
            self._staged.pop(key, None)
        else:
            self._staged[key] = (name, content)

    def _may_read(self, key: str) -> bool:
        """Allow-list check: shown files, noted files and files holding staged text are readable."""
        if self._allowed is None or key in self._allowed:
            return True
        return isinstance(self._staged.get(key, (None, None))[1], str)

    def _check_policies(self, change: Change) -> None:
        """Run caller policies; the first refusal (or exception) becomes a _Refusal."""
        for check in self._policies:
            try:
                verdict = check(change)
            except Exception as exc:
                log.warning("sandbox policy %r raised %r", check, exc)
                raise _Refusal(
                    f"refused by policy: the policy check failed ({type(exc).__name__}: {exc}). "
                    "The change was not staged."
                ) from None
            if verdict is not None:
                raise _Refusal(f"refused by policy: {verdict}")

    def _listing_hint(self) -> str:
        """Names the model may read now (capped), for hints in refusals."""
        with self._root.open() as fd:
            on_disk = list_names(fd, self.suffixes)
        names = {key: spellings[0] for key, spellings in on_disk.items()}
        for key, (name, content) in self._staged.items():
            if content is DELETED:
                names.pop(key, None)
            else:
                names[key] = name
        visible = sorted(n for k, n in names.items() if self._may_read(k))
        if not visible:
            return "(none)"
        more = f" and {len(visible) - _LIST_LIMIT} more" if len(visible) > _LIST_LIMIT else ""
        return ", ".join(visible[:_LIST_LIMIT]) + more

    def _checked_plans(self, fd: int) -> list[Planned]:
        """The staged changes as ``Planned`` steps, each file checked against its baseline;
        ConflictError naming those that changed on disk."""
        on_disk = list_names(fd, self.suffixes)
        plans, conflicts = [], []
        for key, (name, new) in sorted(self._staged.items(), key=lambda kv: kv[1][0]):
            try:
                plans.append(self._plan(fd, on_disk.get(key, []), key, name, new))
            except _Conflict:
                conflicts.append(name)
        if conflicts:
            raise ConflictError(conflicts)
        return plans

    def _plan(self, fd: int, spellings: list[str], key: str, name: str, new: Content) -> Planned:
        """Check one staged file against its baseline; _Conflict when it changed on disk."""
        if not spellings:
            disk, mode = None, None
        elif spellings != [name]:
            raise _Conflict(name)
        else:
            try:
                disk, mode = read_text(fd, name, self._max_bytes)
            except (DiskProblem, FileNotFoundError):
                raise _Conflict(name) from None
        if disk != self._baseline.get(key):
            raise _Conflict(name)
        return Planned(name, new, disk, mode)
