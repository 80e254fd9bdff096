"""Help text as a person expects it from a command-line tool (docs/DESIGN.md "Command
line"): an argument is ``NAME`` (or ``[NAME]`` when optional) in the usage line, with no
Python type beside it, a line is never broken inside a word, and each command's line in
``scenes -h`` is whole.
"""

from __future__ import annotations

import importlib
from typing import Any

# The commands list of `scenes -h`: one line each, whole (a docstring's first sentence is
# often longer than the room click leaves, and it cut them with "...").
SHORT_HELP = {
    "init": "Make a new store in a folder.",
    "add": "Add memories; bad input is refused whole.",
    "run": "Fold pending memories into scenes, a commit per batch.",
    "ingest": "Add memories (or a conversation's), then run.",
    "extract": "Extract memories from a conversation, an export or agent sessions.",
    "review": "The review queue of possible duplicates.",
    "search": "Full-text search over the scenes or the memories.",
    "repair": "Number the journal anew after a git merge.",
    "watch": "Keep the search index in step until Ctrl-C.",
    "doctor": "Check every invariant; exit 1 if one is broken.",
    "log": "Batches newest first, hand edits and undos between.",
    "undo": "Revert one batch; its memories are pending again.",
    "blame": "Each line of a scene, its batch and its memories.",
    "trace": "Where a memory went: batch, scenes, lines.",
    "mcp": "Serve this store to agents over MCP.",
    "ui": "A page for people: scenes, history, review.",
    "recall": "What an agent puts in its context for QUERY.",
    "demo": "Make and show a demo store of ~60 memories.",
    "provision": "Make a store on a git server; print its token.",
    "serve": "Serve many stores over HTTP, a token each.",
    "worker": "Fold stores from the Postgres queue.",
    "queue": "The fold queue per store: waiting, running, failed.",
    "hook": "Run a coding agent's hook (Claude Code, Codex): context in, turns out.",
}


def plain_help() -> None:
    """Typer writes ``{query}`` and ``query <str>``, and click's wrapper breaks lines at
    hyphens (``--batch-size``, ``OpenAI-compatible``): both are the libraries' own
    formatting hooks, replaced here for this process; a version without them keeps its own
    formatting."""
    from typer.core import TyperArgument

    def usage_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")

    if hasattr(TyperArgument, "_usage_display_name"):   # methods replaced on the class
        hooks = {"_usage_display_name": usage_name, "display_type_rich": lambda self, ctx: None}
        for hook, replacement in hooks.items():
            setattr(TyperArgument, hook, replacement)
    for name in ("typer._click._textwrap", "click._textwrap"):   # Typer 0.2x has its own click
        try:
            module: Any = importlib.import_module(name)   # the one of the two that is there
        except ImportError:
            continue
        wrapper = getattr(module, "TextWrapper", None)
        if wrapper is not None and not getattr(wrapper, "keeps_hyphenated_words", False):
            module.TextWrapper = type("WholeWords", (wrapper,), {
                "keeps_hyphenated_words": True, "__init__": _whole_words_init(wrapper)})


def _whole_words_init(wrapper: Any):
    """``wrapper.__init__`` with ``break_on_hyphens`` off unless asked for."""
    def init(self, *args, **kwargs):
        kwargs.setdefault("break_on_hyphens", False)
        wrapper.__init__(self, *args, **kwargs)
    return init


def short_help(app: Any) -> None:
    """Give each registered command of ``app`` its whole line of ``SHORT_HELP``."""
    for command in app.registered_commands:
        name = command.name or command.callback.__name__
        command.short_help = command.short_help or SHORT_HELP.get(name)
