"""The batch transaction (docs/DESIGN.md "A batch"): memories in, scenes out, one git commit.

Order of a batch, all inside the write unit of work (``store.unit``: the store lock, an
interrupted change rolled back, the journal's numbering checked):
 1. commit hand edits on their own;
 2. take the next pending memories; 3. build the job (prompt, related scenes, sandbox, rules);
 4. let the backend work through the sandbox; 5. validate (repair rounds are the backend's);
 6. set the engine-owned header fields; when the caller gives a persona refresh
    (``PersonaRefresh``: ``services.run`` does for a backend that is not a model) and the
    persona is due, its text made from the scenes as the batch leaves them;
 7. apply atomically, save state, commit (the unit's ``change``: behind the write-ahead
    marker, with Ctrl-C held back), the persona in the same commit: a batch that refreshes
    it makes no second commit (docs/DESIGN.md "A batch", step 8).
Any failure before the commit writes nothing and leaves the memories pending.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Sequence, Set
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sandbox import DELETED, ConflictError, Sandbox, SandboxError
from scene_engine.batch.accounting import (
    Ledger,
    ledger_path,
)
from scene_engine.batch.conservation import ENGINE_KEYS, Authorship, authorship, is_pinned
from scene_engine.batch.contract import Backend, BatchError, BatchJob, BatchResult, ModelBackend
from scene_engine.batch.prompt import SceneInfo, batch_messages, choose_language
from scene_engine.batch.rules import (
    RuleContext,
    ScenePolicy,
    header_read,
    merged_from,
    name_problem,
    parse_checked,
    persona_names,
    successors,
)
from scene_engine.batch.transcript import Transcript, transcript_path
from scene_engine.core.errors import plain_error
from scene_engine.core.fs import atomic_write_text, read_regular_text
from scene_engine.core.text import Vectorizer, one_line
from scene_engine.index.refresh import grouping_embed, refresh_index
from scene_engine.store import history
from scene_engine.store.history import compress_seqs
from scene_engine.store.memories import SEGMENT, Journal, Memory
from scene_engine.store.scene import (
    BEFORE,
    EPILOGUE,
    PREAMBLE,
    Scene,
    conflict_marker_lines,
    conflict_reason,
    parse_scene,
    render_scene,
)
from scene_engine.store.store import State, Store, render_state
from scene_engine.store.unit import StoreUnit, locked

if TYPE_CHECKING:
    from pathlib import Path

    from git import Repo

STATE_FILE = ".scene-engine/state.json"
ATTEMPTS = 6              # runs of an offline batch whose writes met a person's edit
MODEL_ATTEMPTS = 2        # ... of a model's batch (each one is paid for)
RELATED_SCENES = 3        # full texts shown in the prompt, to save read round trips
# The most characters of one file the sandbox writes (it reads at most 4 bytes each): a scene
# longer than this (a person's whole journal pasted in) could take no memory.
SCENE_SANDBOX_CHARS = 200_000
PERSONA_FILE = "persona.md"
# (repository, scene name -> text as the batch leaves them, the state after it, whether the
# backend asked for a new persona) -> (the persona's new text, why), or None when none is due
PersonaRefresh = Callable[["Repo", dict[str, str], State, bool], "tuple[str, str] | None"]
PERSONA_RE = r"\[PERSONA_UPDATE_REQUEST\](.*?)\[/PERSONA_UPDATE_REQUEST\]|PERSONA_UPDATE_REQUEST:\s*(.+)"


def select_batch(store: Store, state: State, size: int) -> list[Memory]:
    """The next ``size`` pending memories: re-queued ones first, then those past the cursor.

    Reads only the journal segments holding them (cost follows the batch, not the history).
    Forgotten memories are skipped.
    """
    forgotten = set(state.forgotten)
    seqs = [s for s in state.requeued if s not in forgotten][:size]
    seq = state.cursor
    while len(seqs) < size and seq < state.next_seq:
        if seq not in forgotten:
            seqs.append(seq)
        seq += 1
    return Journal(store.memories_dir).read(seqs)


def upcoming(store: Store, state: State, taken: list[Memory], n: int) -> list[Memory]:
    """Up to ``n`` memories pending after the batch ``taken`` (what later batches take, in
    that order; forgotten ones skipped): what a backend may group the batch with. Reads
    only the journal segments holding them."""
    if n <= 0:
        return []
    seqs = {m.seq for m in taken}
    return [m for m in select_batch(store, state, len(taken) + n) if m.seq not in seqs][:n]


def advance_state(state: State, taken: list[Memory], deferred: Collection[int] = (),
                  number: int | None = None) -> State:
    """The state after batch ``number`` (default: the state's next): cursor past everything
    it selected, ``taken`` out of the re-queue, ``deferred`` memories (selected but left by the
    backend) re-queued, the batch counter at ``number``."""
    taken_seqs = {m.seq for m in taken} | set(deferred)
    requeued = [s for s in state.requeued if s not in taken_seqs] + sorted(deferred)
    cursor = state.cursor
    while cursor < state.next_seq and (cursor in taken_seqs or cursor in set(state.forgotten)):
        cursor += 1
    return state.model_copy(update={
        "cursor": cursor, "requeued": requeued,
        "batch": state.batch + 1 if number is None else number,
        "since_persona": state.since_persona + len(taken)})


def read_scene_texts(store: Store) -> dict[str, str | None]:
    """name -> text of every scene file now on disk, exactly (CRLF line ends kept: the
    sandbox compares what it showed with the bytes on disk); None for a file that is not
    UTF-8, cannot be read (no permission) or whose name differs from another's only by case
    (a person must fix those)."""
    names = store.scene_names()
    folded = Counter(_case_key(name) for name in names)
    texts: dict[str, str | None] = {}
    for name in names:
        if folded[_case_key(name)] > 1:
            texts[name] = None
            continue
        try:
            texts[name] = read_regular_text(store.scenes_dir / name)
        except FileNotFoundError:   # removed since it was listed
            continue
        except (UnicodeDecodeError, OSError):   # a person's to fix: left alone (``_unreadable``)
            texts[name] = None
    return texts


def scene_infos(metas: dict[str, dict | None], pinned: Set[str] = frozenset()
                ) -> list[SceneInfo]:
    """The prompt's scene list from name -> header (None when unreadable): name, heat,
    updated, summary (unreadable headers shown as such), pinned."""
    infos = []
    for name, meta in sorted(metas.items()):
        meta = meta or {}
        updated: Any = meta.get("updated")   # a datetime, or what a person wrote
        infos.append(SceneInfo(name=name, heat=int(meta.get("heat") or 0),
                               updated=updated.isoformat() if hasattr(updated, "isoformat")
                               else str(updated or "?"),
                               summary=str(meta.get("summary") or "(header unreadable: a person must "
                                                                   "fix it; leave this file alone)"),
                               pinned=name in pinned))
    return infos


def related_scenes(texts: dict[str, str], memories: list[Memory], k: int) -> dict[str, str]:
    """The ``k`` scenes most similar to the batch's memories, name -> full text."""
    if not texts:
        return {}
    vectors = Vectorizer().fit(list(texts.values()))
    query = vectors.vector(" ".join(m.content for m in memories))
    scored = sorted(((vectors.similarity(query, vectors.vector(t)), n) for n, t in texts.items()),
                    key=lambda item: (-item[0], item[1]))
    return {n: texts[n] for score, n in scored[:k] if score > 0}


def build_job(store: Store, number: int, memories: list[Memory],
              duplicates: Sequence[tuple[Memory, Memory]] = (), repo: Repo | None = None,
              every: dict[str, str | None] | None = None) -> BatchJob:
    """Prompt, sandbox (allow-list = existing scenes with a readable header) and rules for one
    batch. ``job.scene_texts`` holds only the scenes the batch may touch. ``repo``: the store's
    git repository, for who wrote which line (default: opened here). ``every``: the scenes
    as the caller read them (``read_scene_texts``; default: read here)."""
    config = store.config
    every = read_scene_texts(store) if every is None else every
    # each header parsed once per batch; None: unreadable (bad header, not UTF-8, ambiguous)
    # A name the engine would never give a scene (a Windows device name, too long, a character
    # some system refuses) is still a person's file: left alone, never a reason to fail.
    unnamed = {n: p for n in every if (p := name_problem(n))}
    # Too long for the sandbox: left alone the same way, never a reason to fail every batch.
    huge = _too_long(every)
    metas = {n: _meta(n, t) if t is not None and n not in unnamed and n not in huge else None
             for n, t in every.items()}
    # A scene whose header cannot be read is a person's to fix: listed, never read or written.
    frozen = {n for n, meta in metas.items() if meta is None}
    left = {**{n: _unreadable(n, every, store.scenes_dir) for n in frozen}, **unnamed, **huge, **_marked(every)}
    for name, why in sorted(left.items()):
        warnings.warn(f"batch {number} leaves scenes/{one_line(name)} alone: {why}",
                      stacklevel=2)
    headers = {n: meta for n, meta in metas.items() if meta is not None}
    texts = {n: t for n, t in every.items() if t is not None and n in headers}
    related = related_scenes(texts, memories, RELATED_SCENES)
    box = Sandbox(store.scenes_dir, readable=list(texts), suffixes=(".md",),
                  max_content_chars=SCENE_SANDBOX_CHARS)
    # Every scene's conflict baseline is the text the batch read now, not the file as the
    # backend reads it later: who wrote which line (``authorship``) is judged on these texts,
    # so a line a person adds meanwhile must make the write conflict (the batch runs again
    # on it), not pass as the engine's (a newcomer's lines typed during a run were
    # condensed as if the engine had written them).
    for name, text in {**texts, **related}.items():
        box.note_seen(name, text)
    pinned = {n for n in texts if is_pinned(headers[n])}
    repo = repo or history.open_repo(store.root)
    context = RuleContext(existing=set(every), max_scenes=config.max_scenes,
                          max_scene_chars=config.max_scene_chars, shown=set(related),
                          frozen=frozen, read=box.read_names, old_texts=texts, pinned=pinned,
                          authorship=_authorship_of(repo, texts),
                          new_scenes=config.new_scenes_per_batch,
                          reserved=_linked_but_gone(store, every),
                          person_links=_linked_by_person(store, repo, every))
    box.add_policy(ScenePolicy(box, context))
    language = choose_language(config.language, memories)
    messages = batch_messages(language=language, batch=number, memories=memories,
                              scenes=scene_infos(metas, pinned), limit=config.max_scenes - 1,
                              max_scene_chars=config.max_scene_chars, related=related,
                              readable=sorted(texts), tz=config.tz,
                              new_scenes=context.allowance())
    return BatchJob(number=number, box=box, memories=memories, scene_texts=texts,
                    context=context, config=config, language=language, messages=messages,
                    scene_meta={n: headers[n] for n in texts}, duplicates=list(duplicates),
                    journal=lambda: Journal(store.memories_dir).all(),
                    named_by_person=lambda name: history.named_by_person(repo, f"scenes/{name}"),
                    embed=grouping_embed(store), left_alone=dict(sorted(left.items())))


def _linked_but_gone(store: Store, every: dict[str, str | None]) -> set[str]:
    """File names of the gone scenes ``persona.md`` still names (``rules.persona_names``):
    names no new scene of this batch takes. Nothing when there is no persona to read."""
    try:
        text = read_regular_text(store.persona_path, errors="replace")
    except OSError:
        return set()
    live = {n.removesuffix(".md").casefold() for n in every}
    return {f"{name}.md" for name in persona_names(text, store.config.wiki_links)
            if name.casefold() not in live}


def _linked_by_person(store: Store, repo: Repo, every: dict[str, str | None]) -> set[str]:
    """File names of the live scenes a persona a person wrote (or edited) links to: scenes
    the engine does not rename or merge away unless it must (a person's link would then lead
    nowhere, and the engine never rewrites their persona). Nothing when the persona is the
    engine's: a batch that renames a scene it names makes it anew."""
    try:
        text = read_regular_text(store.persona_path, errors="replace")
    except OSError:
        return set()
    named = {n.casefold() for n in persona_names(text, store.config.wiki_links)}
    linked = {n for n in every if n.removesuffix(".md").casefold() in named}
    return linked if linked and history.persona_by_person(repo) else set()


def _authorship_of(repo: Repo, texts: dict[str, str]):
    """A cached ``name -> Authorship`` over the batch's scenes (the person's lines are read
    from the history on first use only)."""
    cache: dict[str, Authorship] = {}
    person: list[frozenset[str]] = []

    def lookup(name: str) -> Authorship:
        if name not in cache:
            if not person:
                person.append(history.person_texts(repo))
            text = texts.get(name)
            cache[name] = authorship(text, person[0], name) if text else Authorship()
        return cache[name]

    return lookup


# ---------------------------------------------------------------- engine-owned header fields

def finalize_headers(job: BatchJob, now: datetime) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Set the engine-owned header fields on every written scene; return (change counts:
    updated, created, merged, deleted, and renamed when a new name continues one deleted
    scene (``rules.successor_of``); merges: surviving scene -> scenes merged into it).

    ``created``/``updated``/``heat`` are the engine's (heat, docs/DESIGN.md "Scene file": new 1;
    changed +1; made by merging: the merged scenes' heats summed + 1, plus its own if it
    existed); ``merged_from`` names this batch's merge sources (deleted scenes the model listed
    there) after the scenes it named before, or keeps its old value. Every other key a scene
    had comes back byte for byte, keys of merged-away scenes are carried over, and keys the
    model added are kept.
    """
    pending = job.box.pending()
    folded = {n.casefold(): n for n in job.scene_texts}
    olds = {n: parse_scene(t, name=n) for n, t in job.scene_texts.items()}
    deleted = {n for n, c in pending.items() if c is DELETED}
    created = [n for n, c in pending.items() if c is not DELETED and n.casefold() not in folded]
    counts = {"updated": 0, "created": 0, "merged": 0, "deleted": len(deleted)}
    found = successors(pending, set(job.scene_texts))    # new names that continue old scenes
    renames, claimed = set(found), {old for olds in found.values() for old in olds}
    merges: dict[str, list[str]] = {}
    for name, content in sorted(pending.items()):
        if content is DELETED:
            continue
        scene = parse_scene(content, name=name)
        before = olds.get(folded.get(name.casefold(), ""))
        sources = [folded[m.casefold()] for m in merged_from(scene)
                   if folded.get(m.casefold()) in deleted and folded[m.casefold()] != name]
        if name in created and name not in renames:
            # A new scene that names an old one its successor (``renames``) took in: a copy
            # of a split, not a merge; it starts as a new scene.
            sources = [s for s in sources if s not in claimed]
        heat = int((before.meta if before else {}).get("heat") or 0) + 1
        heat += sum(int(olds[s].meta.get("heat") or 0) for s in sources)
        meta, raw = _header(scene, before, [olds[s] for s in sources], now, heat)
        if sources:
            merges[name] = sources
        if name in renames and sources:
            # A scene under a new name: neither new nor a merge ("renamed" only when some
            # are); one that took others in as well (a merge, then a rename of the survivor)
            # is renamed and merged, and only the scenes it took in are deleted.
            counts["renamed"] = counts.get("renamed", 0) + 1
            counts["deleted"] -= 1
            counts["merged"] += len(sources) > 1
            if job.config.wiki_links:     # Obsidian resolves [[old name]] links by aliases
                aliases = meta.get("aliases")
                aliases = [aliases] if isinstance(aliases, str) else list(aliases or [])
                for old in (s.removesuffix(".md") for s in sources):
                    aliases += [old] * (old not in aliases)
                meta["aliases"] = aliases
                raw.pop("aliases", None)
        else:
            counts["merged"] += bool(sources)
            counts["created" if name in created else "updated"] += 1
        text = render_scene(Scene(name=name, meta=meta, body=scene.body, header="yaml", raw=raw),
                            style=job.config.meta_style, times=job.config.header_times)
        if before is not None and "\r\n" in job.scene_texts[before.name]:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")   # as the person saves it
        job.box.stage(name, text)
    return counts, merges


def _header(new: Scene, before: Scene | None, sources: list[Scene], now: datetime,
            heat: int) -> tuple[dict, dict]:
    """(meta, raw texts) of a written scene: engine fields, the model's summary, then the keys
    of the old header, of merged-away scenes and of the model's text, first holder wins."""
    old = before.meta if before else {}
    # A scene renamed or merged into a new name is as old as the oldest scene it continues.
    born = [c if c.tzinfo else c.replace(tzinfo=UTC)      # Obsidian times are naive UTC
            for c in (s.meta.get("created") for s in sources) if isinstance(c, datetime)]
    meta = {"created": old.get("created") or min(born, default=now), "updated": now,
            "summary": new.meta.get("summary"), "heat": heat}
    raw: dict = {}
    if before is not None and old.get("summary") == meta["summary"]:
        raw["summary"] = before.raw.get("summary")   # unchanged: as the person spelled it
    if sources:   # the whole chain: a name a scene once had is never given to another one
        # A survivor's own earlier merges stay listed: blame and trace read its lineage there.
        chain = [*(merged_from(before) if before is not None else []),
                 *(m for s in sources for m in (*merged_from(s), s.name))]
        meta["merged_from"] = list(dict.fromkeys(chain))
    elif before is not None and "merged_from" in old:
        meta["merged_from"] = old["merged_from"]
        raw["merged_from"] = before.raw.get("merged_from")
    if before is not None:   # a person's comment lines stay where they were
        raw.update((slot, text) for slot, text in before.raw.items()
                   if slot in (PREAMBLE, EPILOGUE) or slot.startswith(BEFORE))
    for origin in [s for s in (before, *sources, new) if s is not None]:
        for key, value in origin.meta.items():
            if key in ENGINE_KEYS or key in meta:
                continue
            meta[key] = value
            for slot in (key, f"{BEFORE}{key}"):
                if slot in origin.raw and slot not in raw:
                    raw[slot] = origin.raw[slot]
    return meta, {k: v for k, v in raw.items() if v is not None}


