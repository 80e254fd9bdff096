"""``scenes extract`` and ``ingest --conversation``: a conversation file, an export or a
folder of agent sessions in, its memories in the journal (docs/DESIGN.md "Extraction";
docs/guides/ for each source).

The extractor is the one the options or the settings name (``services.backends``); a model
whose set-up cannot work is said before anything is read, and a block that fails writes
nothing of its own (a long import keeps the commits it made before it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scene_engine.core.errors import InputError, SceneEngineError
from scene_engine.extraction import sources
from scene_engine.extraction.model import ExtractionError
from scene_engine.extraction.pipeline import extract_file, import_items
from scene_engine.llm.preflight import SetupError
from scene_engine.services.backends import extraction_settings

if TYPE_CHECKING:
    from scene_engine.extraction.pipeline import ExtractReport
    from scene_engine.store.store import Store


def extract(store: Store, data: bytes, name: str, backend: str | None = None,
            model: str | None = None, api_base: str | None = None) -> ExtractReport:
    """Extract the conversation ``data`` (file ``name``, for the messages' ids) into the
    journal with the extractor ``backend``/``model`` name (none: the settings', offline by
    default). Returns the ``ExtractReport``. Raises ``InputError`` for a bad file (every
    problem with its line) or backend, ``SceneEngineError`` when the model cannot be used or
    a block fails; nothing is written then."""
    try:
        settings = extraction_settings(store.config, backend, model, api_base)
    except SetupError as exc:
        raise SceneEngineError(f"{exc}; nothing extracted") from None
    try:
        return extract_file(store, data, name, settings)
    except ExtractionError as exc:     # it says what was written: nothing
        raise SceneEngineError(str(exc)) from None


def import_source(store: Store, source: str, fmt: str | None = None, strict: bool = False,
                  dry_run: bool = False, backend: str | None = None, model: str | None = None,
                  api_base: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> ExtractReport:
    """Extract what ``source`` names (a file, ``-`` for standard input, or a folder: an
    unpacked export, a Claude Code project, ``~/.claude/projects``, ``~/.codex/sessions``)
    in the format ``fmt`` (one of ``sources.FORMATS``; None: detected from the content)
    into the journal. ``strict``: refuse everything when a conversation cannot be read;
    ``dry_run``: write nothing (``ExtractReport.would_add``). ``progress(done, total)``:
    bytes read so far and in all. Raises ``InputError`` for a bad path, format or file,
    ``SceneEngineError`` when the model cannot be used or a block fails."""
    if fmt is not None and fmt not in sources.FORMATS:
        raise InputError(f"--format {fmt!r} is not one scene-engine knows; known: "
                         f"{', '.join(sources.FORMATS)}")
    try:
        settings = extraction_settings(store.config, backend, model, api_base)
    except SetupError as exc:
        raise SceneEngineError(f"{exc}; nothing extracted") from None
    given = sources.open_input(source)
    total = given.size
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], total)

    private = store.config.redactor()
    items = sources.read_input(given, fmt, private, step)
    try:
        return import_items(store, items, given.name, settings, strict=strict,
                            dry_run=dry_run, private=private)
    except ExtractionError as exc:     # it says what was written (nothing, or commits)
        raise SceneEngineError(str(exc)) from None
