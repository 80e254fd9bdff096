"""``SceneMemoryTool``: the anthropic SDK's memory tool class over a store's scenes
(docs/DESIGN.md "Host folding"; the commands are ``services.memory_tool.MemoryTool``'s).

    from anthropic import Anthropic
    from scene_engine.memorytool.sdk import SceneMemoryTool

    memory = SceneMemoryTool("my-store")
    runner = Anthropic().beta.messages.tool_runner(model=..., max_tokens=2048,
                                                    messages=[...], tools=[memory])
    for message in runner: ...
    memory.flush()            # the turn's changes: one batch, one commit

A refusal (the scene rules, a path outside ``/memories``) is the SDK's ``ToolError``: the
model reads its text as the tool result's error. ``flush()`` raises ``FoldProblems`` when the
turn's changes break a rule only the whole batch can show; send its text to the model and
flush again, or ``abort()``.
"""

from __future__ import annotations

from pathlib import Path

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError

from scene_engine.core.errors import SceneEngineError
from scene_engine.services.host_fold import LEASE
from scene_engine.services.memory_tool import MemoryTool, MemoryToolError
from scene_engine.store.store import Store, open_store


class SceneMemoryTool(BetaAbstractMemoryTool):
    """The memory tool on the store at ``store`` (a ``Store`` or its folder). ``holder``: the
    name the history gives the changes (``Backend: host (HOLDER)``); ``lease``: seconds an
    open turn waits for the next command before it is rolled back."""

    def __init__(self, store: Store | str | Path, holder: str = "claude",
                 lease: float = LEASE, **kwargs):
        super().__init__(**kwargs)
        self.store = store if isinstance(store, Store) else open_store(Path(store))
        self.memory = MemoryTool(self.store, holder, lease)

    def view(self, command):
        """The scenes, or one scene with line numbers (it counts as read)."""
        return _said(self.memory.view, command.path, command.view_range)

    def create(self, command):
        """A new scene written whole (a header with a summary from its first line added when
        the text has none). An existing name, in any letter case, is refused (change it with
        ``str_replace`` or ``insert``), and so is an empty text: a scene cannot be empty."""
        return _said(self.memory.create, command.path, command.file_text)

    def str_replace(self, command):
        """One exact piece of a scene replaced."""
        return _said(self.memory.str_replace, command.path, command.old_str, command.new_str)

    def insert(self, command):
        """Lines put into a scene at a line number."""
        return _said(self.memory.insert, command.path, command.insert_line,
                     command.insert_text)

    def delete(self, command):
        """The soft delete, allowed once another scene holds this one's text."""
        return _said(self.memory.delete, command.path)

    def rename(self, command):
        """A scene under a new name (``merged_from`` names the old one)."""
        return _said(self.memory.rename, command.old_path, command.new_path)

    def clear_all_memory(self):
        """Refused: scenes are deleted only as part of a merge (``scenes undo`` reverts a
        batch)."""
        raise ToolError("clearing every scene is not offered: a scene is deleted only when "
                        "another takes its text; a person reverts a batch with `scenes undo`")

    def flush(self) -> dict:
        """Commit the turn's changes as one batch: ``{"batch", "commit", "counts", ...}``
        (``batch`` None when nothing changed). Raises ``FoldProblems`` (fix and flush again)
        or ``MemoryToolError`` (the turn ended with nothing written)."""
        return self.memory.flush()

    def abort(self) -> None:
        """Drop the turn's changes; nothing is written."""
        self.memory.abort()


def _said(command, *args) -> str:
    try:
        return command(*args)
    except MemoryToolError as exc:
        raise ToolError(f"Error: {exc}") from None
    except SceneEngineError as exc:       # the store busy, a journal to repair: said, one line
        said = " ".join(str(exc).split())
        raise ToolError(f"Error: {said}") from None