def _too_long(every: dict[str, str | None]) -> dict[str, str]:
    """name -> why, for each scene longer than the sandbox reads or writes
    (``too_long``)."""
    return {name: f"it {why}" for name, text in every.items()
            if text is not None and (why := too_long(text))}


def too_long(text: str) -> str | None:
    """Why a batch leaves a scene of ``text`` alone for its length ("holds N characters,
    more than a batch can read or write ..."), or None when ``SCENE_SANDBOX_CHARS`` holds
    it (batches here, ``scenes doctor``)."""
    if len(text) <= SCENE_SANDBOX_CHARS:
        return None
    return (f"holds {len(text):,} characters, more than a batch can read or write "
            f"({SCENE_SANDBOX_CHARS:,}); split it into scenes by hand")


def _marked(every: dict[str, str | None]) -> dict[str, str]:
    """name -> why, for each scene holding git conflict markers (``conflict_marker_lines``)."""
    found = {}
    for name, text in every.items():
        markers = conflict_marker_lines(text.replace("\r\n", "\n").split("\n")) if text else []
        if markers:
            found[name] = conflict_reason(markers)
    return found


def _unreadable(name: str, every: dict[str, str | None], folder: Path) -> str:
    """Why a batch cannot read scene ``name`` of ``every`` (``read_scene_texts``) in
    ``folder``: another name differing only by case, not UTF-8 (which byte), or the header
    parser's problem."""
    text = every[name]
    if text is None:
        twins = [n for n in every if n != name and _case_key(n) == _case_key(name)]
        if twins:
            return (f"its name differs from scenes/{twins[0]} only by case (rename one; "
                    "`scenes doctor` says more)")
        try:
            read_regular_text(folder / name)
        except UnicodeDecodeError as exc:
            return f"it is not UTF-8 text (byte {exc.start}); `scenes doctor` says what to do"
        except OSError as exc:
            return (f"it cannot be read ({exc.strerror or type(exc).__name__}): give this "
                    "user permission to read it, or move it out of scenes/")
        return "it is not UTF-8 text (`scenes doctor` names the byte)"
    where = header_read(name, text)[1]
    return f"its header cannot be read ({where}); `scenes doctor` says what to do"


