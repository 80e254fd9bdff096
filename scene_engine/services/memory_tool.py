"""Anthropic's memory tool on a store: its six commands over the scenes, through the sandbox
(docs/DESIGN.md "Host folding", issue 25).

The memory tool (``memory_20250818``) leaves the storage to the application: Claude sends
``view``, ``create``, ``str_replace``, ``insert``, ``delete`` and ``rename`` on paths under
``/memories``. Here ``/memories`` is the store's ``scenes/`` folder and every command is one
or two calls of the sandbox's tools in an open batch of no memories
(``HostFolds.begin(edit=True)``, ``transaction.run_edit_batch``), so the same rules hold as
for any batch: read (``view``) before change, two scenes read before a new one, one new scene
a batch, the cap, a person's lines kept, a delete only as part of a merge.

Order of a turn:

1. the first command opens a batch (the store lock for a lease);
2. each command: the path checked (``/memories/NAME.md``, no folders, no traversal), then
   ``view`` lists the scenes (summary and heat) or shows a scene with line numbers (it
   counts as read); ``create`` writes a whole scene (a header with a summary is added when
   the text has none); ``str_replace`` replaces one exact piece; ``insert`` puts lines at a
   line number; ``delete`` is the soft delete (``[DELETED]``: refused unless another scene
   took its text, ``merged_from``); ``rename`` writes the scene under the new name with
   ``merged_from`` naming the old and deletes the old (a rename, in the history too);
3. ``flush()`` (end of the conversation turn): the batch checked and committed, one commit,
   or ``FoldProblems`` with what to fix (the batch stays open). A refusal is a
   ``MemoryToolError`` whose text is the tool's error for the model.
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
import threading
from typing import NoReturn

from scene_engine.core.errors import SceneEngineError
from scene_engine.services.host_fold import (
    LEASE,
    FoldClosed,
    FoldProblems,
    HostFolds,
    check_lease,
)
from scene_engine.store.store import Store

ROOT = "/memories"
LINE_WIDTH = 6            # line numbers as the SDK's own file tool shows them


class MemoryToolError(SceneEngineError, RuntimeError):
    """A memory tool command refused; the message is the tool's error text for the model."""


