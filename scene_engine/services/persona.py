"""The persona (L3): a short portrait distilled from the scenes, in ``persona.md``.

Regenerated (docs/DESIGN.md "A batch", step 8) when the model asks for it in its final text, when
scenes exist and no persona does, every ``persona_every`` memories — sooner on a small store
(half the memories folded so far, at least ``MIN_REFRESH``), so a persona made after the first
batch is not left a snapshot of it — and when the scene set changed a lot (fewer than half of
the scenes are named in an offline persona); ``scenes persona --force`` on demand. It is written in the
language most of the scenes' entries are in (issue 13).

Where the refresh is written (issue 23: a persona commit for most batches doubled the cost of
a batch and buried the batches in ``scenes log``):

- after a batch of a backend that is not a model (the offline one), in the batch's own
  commit (``in_batch``: the extractive persona is made from the scenes as the batch leaves
  them, before the commit); undoing the batch puts the persona back with its scenes;
- a model's persona (its own call, which may fail on its own) and every refresh outside a
  batch (``--force``, after an undo, a rename another run made) is its own commit, so undo
  can restore the previous one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from scene_engine.batch.contract import Backend, ModelBackend
from scene_engine.batch.rules import parse_checked, persona_names
from scene_engine.core.errors import SceneEngineError
from scene_engine.core.fs import atomic_write_text, read_regular_text
from scene_engine.core.plural import count
from scene_engine.offline.words import language
from scene_engine.store import history
from scene_engine.store.store import State, Store, render_state
from scene_engine.store.unit import locked

if TYPE_CHECKING:
    from git import Repo

MAX_PERSONA_CHARS = 2000
MIN_UNNAMED = 3         # scenes an offline persona must miss before it is due for that
GONE = "it names scenes that are gone"   # the ``persona_reason`` a rename or merge gives
OFFLINE_MARKERS = ("Main areas of life, hottest first:", "主要生活领域（按热度）：")
MIN_REFRESH = 20        # memories: the soonest a small store's persona is refreshed again
_ENTRY = re.compile(r"^\s*- (?:\d{4}[-\d Q]*(?: \(digest\))?: )?(.+)$")


def refresh_every(store: Store, state: State | None = None) -> int:
    """Memories between refreshes: ``persona_every``, or on a small store half the memories
    taken so far (at least ``MIN_REFRESH``), so the persona grows with the store.
    ``state``: the state to judge by (default: the one on disk)."""
    taken = (state or store.load_state()).cursor
    return min(store.config.persona_every, max(MIN_REFRESH, taken // 2))


def dangling_links(store: Store) -> list[str]:
    """The scenes ``persona.md`` names that are gone (renamed, by a batch or by hand, merged
    away, or brought back by an undo under their old name): its ``[[wiki-links]]`` when
    ``wiki_links`` is on, and the names of its scene list (``- **name** (heat N)``)."""
    if not store.persona_path.is_file():
        return []
    try:
        text = read_regular_text(store.persona_path, errors="replace")
    except OSError:
        return []
    stems = {name.removesuffix(".md") for name in store.scene_names()}
    return sorted(persona_names(text, store.config.wiki_links) - stems)


def after_undo(store: Store, repo: Repo, texts: dict[str, str], forgot: bool
               ) -> tuple[str | None, str] | None:
    """The persona an undo or redo writes in its own commit, given the scenes as it leaves
    them (``texts``: name -> text): ``(text, reason)``, ``(None, reason)`` to remove it (no
    scene is left), or None to leave ``persona.md`` as it is.

    An extractive persona (the offline backend's) that names a scene the undo takes away is
    made anew; a model's waits for the next batch, which refreshes it (``persona_reason``).
    After an undo that forgot memories (``forgot``), any persona the engine wrote, a model's
    too, is made anew, so no forgotten memory lives on in it. A person's persona is kept,
    with a warning. Call after the hand edits are committed (``persona_by_person``)."""
    try:
        text = read_regular_text(store.persona_path, errors="replace")
    except OSError:
        return None                      # none (the next batch makes one), or not a file
    if forgot:
        reason = "an undo forgot memories it may have held"
    else:
        stems = {name.removesuffix(".md") for name in texts}
        if not persona_names(text, store.config.wiki_links) - stems or \
                not any(marker in text for marker in OFFLINE_MARKERS):
            return None
        reason = "it named scenes that are gone"
    if history.persona_by_person(repo):
        import warnings

        warnings.warn("persona.md was edited by hand, so it was not regenerated; "
                      "`scenes persona --force` replaces it", stacklevel=2)
        return None
    rows = _rows(texts.items())
    if not rows:
        return None, reason
    lang = _language(store, texts.items())
    return clip(offline_persona([(n, h, s) for n, h, s, _ in rows], lang,
                                store.config.wiki_links)), reason


def persona_reason(store: Store, requested: bool) -> str | None:
    """Why the persona should be regenerated now, or None."""
    text = None
    if store.persona_path.exists():
        try:
            text = read_regular_text(store.persona_path, errors="replace")
        except OSError:
            text = ""                     # there, but no file the engine reads
    return due_reason(store, store.scene_names(), text, store.load_state(), requested)


def due_reason(store: Store, names: list[str], text: str | None, state: State,
               requested: bool) -> str | None:
    """Why a persona whose text is ``text`` (None: there is none; "": one that cannot be
    read) should be made anew for the scenes ``names`` (file names) and ``state``, or None:
    the rules of the module docstring, in order."""
    if requested:
        return "the model asked for it"
    if names and text is None:
        return "scenes exist and there is no persona yet"
    if not names or text is None:
        return None
    stems = {name.removesuffix(".md") for name in names}
    if persona_names(text, store.config.wiki_links) - stems:
        return GONE
    every = refresh_every(store, state)
    if state.since_persona >= every:
        return f"{every} memories since the last persona"
    if not any(marker in text for marker in OFFLINE_MARKERS):
        return None      # a model's or a person's persona does not list scenes by name
    named = sum(n.removesuffix(".md") in text for n in names)
    unnamed = len(names) - named
    if named * 2 < len(names) and unnamed >= MIN_UNNAMED and state.since_persona:
        return f"it names {named} of the {count(len(names), 'scene')}"
    return None


def in_batch(store: Store) -> Callable[[Repo, dict[str, str], State, bool],
                                       tuple[str, str] | None]:
    """The persona refresh a batch of a backend that is not a model makes in its own commit
    (``transaction.PersonaRefresh``): given the repository, the scenes as the batch leaves
    them (name -> text), the state after it and whether a new persona was asked for, the
    extractive persona's text and the reason it is due (``due_reason``), or None when it is
    not due, no scene is left, or a person edited ``persona.md`` (kept: the run's own
    refresh then says so once, ``regenerate``)."""
    def refresh(repo: Repo, texts: dict[str, str], state: State, requested: bool
                ) -> tuple[str, str] | None:
        text = None
        if store.persona_path.exists():
            try:
                text = read_regular_text(store.persona_path, errors="replace")
            except OSError:
                return None               # not a file the engine writes over
        reason = due_reason(store, sorted(texts), text, state, requested)
        if not reason or (text is not None and history.persona_by_person(repo)):
            return None
        rows = _rows(texts.items())
        if not rows:
            return None
        lang = _language(store, texts.items())
        return clip(offline_persona([(n, h, s) for n, h, s, _ in rows], lang,
                                    store.config.wiki_links)), reason

    return refresh


def store_language(store: Store) -> str:
    """"zh" or "en": the language most entries of the scenes are in (each line one vote,
    ``offline_words.language``), or the configured ``language`` when it is not "auto"."""
    if store.config.language in ("en", "zh"):
        return store.config.language
    return _language(store, _scene_files(store))


def _language(store: Store, files) -> str:
    """``store_language`` over the scene files ``files`` ((name, text) pairs)."""
    if store.config.language in ("en", "zh"):
        return store.config.language
    lines = []
    for name, text in files:
        scene, _ = parse_checked(name, text)
        for line in (scene.body if scene else text).splitlines():
            found = _ENTRY.match(line)
            if found:
                lines.append(found.group(1))
    return language(lines)


def _scene_files(store: Store) -> list[tuple[str, str]]:
    """(name, text) of every scene file that can be read now (with replacement characters
    where it is not UTF-8)."""
    found = []
    for name in store.scene_names():
        try:
            found.append((name, read_regular_text(store.scenes_dir / name, errors="replace")))
        except OSError:              # gone or swapped for a link since it was listed
            continue
    return found


def _rows(files, excerpt: int = 300) -> list[tuple[str, int, str, str]]:
    """(name, heat, summary, the body's first ``excerpt`` characters) of each scene of
    ``files`` ((name, text) pairs), hottest first, then by name."""
    rows = []
    for name, text in files:
        scene, _ = parse_checked(name, text)
        heat = int(scene.meta.get("heat") or 0) if scene else 0
        summary = str(scene.meta.get("summary") or "") if scene else ""
        body = (scene.body if scene else text).strip()
        rows.append((name, heat, summary, body[:excerpt]))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows


def scene_digest(store: Store, excerpt: int = 300) -> tuple[str, list[tuple[str, int, str]]]:
    """(digest text for a model, [(name, heat, summary)]) of every scene, hottest first."""
    rows = _rows(_scene_files(store), excerpt)
    digest = "\n\n".join(f"### {n} (heat {h})\n{s}\n{b}" for n, h, s, b in rows)
    return digest, [(n, h, s) for n, h, s, _ in rows]


def scene_link(name: str, wiki: bool = False) -> str:
    """How the persona names a scene file: ``[[name]]`` (a wiki-link a vault user clicks
    through; config ``wiki_links``) or ``**name**``."""
    stem = name.removesuffix(".md")
    return f"[[{stem}]]" if wiki else f"**{stem}**"


def linked_scene_list(rows: list[tuple[str, int, str]], wiki: bool) -> str:
    """One line naming every scene (hottest first) as links, appended to a model's persona
    in a vault so its scene list can be clicked through ("" when not ``wiki``)."""
    if not wiki or not rows:
        return ""
    links: list[str] = []
    for name, _, _ in rows:   # at most a quarter of the persona: the portrait comes first
        if sum(len(link) + 3 for link in links) + len(name) > MAX_PERSONA_CHARS // 4:
            break
        links.append(scene_link(name, True))
    return "\n\nScenes: " + " · ".join(links) + "\n"


def offline_persona(rows: list[tuple[str, int, str]], lang: str = "en",
                    wiki: bool = False) -> str:
    """An extractive persona in ``lang`` ("en" or "zh"): a heading and the scene list
    (``wiki``: the scene names as ``[[wiki-links]]``)."""
    zh = lang == "zh"
    lines = ["# 人物画像" if zh else "# Persona", "", OFFLINE_MARKERS[1 if zh else 0], "",
             *scene_list(rows, lang, wiki)]
    return "\n".join(lines) + "\n"


def scene_list(rows: list[tuple[str, int, str]], lang: str = "en", wiki: bool = False
               ) -> list[str]:
    """The persona's list of scenes, one line each, hottest first: name (``scene_link``),
    heat, summary."""
    heat = "热度" if lang == "zh" else "heat"
    return [f"- {scene_link(name, wiki)} ({heat} {h}): {summary}" for name, h, summary in rows]


def clip(text: str, limit: int = MAX_PERSONA_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a line or sentence end."""
    text = text.strip() + "\n"
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind("\n"), cut.rfind(". "), cut.rfind("。"))
    return (cut[: end + 1] if end > limit // 2 else cut).rstrip() + "\n"


def regenerate(store: Store, backend: Backend, reason: str, force: bool = False,
               drop_when_empty: bool = False) -> str:
    """Write ``persona.md`` from the scenes and commit it; return the commit sha ("" if none).

    ``backend`` may offer ``persona(language, digest, max_chars) -> (text, tokens)``; the
    offline backend doesn't, and the extractive persona is used. Takes the store lock.
    A persona a person edited by hand (the last commit touching it is a hand edit) is kept
    unless ``force``: an automatic refresh never overwrites a person's words (a warning says so).
    With no scene left, nothing is written, unless ``drop_when_empty`` (after an undo): then
    the engine's persona, made from scenes that are gone, is deleted in its own commit.
    """
    with locked(store, numbering=False) as unit:
        repo = unit.repo
        # Hand edits (persona.md's included) get their own commit first, so undoing this
        # persona commit never reverts them and overwriting persona.md never loses one.
        history.commit_hand_edits(repo)
        if not force and store.persona_path.exists() and history.persona_by_person(repo):
            import warnings

            warnings.warn("persona.md was edited by hand, so it was not regenerated; "
                          "`scenes persona --force` replaces it", stacklevel=2)
            return ""
        digest, rows = scene_digest(store)
        if not rows:
            return _drop(store, unit, reason) if drop_when_empty else ""
        tokens = 0
        lang = store_language(store)
        if isinstance(backend, ModelBackend):
            text, tokens = backend.persona(lang, digest, MAX_PERSONA_CHARS)
            links = linked_scene_list(rows, store.config.wiki_links)
            text = clip(text, MAX_PERSONA_CHARS - len(links)).rstrip("\n") + links
        else:
            text = offline_persona(rows, lang, store.config.wiki_links)
        state = store.load_state().model_copy(update={"since_persona": 0})
        persona = clip(text)
        planned = {"persona.md": persona, ".scene-engine/state.json": render_state(state)}
        with unit.change(planned):   # Ctrl-C waits until the persona is committed
            atomic_write_text(store.persona_path, persona)
            store.save_state(state)
            sha = history.commit(repo, f"persona: regenerated from {count(len(rows), 'scene')}\n\n"
                                       f"Reason: {reason}.\n\nPersona: yes\n"
                                       f"Backend: {backend.name}\nTokens: {tokens}\n",
                                 paths=("persona.md", ".scene-engine/state.json"))
        return sha


def _drop(store: Store, unit, reason: str) -> str:
    """Delete the engine's ``persona.md`` (no scene is left to make one from) and commit;
    return the commit sha, "" when there is none."""
    if not store.persona_path.is_file():
        return ""
    state = store.load_state().model_copy(update={"since_persona": 0})
    with unit.change({"persona.md": None, ".scene-engine/state.json": render_state(state)}):
        store.persona_path.unlink()
        store.save_state(state)
        return history.commit(unit.repo, f"persona: removed, no scene is left\n\n"
                                         f"Reason: {reason}.\n\nPersona: yes\n",
                              paths=("persona.md", ".scene-engine/state.json"))


def regenerate_now(store: Store, backend: Backend) -> str:
    """``scenes persona --force``: regenerate the persona now from the scenes there are,
    a hand-edited one included; returns the commit sha ("" when it was current). Raises
    ``SceneEngineError`` when there are no scenes to make one from."""
    sha = regenerate(store, backend, "asked for with --force", force=True)
    if not sha and not store.scene_names():      # "" also when the persona was current
        raise SceneEngineError("no scenes yet: run a batch first")
    return sha


def read_persona(store: Store) -> str:
    """The persona as it is on disk. Raises ``SceneEngineError`` when there is none yet."""
    if not store.persona_path.exists():
        raise SceneEngineError("no persona: it is written after a batch when scenes exist; "
                               "`scenes persona --force` writes one now")
    return read_regular_text(store.persona_path)