def _case_key(name: str) -> str:
    """What two scene names that differ only by case (or Unicode form) have in common."""
    return unicodedata.normalize("NFC", name).casefold()


def _meta(name: str, text: str) -> dict | None:
    """The header of a scene text, or None when it cannot be read."""
    scene, _ = parse_checked(name, text)
    return dict(scene.meta) if scene else None


# ---------------------------------------------------------------- commit message

def commit_message(number: int, counts: dict[str, int], summary: str, memories: list[Memory],
                   backend: str, tokens: int, cost: float | None = None,
                   ledger: Ledger | None = None, persona: str = "") -> str:
    """Subject with the batch number and counts, the model's summary, where the memories
    went, then git trailers (``Cost-USD`` only where litellm knows the model's price;
    ``Ledger`` names the per-memory ledger file in the same commit; ``Persona-Refreshed``
    says why the persona this commit also holds was made anew, when ``persona``)."""
    subject = (f"batch {number}: {counts['updated']} updated, {counts['created']} created, "
               f"{counts['merged']} merged, {counts['deleted']} deleted")
    if counts.get("renamed"):
        subject += f", {counts['renamed']} renamed"
    ids = [m.id for m in memories]
    shown = ", ".join(ids) if len(ids) <= 20 else f"{ids[0]} .. {ids[-1]} ({len(ids)})"
    shown = shown or "none"
    trailers = [f"Batch: {number}", f"Memories: {shown}",
                f"Memory-Seqs: {compress_seqs([m.seq for m in memories])}",
                f"Backend: {backend}", f"Tokens: {tokens}",
                f"Written-By: scene-engine ({backend} backend)"]
    if cost is not None:
        trailers.append(f"Cost-USD: {cost:.6f}")
    body = " ".join(summary.split())[:2000] or "(no summary)"
    if ledger is not None:
        trailers.append(f"Ledger: {ledger_path(number)}")
        body += f"\n\n{ledger.summary_line()}."
    if persona:
        trailers.append(f"Persona-Refreshed: {' '.join(persona.split())}")
    return f"{subject}\n\n{body}\n\n" + "\n".join(trailers) + "\n"