class MemoryTool:
    """The memory tool's commands on ``store`` for ``holder`` (a name in the history: the
    application's). ``lease``: seconds an open batch waits for the next command. Methods
    return the tool's result text; they raise ``MemoryToolError`` (the model reads it)."""

    def __init__(self, store: Store, holder: str = "memory tool", lease: float = LEASE):
        check_lease(lease)
        self.store, self.holder = store, holder
        self.folds = HostFolds(store, lease)
        self.token: str | None = None
        self.done: list[str] = []          # what this batch did, for its commit message
        self._opening = threading.Lock()

    # ------------------------------------------------------------ the six commands

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        """The scenes (``/memories``: name, size, heat, summary) or one scene with line
        numbers (``view_range`` [first, last], last -1 for the end)."""
        name = scene_path(path, folder_ok=True)
        if name is None:
            return self._run(_listing)
        self._not_left_alone(name, path)
        text = self._tool("read_file", {"path": name})
        lines = text.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()              # the end of the last line, not a line (as insert counts)
        first, last = _shown_range(view_range, len(lines))
        shown = [f"{first + i:>{LINE_WIDTH}}\t{line}"
                 for i, line in enumerate(lines[first - 1:last])]
        return f"Here's the content of {path} with line numbers:\n" + "\n".join(shown)

    def create(self, path: str, file_text: str) -> str:
        """Write a new scene; an existing one (on disk or made this turn, in any letter
        case) is refused, as the SDK's own memory tool refuses it: change it with
        ``str_replace`` or ``insert``. An empty text is refused: a scene is what it holds
        (an empty file would be a scene with nothing to recall, and only ``delete`` ends
        one)."""
        name = self._not_left_alone(_named(path), path)
        _text("file_text", file_text)
        if not file_text.strip():
            raise MemoryToolError(
                "`file_text` is empty, and a scene cannot be: each scene is a part of the "
                "person's life or work told in its text, with a summary made from it. Write "
                "what the scene should hold (to remove a scene, move its text into another "
                "and delete it).")
        if self._run(lambda job: _current(job, name))[1] is not None:
            raise MemoryToolError(f"File {path} already exists: view it, then change it with "
                                  "str_replace or insert")
        self._tool("write_to_file", {"path": name, "content": with_header(file_text)})
        self.done.append(f"wrote {name}")
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace the one occurrence of ``old_str`` (when the header repeats it, as a
        summary made from the first line does, the one in the body)."""
        name = self._not_left_alone(_named(path), path)
        _text("old_str", old_str, empty=False)
        _text("new_str", new_str)
        canonical, text = self._run(lambda job: _viewed(job, name, path))
        new = _replaced(text, old_str, new_str, path)
        self._tool("write_to_file", {"path": canonical, "content": new})
        self.done.append(f"edited {canonical}")
        return f"The file {path} has been edited."

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """Put ``insert_text`` after line ``insert_line`` (0: at the top), the lines counted
        as the SDK's own memory tool counts them (no empty line after the last newline); the
        file ends with a newline."""
        name = self._not_left_alone(_named(path), path)
        _text("insert_text", insert_text)
        canonical, text = self._run(lambda job: _viewed(job, name, path))
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if isinstance(insert_line, bool) or not isinstance(insert_line, int) \
                or not 0 <= insert_line <= len(lines):
            raise MemoryToolError(f"Invalid `insert_line` parameter: {insert_line!r}. It should "
                                  f"be within the range [0, {len(lines)}].")
        lines.insert(insert_line, insert_text.rstrip("\n"))
        self._tool("write_to_file", {"path": canonical, "content": "\n".join(lines) + "\n"})
        self.done.append(f"edited {canonical}")
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        """The soft delete: refused unless another scene took this one's text."""
        name = self._not_left_alone(_named(path), path)
        self._tool("write_to_file", {"path": name, "content": "[DELETED]"})
        self.done.append(f"deleted {name}")
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        """The scene under a new name, ``merged_from`` naming the old one; the old deleted.
        Both steps or neither: a refused delete (a pinned scene) takes the copy back."""
        old, new = self._not_left_alone(_named(old_path), old_path), _named(new_path)
        said = self._run(lambda job: _rename(job, old, new))
        if said.startswith("Error: "):
            raise MemoryToolError(in_memory_terms(said.removeprefix("Error: ")))
        self.done.append(said)
        return f"Successfully renamed {old_path} to {new_path}"

    # ------------------------------------------------------------ the turn

    def flush(self) -> dict:
        """Check and commit what this turn changed: ``{"batch", "commit", "counts", ...}``
        (``batch`` None when nothing changed). Raises ``FoldProblems`` (the batch stays open:
        fix and flush again) or ``MemoryToolError`` (the batch ended; nothing written)."""
        if self.token is None:
            return {"batch": None, "commit": None, "counts": {}}
        summary = f"memory tool ({self.holder}): " + "; ".join(self.done or ["no change"])
        try:
            done = self.folds.commit(self.token, summary)
        except FoldProblems:
            raise                          # still open: the model fixes and flushes again
        except SceneEngineError as exc:    # the batch ended with nothing written
            self._closed()
            raise MemoryToolError(" ".join(str(exc).split())) from None
        self._closed()
        return done

    def abort(self) -> None:
        """Drop what this turn changed; nothing is written."""
        if self.token is not None:
            with contextlib.suppress(FoldClosed):       # it ended already: nothing to drop
                self.folds.abort(self.token)
            self._closed()

    # ------------------------------------------------------------ helpers

    def _open(self) -> str:
        with self._opening:       # commands at once on one tool open one batch, not two
            if self.token is None:
                begun = self.folds.begin(self.holder, edit=True)
                assert begun is not None, "an edit batch always starts"
                self.token, self.done = begun["batch"], []
            return self.token

    def _closed(self) -> None:
        self.token, self.done = None, []

    def _tool(self, tool: str, arguments: dict) -> str:
        try:
            text = self.folds.call(self._open(), tool, arguments)
        except FoldClosed as exc:
            self._ended(exc)
        if text.startswith("Error: "):
            raise MemoryToolError(in_memory_terms(text.removeprefix("Error: ")))
        return text

    def _not_left_alone(self, name: str, path: str) -> str:
        """``name``, unless the turn's batch leaves that scene alone (a person's file it
        cannot read: not UTF-8, a broken header, conflict markers): then ``MemoryToolError``
        saying why and where to look, not "does not exist"."""
        why = self._run(lambda job: _left_alone(job, name))
        if why:
            raise MemoryToolError(f"{path} is a person's file the memory tool leaves alone: "
                                  f"{why}")
        return name

    def _run(self, fn):
        try:
            return self.folds.run(self._open(), fn)
        except FoldClosed as exc:
            self._ended(exc)

    def _ended(self, exc: FoldClosed) -> NoReturn:
        """The turn's batch ended under a command (its lease ran out): say so, and that its
        changes are gone, whichever step of the command found it."""
        self._closed()
        raise MemoryToolError(f"{exc} (the changes since the last flush are gone: view "
                              f"{ROOT} and make them again)") from None


