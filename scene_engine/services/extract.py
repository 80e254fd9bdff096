"""``scenes extract`` and ``ingest --conversation``: a conversation file in, its memories
in the journal, one commit (docs/DESIGN.md "Extraction").

The extractor is the one the options or the settings name (``services.backends``); a model
whose set-up cannot work is said before anything is read, and a block that fails writes
nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scene_engine.core.errors import SceneEngineError
from scene_engine.extraction.model import ExtractionError
from scene_engine.extraction.pipeline import extract_file
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
    except ExtractionError as exc:
        raise SceneEngineError(f"{exc}; nothing written") from None