# ---------------------------------------------------------------- running

def run_batch(store: Store, backend: Backend, size: int | None = None,
              attempts: int | None = None, persona: PersonaRefresh | None = None,
              lock_timeout: float | None = None) -> BatchResult | None:
    """Run one batch under the store lock; return its result, or None if nothing is pending.

    A hand edit made while the backend worked (``ConflictError`` at apply) makes the batch run
    again on the fresh files, up to ``attempts`` times (default ``MODEL_ATTEMPTS`` for a
    model, whose every attempt is paid for, ``ATTEMPTS`` for the offline backend: a person
    typing into their scenes during a long run should not stop it). ``persona``: asked, once the scenes
    are final, whether the persona is due and what it says; its text then goes into the
    batch's commit (``BatchResult.persona_refreshed``). ``lock_timeout``: seconds to wait
    for the store lock (None: ``store.lock.lock_timeout()``). Raises ``BatchError`` (nothing
    written, memories still pending) or ``LockBusyError``.
    """
    if attempts is None:
        attempts = MODEL_ATTEMPTS if isinstance(backend, ModelBackend) else ATTEMPTS
    with history.heads_remembered(), locked(store, timeout=lock_timeout) as unit:
        repo = unit.repo
        _check_scenes_folder(store)
        for attempt in range(attempts):
            state = store.load_state()
            selected = select_batch(store, state, size or store.config.batch_size)
            if not selected:
                history.commit_hand_edits(repo)
                refresh_index(store)       # hand edits just committed: keep search in step
                return None
            # (``_attempt`` commits the hand edits, as it reads the scenes.)
            try:
                return _attempt(unit, backend, state, selected, persona)
            except ConflictError as exc:
                if attempt + 1 == attempts:
                    raise BatchError(f"scenes changed on disk while the batch ran "
                                     f"({', '.join(exc.names)}); nothing written, try again") from exc
            except HeadMoved:
                # A person's commit (a backup plugin's) came between: run again from it.
                if attempt + 1 == attempts:
                    raise
    return None


