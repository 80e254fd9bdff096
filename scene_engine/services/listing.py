"""What a person or an agent sees of the scenes: one row per scene, and a scene found by name.

Shared by the command line (``scenes list``, ``scenes show``) and the MCP server
(``list_scenes``, ``read_scene``, ``scene://`` resources), so both say the same.
"""

from __future__ import annotations

import os
import unicodedata
import warnings
from typing import Any

from scene_engine.core.errors import InputError
from scene_engine.store.store import Store

ROWS = "scene-rows.json"    # the cache: blob sha -> [heat, updated, summary, header broken]


def scene_rows(store: Store) -> list[dict]:
    """``[{"name", "heat", "updated", "summary"}]`` of every scene, hottest first (ties by
    name); ``updated`` is ISO text or None. A scene not readable as UTF-8 gets a row saying
    so (heat 0), never an exception.

    A scene file git says holds a blob it has (``history.unchanged_blobs``) gets the row
    derived from that blob once (the store's cache, ``scene-rows.json``: a row depends on
    the file's text alone); only new and changed files are read and parsed, so listing
    10,000 scenes costs a stat each, not a YAML parse each (issue 23)."""
    from scene_engine.store import cache

    blobs = _scene_blobs(store)
    kept = cache.load(store.root, ROWS) if blobs else {}
    found: dict[str, list] = {}
    rows: list[dict[str, Any]] = []
    broken: list[str] = []
    for name in store.scene_names():
        blob = blobs.get(f"scenes/{name}")
        facts = kept.get(blob) if blob else None
        if not (isinstance(facts, list) and len(facts) == 4 and isinstance(facts[0], int)
                and isinstance(facts[3], bool) and _plain(facts)):
            facts = _scene_row(store, name)
            if blob and facts is not None and _plain(facts):
                found[blob] = facts
        if facts is None:                  # another encoding, no permission, or gone meanwhile
            said = "not readable as UTF-8" if os.access(store.scenes_dir / name, os.R_OK) \
                else "cannot be opened: no permission to read it"
            rows.append({"name": name, "heat": 0, "updated": None,
                         "summary": f"({said}: see `scenes doctor`)"})
            continue
        heat, updated, summary, bad = facts
        if bad:
            broken.append(name)
        rows.append({"name": name, "heat": heat, "updated": updated, "summary": summary})
    if found:
        merged = {**kept, **found}
        cache.save(store.root, ROWS, {b: merged[b] for b in blobs.values() if b in merged})
    rows.sort(key=lambda r: (-r["heat"], r["name"]))
    if broken:     # the rows of those scenes say heat 0, no summary: never silently
        from scene_engine.index.scenes import header_warning

        warnings.warn(str(header_warning(broken)), stacklevel=2)
    return rows


def _plain(facts: list) -> bool:
    """True when a row comes back from JSON as it went in (a person's ``updated: {1: 2}``
    would not: such a row is read from its file each time)."""
    return isinstance(facts[1], str | None) and isinstance(facts[2], str)


def _scene_blobs(store: Store) -> dict[str, str]:
    """``history.unchanged_blobs`` of ``scenes/``, {} when git cannot be asked (the rows are
    then all read from the files). git's own program, not GitPython: a blob's facts are the
    file's whichever repository holds the blob, so nothing else of the repository is
    needed."""
    from scene_engine.store import history

    try:
        return history.unchanged_blobs(store.root, "scenes")
    except Exception:             # any failure of git only means "read every file"
        return {}


def row_cells(row: dict) -> tuple[str, str, str, str]:
    """One row of ``scene_rows`` as ``scenes list`` prints it: name, heat, last update to
    the minute, and summary, each on one line (white space of a summary made single spaces,
    a control character in a name or summary written as an escape: ``core.text.one_line``)."""
    from scene_engine.core.text import one_line

    return (one_line(row["name"]), str(row["heat"]), str(row["updated"] or "")[:16],
            one_line(" ".join(row["summary"].split())))


def _scene_row(store: Store, name: str) -> list | None:
    """``[heat, updated, summary, whether the header cannot be read]`` of one scene file,
    as ``scene_rows`` shows it; None when it is not UTF-8 or cannot be read."""
    from scene_engine.store.scene import SceneHeaderWarning, read_scene

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scene = read_scene(store.scenes_dir / name)
        except (UnicodeDecodeError, OSError):
            return None
    bad = any(issubclass(w.category, SceneHeaderWarning) for w in caught)
    updated: Any = scene.meta.get("updated")   # a datetime, or what a person wrote
    marked = "git conflict markers" in (scene.header_error or "")
    summary = (f"(unreadable: {scene.header_error.split(' (')[0]}; see `scenes doctor`)"
               if marked and scene.header_error else scene.meta.get("summary") or "")
    return [int(scene.meta.get("heat") or 0),
            updated.isoformat() if hasattr(updated, "isoformat") else updated, summary, bad]


