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

from scene_engine.core.errors import SceneEngineError
from scene_engine.services.host_fold import LEASE, FoldClosed, FoldProblems, HostFolds
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
        self.store, self.holder = store, holder
        self.folds = HostFolds(store, lease)
        self.token: str | None = None
        self.done: list[str] = []          # what this batch did, for its commit message

    # ------------------------------------------------------------ the six commands

    def view(self, path: str, view_range: list[int] | None = None) -> str:
        """The scenes (``/memories``: name, size, heat, summary) or one scene with line
        numbers (``view_range`` [first, last], last -1 for the end)."""
        name = scene_path(path, folder_ok=True)
        if name is None:
            return self._run(_listing)
        text = self._tool("read_file", {"path": name})
        lines = text.split("\n")
        first, last = 1, len(lines)
        if view_range:
            if len(view_range) != 2 or not all(isinstance(n, int) for n in view_range):
                raise MemoryToolError("view_range is [first line, last line] (last -1: the end)")
            first = max(1, view_range[0])
            last = len(lines) if view_range[1] == -1 else min(len(lines), view_range[1])
        shown = [f"{i:>{LINE_WIDTH}}\t{lines[i - 1]}" for i in range(first, last + 1)]
        return f"Here's the content of {path} with line numbers:\n" + "\n".join(shown)

    def create(self, path: str, file_text: str) -> str:
        """Write a whole scene (new or, once viewed, replaced)."""
        name = _named(path)
        self._tool("write_to_file", {"path": name, "content": with_header(file_text)})
        self.done.append(f"wrote {name}")
        return f"File created successfully at: {path}"

    def str_replace(self, path: str, old_str: str, new_str: str) -> str:
        """Replace the one occurrence of ``old_str``."""
        name = _named(path)
        self._tool("replace_in_file", {"path": name, "old": old_str, "new": new_str})
        self.done.append(f"edited {name}")
        return f"The file {path} has been edited."

    def insert(self, path: str, insert_line: int, insert_text: str) -> str:
        """Put ``insert_text`` after line ``insert_line`` (0: at the top)."""
        name = _named(path)
        canonical, text = self._run(lambda job: _current(job, name))
        if text is None:
            raise MemoryToolError(f"The path {path} does not exist. Please provide a valid "
                                  "path.")
        lines = text.split("\n")
        if not isinstance(insert_line, int) or not 0 <= insert_line <= len(lines):
            raise MemoryToolError(f"insert_line must be between 0 and {len(lines)} for "
                                  f"{path}")
        added = insert_text.removesuffix("\n").split("\n")
        new = "\n".join(lines[:insert_line] + added + lines[insert_line:])
        self._tool("write_to_file", {"path": canonical, "content": new})
        self.done.append(f"edited {canonical}")
        return f"The file {path} has been edited."

    def delete(self, path: str) -> str:
        """The soft delete: refused unless another scene took this one's text."""
        name = _named(path)
        self._tool("write_to_file", {"path": name, "content": "[DELETED]"})
        self.done.append(f"deleted {name}")
        return f"Successfully deleted {path}"

    def rename(self, old_path: str, new_path: str) -> str:
        """The scene under a new name, ``merged_from`` naming the old one; the old deleted."""
        old, new = _named(old_path), _named(new_path)
        canonical, text = self._run(lambda job: _renamed(job, old, new))
        self._tool("write_to_file", {"path": new, "content": text})
        self._tool("write_to_file", {"path": canonical, "content": "[DELETED]"})
        self.done.append(f"renamed {canonical} to {new}")
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
            self._closed()
            raise MemoryToolError(f"{exc} (the changes since the last flush are gone: view "
                                  f"{ROOT} and make them again)") from None
        if text.startswith("Error: "):
            raise MemoryToolError(text.removeprefix("Error: "))
        return text

    def _run(self, fn):
        try:
            return self.folds.run(self._open(), fn)
        except FoldClosed as exc:
            self._closed()
            raise MemoryToolError(str(exc)) from None


def scene_path(path: str, folder_ok: bool = False) -> str | None:
    """The scene file name ``path`` names (``/memories/NAME.md``), or None for ``/memories``
    itself when ``folder_ok``. Raises ``MemoryToolError`` for a path outside ``/memories``,
    with ``..``, in a folder below it, or not a ``.md`` file."""
    if not isinstance(path, str) or not path.startswith(ROOT):
        raise MemoryToolError(f"Path must start with {ROOT}, got: {str(path)[:200]}")
    rest = path[len(ROOT):]
    if rest in ("", "/"):
        if folder_ok:
            return None
        raise MemoryToolError(f"{ROOT} is the folder of the scenes; name a file in it, "
                              f"e.g. {ROOT}/work.md")
    if not rest.startswith("/") or ".." in rest.split("/") or "\\" in rest:
        raise MemoryToolError(f"Path {path} would escape {ROOT} directory")
    name = rest[1:]
    if posixpath.normpath(name) != name or "/" in name:
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
    if text.lstrip().startswith("---"):
        return text
    first = next((line.strip().lstrip("#").strip() for line in text.splitlines()
                  if line.strip()), "") or "Notes"
    summary = first if len(first) <= 120 else first[:117].rstrip() + "..."
    return f"---\nsummary: {json.dumps(summary, ensure_ascii=False)}\n---\n{text}"


def _current(job, name: str) -> tuple[str, str | None]:
    """(the name as the store spells it, its text with this batch's changes) in ``job``;
    None for a name that is not there (or deleted in this batch). Reading it this way does
    not count as read: the sandbox's policy still asks for a ``view`` before a change."""
    canonical = job.context.canonical(name) or name
    staged = job.box.pending()
    if canonical in staged:
        content = staged[canonical]
        return canonical, content if isinstance(content, str) else None
    return canonical, job.scene_texts.get(canonical)


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
    head = (f"Here're the scenes in {ROOT} (one Markdown file per area of the person's life "
            "or work; heat: how often it changed; view one before you change it):")
    return head + "\n" + ("\n".join(rows) if rows else "(no scenes yet)")