def run_edit_batch(store: Store, backend: Backend, lock_timeout: float | None = None,
                   persona: PersonaRefresh | None = None) -> BatchResult | None:
    """A batch of no memories: the backend's own changes to the scenes (Anthropic's memory
    tool, docs/DESIGN.md "Host folding"), checked by the same rules and committed as a batch
    (its number, its ledger with no memory, ``scenes undo`` reverts it). Pending memories stay
    pending; ``persona`` as for ``run_batch`` (a persona naming a scene the batch renamed is
    made anew). Returns None when the backend staged no change (nothing is committed). Raises
    ``BatchError`` (nothing written), ``LockBusyError`` or ``ConflictError`` (a scene the
    backend changed was edited by hand meanwhile; nothing written)."""
    with locked(store, timeout=lock_timeout) as unit:
        _check_scenes_folder(store)
        try:     # (``_attempt`` commits the hand edits, as it reads the scenes)
            return _attempt(unit, backend, store.load_state(), [], persona)
        except ConflictError as exc:
            raise BatchError(f"scenes changed on disk while the batch ran "
                             f"({', '.join(exc.names)}); nothing written, try again") from exc


def _check_scenes_folder(store: Store) -> None:
    """``scenes/`` must be a real folder; a deleted one is made again (its scenes' deletion
    is a hand edit like any other)."""
    folder = store.scenes_dir
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise BatchError(f"{folder} is not a folder; scenes live in a plain `scenes/` folder. "
                         "Move whatever is there away and run again.")
    folder.mkdir(exist_ok=True)