def _shown_range(view_range, count: int) -> tuple[int, int | None]:
    """(first line, end of the slice) shown of a file of ``count`` lines, as the SDK's own
    memory tool slices them: a ``view_range`` of two whole numbers [first, last] (last -1:
    the end; a range past the end shows no line), one of another length the whole file."""
    if not view_range:
        return 1, count
    if not isinstance(view_range, list | tuple) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in view_range):
        raise MemoryToolError("view_range is [first line, last line] (last -1: the end)")
    if len(view_range) != 2:
        return 1, count
    return max(1, view_range[0]), count if view_range[1] == -1 else view_range[1]


def scene_path(path: str, folder_ok: bool = False) -> str | None:
    """The scene file name ``path`` names (``/memories/NAME.md``), or None for ``/memories``
    itself when ``folder_ok``. Empty and ``.`` steps are dropped (``/memories//a.md`` and
    ``/memories/./a.md`` are ``/memories/a.md``, as the SDK's own tool takes them). Raises
    ``MemoryToolError`` for a path outside ``/memories``, with ``..``, in a folder below it,
    or not a ``.md`` file."""
    if not isinstance(path, str) or not path.startswith(ROOT):
        raise MemoryToolError(f"Path must start with {ROOT}, got: {str(path)[:200]}")
    rest = path[len(ROOT):]
    if rest and (not rest.startswith("/") or ".." in rest.split("/") or "\\" in rest):
        raise MemoryToolError(f"Path {path} would escape {ROOT} directory")
    name = "/".join(step for step in rest.split("/") if step not in ("", "."))
    if not name:
        if folder_ok:
            return None
        raise MemoryToolError(f"{ROOT} is the folder of the scenes; name a file in it, "
                              f"e.g. {ROOT}/work.md")
    if "/" in name:
        raise MemoryToolError(f"{path}: scenes are plain files directly in {ROOT} (no "
                              f"folders); use {ROOT}/{posixpath.basename(name) or 'NAME.md'}")
    if not name.endswith(".md"):
        raise MemoryToolError(f"{path}: a scene is a Markdown file; use a name ending in "
                              ".md")
    return name


def _named(path: str) -> str:
    name = scene_path(path)
    assert name is not None
    return name


def with_header(text: str) -> str:
    """``text`` as a scene: as it is when it starts with a YAML header, else with one whose
    summary is its first line (the scene rules need a summary)."""
    text = text.removeprefix("\ufeff")           # a byte order mark is not text
    if text.lstrip().startswith("---"):
        return text
    first = next((line.strip().lstrip("#").strip() for line in text.splitlines()
                  if line.strip()), "") or "Notes"
    summary = first if len(first) <= 120 else first[:117].rstrip() + "..."
    return f"---\nsummary: {json.dumps(summary, ensure_ascii=False)}\n---\n{text}"