def header_problem(store: Store) -> str | None:
    """The warning naming every scene whose header cannot be read (``index.scenes
    .header_warning``), or None: what ``status`` adds to its warnings."""
    return header_warning_and_bytes(store)[0]


def header_warning_and_bytes(store: Store) -> tuple[str | None, list[str]]:
    """(``header_problem``'s warning, one ``NotUtf8Error`` line for each scene and the
    persona that is not UTF-8): what ``status`` adds to its warnings, read in one pass
    over the scenes. Batches leave such a file alone; ``doctor`` names them too."""
    from scene_engine.core.fs import read_regular_text
    from scene_engine.index.scenes import header_warning
    from scene_engine.store.scene import SceneHeaderWarning, read_scene

    broken, undecodable = [], []
    for name in store.scene_names():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                read_scene(store.scenes_dir / name)
            except UnicodeDecodeError as exc:
                undecodable.append(str(exc))
                continue
            except OSError:
                continue
        if any(issubclass(w.category, SceneHeaderWarning) for w in caught):
            broken.append(name)
    try:
        read_regular_text(store.persona_path)
    except UnicodeDecodeError as exc:
        undecodable.append(str(exc))
    except OSError:
        pass
    return header_warning(broken), undecodable


def match_scene(store: Store, name: str) -> str | None:
    """The scene file name that ``name`` means (with or without ``.md``; case and Unicode
    form ignored, so "café" typed as e + accent finds ``Café.md``), or None. Only names
    of existing scenes come back: a path ("../x", "a/b") never matches."""
    wanted = name if name.lower().endswith(".md") else f"{name}.md"
    key = unicodedata.normalize("NFC", wanted).casefold()
    for existing in store.scene_names():
        if unicodedata.normalize("NFC", existing).casefold() == key:
            return existing
    return None


def taken_in_by(store: Store, name: str) -> str | None:
    """The live scene that took scene ``name`` in (its ``merged_from`` lists it: a rename or a
    merge), or None: where a person who asks for an old name should look."""
    from scene_engine.batch.rules import merged_from
    from scene_engine.store.scene import read_scene

    wanted = name if name.lower().endswith(".md") else f"{name}.md"
    key = unicodedata.normalize("NFC", wanted).casefold()
    for existing in store.scene_names():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scene = read_scene(store.scenes_dir / existing)
        except (OSError, UnicodeDecodeError):
            continue
        if any(unicodedata.normalize("NFC", m).casefold() == key for m in merged_from(scene)):
            return existing
    return None


def missing_scene(store: Store, name: str, listing: str) -> str:
    """The message for a scene name that matches none: where it went, if a scene took it in
    (``taken_in_by``), else ``listing`` (the command that lists scenes)."""
    wanted = name if name.lower().endswith(".md") else f"{name}.md"
    into = taken_in_by(store, wanted)
    if into:
        return f"no scene named {wanted}: it was renamed or merged into {into}"
    return f"no scene named {wanted}; {listing} shows them"


def find_scene(store: Store, name: str, listing: str = "`scenes list`") -> str:
    """The scene file name ``name`` means (``match_scene``). Raises ``InputError`` with
    ``missing_scene``'s message (where it went, or ``listing``) when none."""
    found = match_scene(store, name)
    if found is None:
        raise InputError(missing_scene(store, name, listing))
    return found


def scene_escaped(store: Store, name: str) -> str:
    """The scene file ``name`` (an existing file name) with every byte that is not UTF-8
    written as ``\\xNN``: what the page shows of a scene ``scene_text`` refuses."""
    from scene_engine.core.fs import read_regular

    return read_regular(store.scenes_dir / name).decode("utf-8", "backslashreplace")


def scene_text(store: Store, name: str, listing: str = "`scenes list`") -> str:
    """The scene ``name`` means as it is on disk (``scenes show``, MCP ``read_scene``).
    Raises ``InputError`` (``find_scene``), ``NotUtf8Error`` (one line: the file, the byte,
    ``scenes doctor``) and ``OSError``."""
    from scene_engine.core.fs import read_regular_text
    from scene_engine.store.scene import conflict_marker_lines, conflict_reason

    found = find_scene(store, name, listing)
    text = read_regular_text(store.scenes_dir / found)
    markers = conflict_marker_lines(text.replace("\r\n", "\n").split("\n"))
    if markers:     # shown as it is, and said: two sides of a merge are in it
        warnings.warn(f"{found}: {conflict_reason(markers)}", stacklevel=2)
    return text