def _dedupe(memories: list[Memory]) -> tuple[list[Memory], list[tuple[Memory, Memory]]]:
    """(distinct memories, [(dropped, kept)]): the same content at the same instant is one
    fact said twice (docs/DESIGN.md "A batch", step 2); the same content at another time is new evidence."""
    first: dict[tuple[str, datetime], Memory] = {}
    kept, dropped = [], []
    for memory in memories:
        key = (memory.content, memory.created_at)
        if key in first:
            dropped.append((memory, first[key]))
        else:
            first[key] = memory
            kept.append(memory)
    return kept, dropped


def _retired(store: Store, memories: list[Memory]
             ) -> tuple[list[Memory], list[tuple[Memory, Memory]]]:
    """(memories still to fold, [(retired, the memory it was merged into)]): a memory a
    merge retired (extraction's review or adjudicator, not undone) is the same fact as the
    one the merge kept or made, so it is accounted as a duplicate of that one, not folded a
    second time; so is the merged record of a merge that was undone, as a duplicate of the
    memory that merge kept (``extraction.events.folded_as``)."""
    from scene_engine.extraction.events import folded_as, log_path, read_intact

    if not log_path(store).exists():
        return memories, []
    events, unread = read_intact(store)
    for problem in unread:   # a merge on that line is not known: its memories fold apart
        warnings.warn(problem, stacklevel=2)
    into = folded_as(events)
    hit = [m for m in memories if m.id in into]
    if not hit:
        return memories, []
    survivors = _memories_named(store, {into[m.id] for m in hit})
    pairs = [(m, survivors[into[m.id]]) for m in hit if into[m.id] in survivors]
    gone = {m.seq for m, _ in pairs}
    return [m for m in memories if m.seq not in gone], pairs


def _memories_named(store: Store, wanted: set[str]) -> dict[str, Memory]:
    """Id or alias -> memory, for those of ``wanted`` the journal holds: read at the places
    the index gives (the pending memories are found by number, their survivors by id: no
    batch reads the whole journal), or from the whole journal when the index cannot say or
    a place it gives does not hold that id (it lags a hand edit)."""
    from scene_engine.index.scenes import for_store

    journal = Journal(store.memories_dir)
    try:
        with for_store(store) as index:
            places = index.known_memory_places(sorted(wanted))
        found = dict(zip(places, journal.read([s * SEGMENT + o for s, o in places.values()]),
                         strict=True))
    except Exception:           # the index is derived: any failure means "read the files"
        found = {}
    if len(found) == len(wanted) and all(i in (m.id, *m.aliases) for i, m in found.items()):
        return found
    return {i: m for m in journal.all() for i in (m.id, *m.aliases) if i in wanted}