def _viewed(job, name: str, path: str) -> tuple[str, str]:
    """(the name as spelt, its text) of a scene the model may change: it exists and was
    viewed (or made) in this turn. Raises ``MemoryToolError`` before anything of its text is
    said (a count of matches would tell what the model has not read)."""
    canonical, text = _current(job, name)
    if text is None:
        raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
    if job.context.canonical(canonical) and not job.context.seen(canonical):
        raise MemoryToolError(f"you have not viewed {path} in this turn, so changing it could "
                              f"erase what it holds. View it first (view {path}).")
    return canonical, text


def _left_alone(job, name: str) -> str | None:
    """Why ``job`` leaves scene ``name`` (in any letter case) alone, or None."""
    import unicodedata

    key = unicodedata.normalize("NFC", name).casefold()
    return next((why for n, why in job.left_alone.items()
                 if unicodedata.normalize("NFC", n).casefold() == key), None)


def _current(job, name: str) -> tuple[str, str | None]:
    """(the name as the store spells it, its text with this batch's changes) in ``job``;
    None for a name that is not there (or deleted in this batch). Reading it this way does
    not count as read: the sandbox's policy still asks for a ``view`` before a change."""
    import unicodedata

    def key(text: str) -> str:
        return unicodedata.normalize("NFC", text).casefold()

    staged = job.box.pending()
    made = next((n for n in staged if key(n) == key(name)), None)   # this turn's spelling
    canonical = job.context.canonical(name) or made or name
    if canonical in staged:
        content = staged[canonical]
        return canonical, content if isinstance(content, str) else None
    return canonical, job.scene_texts.get(canonical)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(argument: str, value, empty: bool = True) -> None:
    """``MemoryToolError`` unless ``value`` is text (non-empty unless ``empty``) that a file
    can hold: the SDK hands the model's input over unchecked."""
    if not isinstance(value, str):
        raise MemoryToolError(f"`{argument}` must be text, not {type(value).__name__}")
    bad = _LONE_SURROGATE.search(value)
    if bad:
        raise MemoryToolError(f"`{argument}` holds a lone surrogate ({bad.group()!a} at "
                              f"character {bad.start()}), which no file can store as UTF-8; "
                              "send the character itself. Nothing else of this turn changed.")
    if not empty and not value:
        raise MemoryToolError(f"`{argument}` must not be empty: copy the exact text to "
                              "replace from a view of the file")


def _replaced(text: str, old: str, new: str, path: str) -> str:
    """``text`` with its one occurrence of ``old`` replaced; when it occurs more than once
    and exactly once in the body, that one. Raises ``MemoryToolError``."""
    found = text.count(old)
    if found == 1:
        return text.replace(old, new, 1)
    if found == 0:
        raise MemoryToolError(f"No replacement was performed, old_str did not appear verbatim "
                              f"in {path}: view it and copy the text exactly")
    header, body = _split_header(text)
    if body.count(old) == 1:
        return header + body.replace(old, new, 1)
    lines = [i + 1 for i, line in enumerate(text.split("\n")) if old in line]
    raise MemoryToolError(f"No replacement was performed: old_str occurs {found} times in "
                          f"{path} (lines {', '.join(map(str, lines)) or 'across several'}); "
                          "include more of the text around it so it occurs once")


def _split_header(text: str) -> tuple[str, str]:
    """(the YAML header with its fences, the rest) of a scene text; ("", text) without one."""
    match = re.match(r"\A(\ufeff?---[^\n]*\n.*?\n---[ \t]*\n)", text, re.S)
    return (match.group(1), text[match.end():]) if match else ("", text)


# The sandbox's words for its tools, as the memory tool's model knows them.
_TERMS = ((re.compile(r'read_file\(path="([^"]+)"\)'), rf"view {ROOT}/\1"),
          (re.compile(r"\bread_file\b"), "view"),
          (re.compile(r"\bwrite_to_file\b"), "create"),
          (re.compile(r"\breplace_in_file\b"), "str_replace"),
          (re.compile(r"write \[DELETED\] to ([\w.\-]+)"), rf"delete {ROOT}/\1"),
          (re.compile(r"then write `?\[DELETED\]`? to the other"), "then delete the other"))


