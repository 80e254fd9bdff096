"""The persona (L3): a short portrait distilled from the scenes, in ``persona.md``.

Regenerated (DESIGN.md "A batch", step 8) when the model asks for it in its final text, when
scenes exist and no persona does, and every ``persona_every`` memories; ``scenes persona
--force`` on demand. Each regeneration is its own commit, so undo can restore the previous one.
"""

from __future__ import annotations

import re

from . import history, interrupts, recovery
from .fsutil import atomic_write_text, read_regular_text
from .lock import store_lock
from .rules import parse_checked
from .store import Store, render_state
from .text import is_cjk_text

MAX_PERSONA_CHARS = 2000


def dangling_links(store: Store) -> list[str]:
    """The ``[[wiki-links]]`` in ``persona.md`` that name no scene file (a scene renamed by
    hand or merged away since the persona was written); [] when ``wiki_links`` is off."""
    if not store.config.wiki_links or not store.persona_path.is_file():
        return []
    try:
        text = read_regular_text(store.persona_path, errors="replace")
    except OSError:
        return []
    stems = {name.removesuffix(".md") for name in store.scene_names()}
    linked = [m.split("|", 1)[0].strip() for m in re.findall(r"\[\[([^\]]+)\]\]", text)]
    return sorted({link for link in linked if link not in stems})


def persona_reason(store: Store, requested: bool) -> str | None:
    """Why the persona should be regenerated now, or None."""
    if requested:
        return "the model asked for it"
    names = store.scene_names()
    if names and not store.persona_path.exists():
        return "scenes exist and there is no persona yet"
    if names and dangling_links(store):
        return "it links scenes that are gone"
    if names and store.load_state().since_persona >= store.config.persona_every:
        return f"{store.config.persona_every} memories since the last persona"
    return None


def scene_digest(store: Store, excerpt: int = 300) -> tuple[str, list[tuple[str, int, str]]]:
    """(digest text for a model, [(name, heat, summary)]) of every scene, hottest first."""
    rows = []
    for name in store.scene_names():
        try:
            text = read_regular_text(store.scenes_dir / name, errors="replace")
        except OSError:              # gone or swapped for a link since it was listed
            continue
        scene, _ = parse_checked(name, text)
        heat = int(scene.meta.get("heat") or 0) if scene else 0
        summary = str(scene.meta.get("summary") or "") if scene else ""
        body = (scene.body if scene else text).strip()
        rows.append((name, heat, summary, body[:excerpt]))
    rows.sort(key=lambda r: (-r[1], r[0]))
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


def offline_persona(rows: list[tuple[str, int, str]], wiki: bool = False) -> str:
    """An extractive persona: the hottest scenes' summaries, one line each (``wiki``: the
    scene names as ``[[wiki-links]]``)."""
    zh = is_cjk_text(" ".join(s for _, _, s in rows))
    lines = ["# 人物画像" if zh else "# Persona", "",
             "主要生活领域（按热度）：" if zh else "Main areas of life, hottest first:", ""]
    for name, heat, summary in rows:
        lines.append(f"- {scene_link(name, wiki)} (heat {heat}): {summary}")
    return "\n".join(lines) + "\n"


def clip(text: str, limit: int = MAX_PERSONA_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a line or sentence end."""
    text = text.strip() + "\n"
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind("\n"), cut.rfind(". "), cut.rfind("。"))
    return (cut[: end + 1] if end > limit // 2 else cut).rstrip() + "\n"


def _edited_by_hand(repo) -> bool:
    """True when the newest commit that touched persona.md is a person's: a hand edit, their
    own commit or a vault plugin's auto-commit of their edit."""
    email, _, message = repo.git.log("-1", "--format=%ae%x01%B", "--", "persona.md"
                                     ).partition("\x01")
    return bool(message) and history.is_person_commit(message, email)


def regenerate(store: Store, backend, reason: str, force: bool = False) -> str:
    """Write ``persona.md`` from the scenes and commit it; return the commit sha ("" if none).

    ``backend`` may offer ``persona(language, digest, max_chars) -> (text, tokens)``; the
    offline backend doesn't, and the extractive persona is used. Takes the store lock.
    A persona a person edited by hand (the last commit touching it is a hand edit) is kept
    unless ``force``: an automatic refresh never overwrites a person's words (a warning says so).
    """
    with store_lock(store.lock_path):
        repo = history.open_repo(store.root)
        recovery.recover(store, repo)
        # Hand edits (persona.md's included) get their own commit first, so undoing this
        # persona commit never reverts them and overwriting persona.md never loses one.
        history.commit_hand_edits(repo)
        if not force and store.persona_path.exists() and _edited_by_hand(repo):
            import warnings

            warnings.warn("persona.md was edited by hand, so it was not regenerated; "
                          "`scenes persona --force` replaces it", stacklevel=2)
            return ""
        digest, rows = scene_digest(store)
        if not rows:
            return ""
        tokens = 0
        if hasattr(backend, "persona"):
            language = store.config.language
            if language == "auto":
                language = "zh" if is_cjk_text(digest) else "en"
            text, tokens = backend.persona(language, digest, MAX_PERSONA_CHARS)
            links = linked_scene_list(rows, store.config.wiki_links)
            text = clip(text, MAX_PERSONA_CHARS - len(links)).rstrip("\n") + links
        else:
            text = offline_persona(rows, store.config.wiki_links)
        state = store.load_state().model_copy(update={"since_persona": 0})
        persona = clip(text)
        planned = {"persona.md": persona, ".scene-engine/state.json": render_state(state)}
        with interrupts.critical(repo):   # Ctrl-C waits until the persona is committed
            recovery.begin(store, planned, repo)
            atomic_write_text(store.persona_path, persona)
            store.save_state(state)
            sha = history.commit(repo, f"persona: regenerated from {len(rows)} scenes\n\n"
                                       f"Reason: {reason}.\n\nPersona: yes\n"
                                       f"Backend: {backend.name}\nTokens: {tokens}\n",
                                 paths=("persona.md", ".scene-engine/state.json"))
            recovery.end(store)
        return sha