def _attempt(unit: StoreUnit, backend: Backend, state: State, taken: list[Memory],
             persona: PersonaRefresh | None = None) -> BatchResult | None:
    store, repo = unit.store, unit.repo
    number = max(state.batch, history.last_batch_number(repo)) + 1
    fold, retired = _retired(store, taken)
    distinct, duplicates = _dedupe(fold)
    duplicates += retired
    every = read_scene_texts(store)
    # A line typed since the run's last hand-edit commit is in what the batch just read: it
    # is committed as the person's now, as read, so the batch knows it for theirs (a line
    # typed after the read makes the batch's write conflict instead: ``build_job``).
    history.commit_hand_edits(repo, texts={f"scenes/{n}": t for n, t in every.items()
                                           if t is not None})
    try:
        job = build_job(store, number, distinct, duplicates, repo=repo, every=every)
    except SandboxError as exc:   # a scene file the sandbox cannot use: say which, no trace
        raise BatchError(f"batch {number}: {exc}; nothing written, memories still pending") \
            from exc
    # A model backend writes its exchange here as it goes; kept for failed batches too.
    job.transcript = Transcript(transcript_path(store.meta_dir, number))
    job.upcoming = functools.partial(upcoming, store, state, taken)
    try:
        result = _run_job(unit, backend, state, taken, job, duplicates, persona)
    except BaseException as exc:
        job.transcript.finish("failed", error=" ".join(str(exc).split()) or type(exc).__name__)
        raise
    if result is None:
        job.transcript.finish("failed", error="no change to commit")
        return None
    job.transcript.finish("committed", commit=result.commit)
    return result


# What a person can do when a batch still breaks the rules (issue 37): each problem above
# names its rule, memory and scene (as the batch would have left it). A batch is grouped,
# merged and condensed as a whole, so a smaller cut of the same memories folds differently:
# batch 25 of the history of 3,000 (``tests/histories.py``: a digest's "not", before
# the rule read a digest fact by fact) folded in batches of 5 where 20 failed every run.
WAY_FORWARD = ("Nothing is lost: these memories wait in the journal, and the batches before "
               "stay committed. To go on, fold them in smaller batches (`scenes run "
               "--batch-size 5 --max-batches 4`), or this batch with a model (`scenes run "
               "--backend llm --model M --max-batches 1`), then `scenes run` as before "
               "(README, \"When a batch cannot be folded\", and docs/guides/models.md).")


def _run_job(unit: StoreUnit, backend: Backend, state: State, taken: list[Memory],
             job: BatchJob, duplicates: list[tuple[Memory, Memory]],
             persona: PersonaRefresh | None = None) -> BatchResult | None:
    """Steps 4-7 of a batch for a built ``job``; raises ``BatchError`` or ``ConflictError``.
    With no memories (``run_edit_batch``): None when the backend staged nothing."""
    store, number = unit.store, job.number
    try:
        outcome = backend.run(job)
    except Exception as exc:  # any backend failure: nothing was written
        changed = _changed_since_read(store, job)
        if changed:   # a scene deleted or made meanwhile refused a call: run again on it
            raise ConflictError(changed) from exc
        raise BatchError(f"batch {number} failed: {plain_error(exc)}") from exc
    if not taken and not job.box.pending():
        return None
    deferred = set(outcome.deferred) | {d.seq for d, k in duplicates if k.seq in outcome.deferred}
    if taken and deferred >= {m.seq for m in taken}:
        raise BatchError(f"batch {number}: the backend deferred every memory")
    entries, unaccounted = job.account(outcome.final_text, outcome.declared, outcome.may_skip,
                                       deferred)
    problems = job.validate() + unaccounted
    if problems:
        raise BatchError(f"batch {number} breaks the scene rules; nothing written, memories "
                         "still pending:\n- " + "\n- ".join(problems) + "\n" + WAY_FORWARD)
    counts, merges = finalize_headers(job, datetime.now(UTC).replace(microsecond=0))
    ledger = Ledger(number, entries, merges)
    # Every selected memory is accounted for in the ledger, except those the backend
    # deferred: they are pending again and belong to a later batch.
    taken = [m for m in taken if m.seq not in deferred]
    new_state = advance_state(state, taken, sorted(deferred), number)
    if taken and new_state.pending >= state.pending:   # settling nothing, it would run for ever
        raise BatchError(f"batch {number} would leave as many memories pending as before "
                         f"({state.pending}); nothing written. `scenes doctor` says why")
    tokens = outcome.prompt_tokens + outcome.completion_tokens
    requested = bool(re.search(PERSONA_RE, outcome.final_text, re.S))
    # Edits a person made while the model worked get their own commit too, so the batch commit
    # holds only the batch (a clash with the batch's own files is caught by apply below).
    history.commit_hand_edits(unit.repo)
    refreshed = persona(unit.repo, scenes_after(store, job), new_state, requested) \
        if persona is not None else None
    if refreshed:
        new_state = new_state.model_copy(update={"since_persona": 0})
    message = commit_message(number, counts, outcome.final_text, taken, backend.name, tokens,
                             outcome.cost, ledger, refreshed[1] if refreshed else "")
    sha = _commit_batch(unit, job, new_state, ledger, message,
                        refreshed[0] if refreshed else None)
    refresh_index(store)
    return BatchResult(number=number, memory_ids=[m.id for m in taken], counts=counts,
                       summary=outcome.final_text, commit=sha, backend=backend.name,
                       tokens=tokens, cost=outcome.cost, ledger=ledger,
                       persona_requested=requested, persona_refreshed=bool(refreshed))