def in_memory_terms(text: str) -> str:
    """A sandbox or rule message with the memory tool's command names for the sandbox's
    tools (``view`` for read_file, ``create`` for write_to_file, ...)."""
    for pattern, replacement in _TERMS:
        text = pattern.sub(replacement, text)
    return text


def _rename(job, old: str, new: str) -> str:
    """Both steps of a rename in the batch's thread: the copy under ``new`` (``merged_from``
    naming ``old``) and ``old``'s delete; a refused delete takes the copy back. Returns what
    it did ("renamed A to B") or the sandbox's refusal ("Error: ...")."""
    canonical, text = _current(job, old)
    if text is not None and job.context.canonical(canonical) is None:
        return _move_new(job, canonical, new, text)
    try:
        canonical, text = _renamed(job, old, new)
    except MemoryToolError as exc:
        return f"Error: {exc}"
    made = job.box.execute("write_to_file", {"path": new, "content": text})
    if made.startswith("Error: "):
        return made
    gone = job.box.execute("write_to_file", {"path": canonical, "content": "[DELETED]"})
    if gone.startswith("Error: "):
        job.box.unstage(new)
        return gone
    return f"renamed {canonical} to {new}"


def _move_new(job, old: str, new: str, text: str) -> str:
    """A rename of a scene made in this turn: its text staged under the new name instead
    (it was never on disk, so there is nothing to merge); the old name staged back when the
    new one is refused."""
    if _current(job, new)[1] is not None:
        return f"Error: The destination {ROOT}/{new} already exists"
    job.box.unstage(old)
    made = job.box.execute("write_to_file", {"path": new, "content": text})
    if made.startswith("Error: "):
        job.box.stage(old, text)            # as it was: the model's own text, checked then
        return made
    return f"renamed {old} (new this turn) to {new}"


def _renamed(job, old: str, new: str) -> tuple[str, str]:
    """(the old scene's name as spelt, its text under a header whose ``merged_from`` names
    it). Raises ``MemoryToolError`` for a scene not there, not viewed, or a taken new name."""
    from scene_engine.store.scene import Scene, parse_scene, render_scene

    canonical, text = _current(job, old)
    if text is None:
        raise MemoryToolError(f"The path {ROOT}/{old} does not exist")
    if _current(job, new)[1] is not None:
        raise MemoryToolError(f"The destination {ROOT}/{new} already exists")
    if not job.context.seen(canonical):
        raise MemoryToolError(f"you have not viewed {ROOT}/{canonical} in this turn, so "
                              f"moving it could lose what it holds. View it first.")
    scene = parse_scene(text, name=canonical)
    meta = {k: v for k, v in scene.meta.items() if k != "merged_from"}
    meta["merged_from"] = [canonical]
    return canonical, render_scene(Scene(name=new, meta=meta, body=scene.body, header="yaml",
                                         raw={}))


def _listing(job) -> str:
    """The ``view`` of ``/memories``: each scene with its size, heat and summary, staged
    changes included."""
    from scene_engine.store.scene import parse_scene

    staged = job.box.pending()
    rows = []
    for name in sorted(set(job.scene_texts) | set(staged)):
        text = staged.get(name, job.scene_texts.get(name))
        if not isinstance(text, str):
            continue                       # deleted in this turn
        meta = job.scene_meta.get(name)
        if meta is None or name in staged:
            meta = parse_scene(text, name=name).meta
        size = len(text.encode("utf-8"))
        shown = f"{size / 1024:.1f}K" if size >= 1024 else f"{size}"
        rows.append(f"{shown}\t{ROOT}/{name}\theat {int(meta.get('heat') or 0)}\t"
                    f"{' '.join(str(meta.get('summary') or '').split())}")
    head = (f"The scenes in {ROOT}, one Markdown file per part of the person's life or work "
            "(size, path, heat: how often it changed, summary). View a scene before you "
            "change it:")
    aside = [f"{ROOT}/{name}: {why}" for name, why in job.left_alone.items()]
    if aside:                   # listed, so a model does not take them for names free to use
        rows.append("Left alone (a person's files this tool cannot use): " + "; ".join(aside))
    return head + "\n" + ("\n".join(rows) if rows else "(no scenes yet)")