def _changed_since_read(store: Store, job: BatchJob) -> list[str]:
    """The scene files added, removed or changed on disk since ``job`` read them (a person
    deleting a scene while the backend works makes its calls fail: the batch runs again,
    as for an edit, instead of stopping the run)."""
    now = read_scene_texts(store)
    return sorted((set(now) ^ set(job.context.existing))
                  | {n for n, text in job.scene_texts.items() if now.get(n) != text})


def scenes_after(store: Store, job: BatchJob) -> dict[str, str]:
    """Scene name -> text as the batch leaves them: the files on disk with what the batch
    staged (final headers included) written over them, its deletions gone; a file that is
    not UTF-8 is read with replacement characters (the batch never touches one)."""
    texts = {}
    for name, text in read_scene_texts(store).items():
        if text is None:
            try:
                text = read_regular_text(store.scenes_dir / name, errors="replace")
            except OSError:
                continue
        texts[name] = text
    for name, content in job.box.pending().items():
        if content is DELETED:
            texts.pop(name, None)
        else:
            texts[name] = content
    return texts


class HeadMoved(BatchError):
    """A commit made beside the engine while the batch was saved: the batch is not
    committed, its paths are as that commit holds them (``run_batch`` runs it again)."""


class _ApplyFailed(BatchError):
    """Writing the scenes failed and the sandbox restored what it had replaced: nothing of
    the batch is on disk."""


def _commit_batch(unit: StoreUnit, job: BatchJob, new_state: State, ledger: Ledger,
                  message: str, persona: str | None = None) -> str:
    """Apply the staged scenes, write state, ledger and ``persona`` (its new text, when the
    batch refreshes it), commit; return the commit sha.

    One change of the unit of work: a crash anywhere in here is rolled back by the next
    command, a failure at once. Raises ``ConflictError`` (a hand edit clashed, of a scene or
    of ``persona.md``; nothing written) or ``BatchError``.
    """
    store, number = unit.store, ledger.batch
    # What each path will hold, so recovery can tell the batch's text from a later hand edit.
    planned = {f"scenes/{n}": None if c is DELETED else c for n, c in job.box.pending().items()}
    planned[STATE_FILE] = render_state(new_state)
    ledger_text = planned[ledger_path(number)] = ledger.render()
    persona_before = _persona_now(store) if persona is not None else None
    if persona is not None:
        planned[PERSONA_FILE] = persona
    # Ctrl-C and SIGTERM wait until the batch is committed or rolled back (and so does git).
    # A conflict at apply wrote nothing: rolling back then would "recover" the batch's files
    # to HEAD, reverting a hand edit made after the last hand-edit commit.
    with unit.change(planned, nothing_written=(ConflictError, _ApplyFailed),
                     roll_back=(BatchError,)):
        try:
            if persona is not None and _persona_now(store) != persona_before:
                raise ConflictError([PERSONA_FILE])   # edited by hand since it was looked at
            job.box.apply()
        except ConflictError:
            raise
        except (SandboxError, OSError) as exc:   # apply restored what it had replaced
            raise _ApplyFailed(f"batch {number}: writing the scenes failed ({exc}); nothing "
                               "written, memories still pending") from exc
        try:
            store.save_state(new_state)
            path = store.root / ledger_path(number)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, ledger_text)
            if persona is not None:
                atomic_write_text(store.persona_path, persona)
            # The texts the batch wrote, not the files as they are now: a line a person
            # adds meanwhile stays theirs (a hand edit the next batch commits).
            sha = history.commit_files(unit.repo, message, list(planned), texts=planned)
        except history.HeadMovedError as exc:   # the unit puts the batch's paths as HEAD has them
            raise HeadMoved(f"batch {number} was not committed: {exc}. Its files are as that "
                            "commit holds them; `scenes doctor` says whether the state "
                            "still agrees with the history (`scenes repair` mends it)") from exc
        except (OSError, history.HistoryError) as exc:   # rolled back to HEAD by the unit
            raise BatchError(f"batch {number}: saving the batch failed ({exc}); rolled back, "
                             "memories still pending") from exc
    return sha


def _persona_now(store: Store) -> bytes | None:
    """``persona.md``'s bytes on disk (None when there is none), to tell a hand edit made
    while the batch made its persona."""
    try:
        return store.persona_path.read_bytes()
    except OSError:
        return None
