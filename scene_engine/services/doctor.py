"""``scenes doctor``: check every invariant of a store and say what is broken.

Checks: every scene's header parses; the index matches the files (names and checksums);
``state.json`` is valid and agrees with the journal; history and state agree (every processed
memory belongs to exactly one live batch, none lost, none processed twice); every memory a
live batch took is accounted for in its ledger; no interrupted batch is waiting for recovery;
the extraction ledger names only memories of the journal.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import warnings
from collections import Counter
from typing import TYPE_CHECKING

from scene_engine.batch.rules import merged_from, name_problem
from scene_engine.batch.transaction import SCENE_SANDBOX_CHARS, too_long
from scene_engine.core.errors import plain_error
from scene_engine.core.fs import read_regular, read_regular_text
from scene_engine.core.plural import count
from scene_engine.services.persona import MAX_PERSONA_CHARS, dangling_links, scene_link
from scene_engine.store import history, recovery
from scene_engine.store.history import expand_seqs
from scene_engine.store.layout import is_utf8_name, repair_advice, repair_order
from scene_engine.store.memories import Journal, Memory
from scene_engine.store.numbering import journal_edits
from scene_engine.store.scene import SceneHeaderWarning, read_scene
from scene_engine.store.store import State, Store

_TIMELINE_HEADING = re.compile(r"^## Timeline(?: \([^)]*\))?$")

if TYPE_CHECKING:
    from git import Repo


def check_store(store: Store) -> list[str]:
    """Return a list of problems (empty when the store is healthy). Never raises for a
    broken store: what it cannot read is itself a problem."""
    problems: list[str] = []
    for check in (_check_scenes, _check_index, _check_state, _check_history, _check_ledgers,
                  _check_persona, _check_extraction):
        try:
            problems += check(store)
        except Exception as exc:  # a check that cannot run is a finding, not a crash
            problems.append(f"{check.__name__.removeprefix('_check_')}: cannot check: "
                            f"{plain_error(exc)}")
    if recovery.pending_intent(store) is not None:
        problems.append("an interrupted batch awaits recovery (the next run or add rolls it back)")
    return repair_order(store.root, problems)


def _check_scenes(store: Store) -> list[str]:
    if not store.scenes_dir.is_dir() or store.scenes_dir.is_symlink():
        return [f"scenes: {store.scenes_dir} is missing or not a folder; scenes live there"]
    problems = _check_layout(store)
    names = store.scene_names()
    if store.persona_path.is_symlink():
        problems.append("persona.md is a symbolic link; the engine reads no file outside the "
                        "store (the persona is left out of recall)")
    elif store.persona_path.is_file():
        try:
            read_regular_text(store.persona_path)
        except UnicodeDecodeError as exc:    # recall leaves the bytes out; `persona` refuses
            problems.append(f"persona.md is not UTF-8 (byte {exc.start}); save it as UTF-8 "
                            "or make it anew (`scenes persona --force`)")
        size = len(read_regular_text(store.persona_path, errors="replace").strip())
        if size > MAX_PERSONA_CHARS:
            problems.append(f"persona.md has {size} characters; at most {MAX_PERSONA_CHARS} "
                            "(`scenes persona --force` rewrites it)")
    broken = 0
    problems += _ambiguous_names(names)
    taken_in: dict[str, str] = {}       # a name some scene's merged_from lists -> that scene
    for name in names:
        unnamed = name_problem(name)
        if unnamed:     # a person's file under a name the engine never gives: left alone
            problems.append(f"scenes: {name}: {unnamed}")
            broken += 1
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", SceneHeaderWarning)
                scene = read_scene(store.scenes_dir / name)
        except UnicodeDecodeError as exc:   # an old editor's Latin-1 or GBK: frozen until saved
            problems.append(f"scene {name} is not UTF-8 (byte {exc.start}); batches leave it "
                            "alone until it is saved as UTF-8")
            broken += 1
            continue
        except OSError as exc:
            problems.append(f"scene {name} cannot be read: {exc.strerror or exc}")
            broken += 1
            continue
        problems += [f"scene {w.message}" for w in caught
                     if issubclass(w.category, SceneHeaderWarning)]
        if scene.header is None and not caught:
            problems.append(f"scene {name} has no header (start it with `---`, "
                            "`summary: ...`, `---`)")
        broken += scene.header is None and not unnamed
        path = store.scenes_dir / name     # a file of fewer bytes has fewer characters
        long = path.stat().st_size > SCENE_SANDBOX_CHARS and \
            too_long(read_regular_text(path, errors="replace"))
        if long:                           # batches leave it alone (batch.transaction)
            problems.append(f"scene {name} {long}; batches leave it alone")
            broken += scene.header is not None and not unnamed
        problems += _repeated_timeline(store, name, scene)
        taken_in.update((m.casefold(), name) for m in merged_from(scene))
    # A scene merged away or renamed that exists again (an editor saving an old buffer, a
    # restored backup): the same facts twice, under a name the survivor claims.
    problems += [f"scenes: {name} exists again, but {taken_in[name.casefold()]} took it in "
                 "(merged_from); merge what is new in it by hand and delete it"
                 for name in names if taken_in.get(name.casefold(), name) != name]
    cap = store.config.max_scenes - 1
    if len(names) > cap:
        problems.append(f"scenes: {count(len(names), 'scene')}, at or over the cap of {cap}; "
                        f"{_cap_outlook(store, broken)}")
    elif names and broken == len(names) == cap:     # no new scene, none a batch may change
        problems.append(f"scenes: all {len(names)} scenes fill the cap of {cap} and a person "
                        "must fix each first, so every batch fails until one is fixed or "
                        "max_scenes raised")
    return problems


def _cap_outlook(store: Store, broken: int) -> str:
    """What the next batch does about a store at or over its scene cap (the offline backend's
    own plan, ``offline.backend.cap_outlook``, worked out without writing)."""
    from scene_engine.batch.transaction import build_job
    from scene_engine.offline.backend import cap_outlook

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            repo = history.open_repo(store.root)
            try:
                job = build_job(store, 0, [], repo=repo)
                merges, stuck = cap_outlook(job)
            finally:
                repo.close()
    except Exception as exc:   # what cannot be worked out is said, not guessed
        return f"cannot tell what the next batch does about it ({plain_error(exc)})"
    held = (f"{broken} cannot be merged (a person must fix them first); " if broken else "")
    if not stuck and not merges:
        return held + "the next batch folds new memories into the scenes it may change"
    if not stuck:
        return held + (f"the next batch merges {count(merges, 'scene')} into other scenes, "
                       "keeping every line a person wrote")
    if not job.scene_texts:
        return held + ("no scene is left that a batch may change, so every batch fails until "
                       "a person fixes one of them or raises max_scenes")
    done = f"after merging {count(merges, 'scene')} " if merges else ""
    return (held + f"{done}no two scenes can be merged without losing what they hold "
            "(pinned, or header keys set differently), so batches fold new memories into "
            "the scenes there are and open no new scene: merge two by hand, or raise "
            "max_scenes")


def _repeated_timeline(store: Store, name: str, scene) -> list[str]:
    """A scene whose timeline heading is there more than once (an older engine's merge of a
    hand-copied scene wrote it again): one section is meant, a person keeps one by hand."""
    if scene.header is None or "## Timeline" not in scene.body:
        return []
    text = read_regular_text(store.scenes_dir / name).replace("\r\n", "\n")
    seen: dict[str, list[int]] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if _TIMELINE_HEADING.match(line.strip()):
            seen.setdefault(line.strip(), []).append(number)
    return [f"scene {name}: the heading \"{heading}\" is there {len(lines)} times (lines "
            f"{', '.join(map(str, lines))}); delete all but the first by hand (the lines under "
            "them stay)" for heading, lines in seen.items() if len(lines) > 1]


def _ambiguous_names(names: list[str]) -> list[str]:
    """Scene names that differ only by case or Unicode form (one file on some systems)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(unicodedata.normalize("NFC", name).casefold(), []).append(name)
    return [f"scenes: {' and '.join(group)} differ only by case or Unicode form; batches "
            "leave them alone "
            "until one is renamed or merged by hand" for group in groups.values()
            if len(group) > 1]


def _check_persona(store: Store) -> list[str]:
    return [f"persona: {scene_link(link, store.config.wiki_links)} names no scene (renamed "
            "or merged away); the next refresh rewrites the list, or `scenes persona --force` now"
            for link in dangling_links(store)]


def _check_layout(store: Store) -> list[str]:
    """Things in ``scenes/`` that are not scenes: links, folders, other suffixes, hidden
    names (editor swap files aside, which come and go)."""
    problems = []
    for entry in sorted(store.scenes_dir.iterdir()):
        name = entry.name
        if name == ".gitkeep" or name.endswith((".swp", ".swx", "~", ".tmp")):
            continue
        if not is_utf8_name(name):
            problems.append(f"scenes: {name.encode('utf-8', 'surrogateescape')!r} has a name "
                            "that is not UTF-8; the engine leaves it out: rename it")
        elif entry.is_symlink():
            problems.append(f"scenes: {name} is a symbolic link; the engine never follows "
                            "links: replace it with a real file or remove it")
        elif entry.is_dir():
            problems.append(f"scenes: {name}/ is a folder; scenes are flat `*.md` files")
        elif not entry.is_file():
            problems.append(f"scenes: {name} is not a regular file (a pipe or a device); "
                            "the engine never reads it: remove it")
        elif name.startswith(".") or not name.lower().endswith(".md"):
            problems.append(f"scenes: {name} is not a scene (scenes are `*.md`, not hidden)")
    return problems


def _check_index(store: Store) -> list[str]:
    from scene_engine.index.scenes import read_index

    # The index is derived and never in git: a fresh clone has none, and it is built here as
    # by any command that reads it. Bring it up to date first (an edit the watcher has not seen, a
    # batch cut short), and report only what a sync cannot fix. A busy index (another process
    # writes it) is not a broken one: say so and check the rest.
    index, stale = read_index(store)
    try:
        entries = index.entries()
    finally:
        index.close()
    if stale:
        warnings.warn(f"index not checked: {stale}", stacklevel=2)
        return []
    problems = []
    files = set(store.scene_names())
    for name in sorted(files - set(entries)):
        problems.append(f"index: {name} is not indexed; run `scenes reindex`")
    for name in sorted(set(entries) - files):
        problems.append(f"index: {name} is indexed but has no file; run `scenes reindex`")
    for name in sorted(files & set(entries)):
        digest = hashlib.sha256(read_regular(store.scenes_dir / name)).hexdigest()
        if entries[name].checksum != digest:
            problems.append(f"index: {name} changed since it was indexed; run `scenes reindex`")
    return problems


def _check_state(store: Store) -> list[str]:
    state = store.load_state()
    journal, unread = Journal(store.memories_dir).intact()
    problems = [f"journal: {line}" for line in unread]
    if unread:      # the counts below would only repeat it; the other checks go on
        return problems + _cursor_and_ids(state, journal)
    if len(journal) != state.next_seq:
        problems.append(f"state: journal holds {count(len(journal), 'memory')} but state says "
                        f"{state.next_seq}; {repair_advice(store.root)}")
    if [m.seq for m in journal] != list(range(len(journal))):
        problems.append("state: journal numbers are not 0, 1, 2, ... in order (a git merge "
                        "of two copies of the store?); "
                        + repair_advice(store.root, "numbers them anew"))
    return problems + _cursor_and_ids(state, journal)


def _cursor_and_ids(state: State, journal: list[Memory]) -> list[str]:
    problems = []
    if state.cursor > state.next_seq:
        problems.append(f"state: cursor {state.cursor} is past the journal end {state.next_seq}")
    ids = Counter(m.id for m in journal)
    problems += [f"state: memory id {i} appears {n} times" for i, n in ids.items() if n > 1]
    return problems


def _check_extraction(store: Store) -> list[str]:
    """The extraction ledger (``.scene-engine/dedupe.jsonl``) names only journal memories."""
    from scene_engine.extraction.events import problems

    return problems(store, Journal(store.memories_dir).intact()[0])   # bad lines: state


def _check_history(store: Store) -> list[str]:
    """Every memory the state counts as processed is in exactly one live batch."""
    state = store.load_state()
    repo = history.open_repo(store.root)
    owners: Counter[int] = Counter()
    for commit in history.live_batches(repo).values():
        owners.update(expand_seqs(history.trailers(history.message_of(commit)).get("Memory-Seqs", "")))
    pending = set(state.requeued) | set(state.forgotten) | set(range(state.cursor, state.next_seq))
    processed = set(range(state.next_seq)) - pending
    problems = [f"journal: {edit}" for edit in journal_edits(repo)]
    lost = sorted(s for s in processed if owners[s] == 0)
    twice = sorted(s for s, n in owners.items() if n > 1)
    stray = sorted(s for s in owners if s in pending)
    # What to do about each: the state is set again from the live batches (a commit of a
    # person's taken over a batch's files leaves memories processed by no batch).
    fix = "; `scenes repair` sets the state by the history"
    if lost:
        problems.append(f"history: {count(len(lost), 'processed memory', 'processed memories')} "
                        f"{'belongs' if len(lost) == 1 else 'belong'} to no live batch "
                        f"(first #{lost[0]}){fix}")
    if twice:
        problems.append(f"history: {count(len(twice), 'memory')} "
                        f"{'was' if len(twice) == 1 else 'were'} processed twice "
                        f"(first #{twice[0]}){fix}")
    if stray:
        problems.append(f"history: {count(len(stray), 'pending memory', 'pending memories')} "
                        f"{'is' if len(stray) == 1 else 'are'} in a live batch "
                        f"(first #{stray[0]}){fix}")
    last = max(history.live_batches(repo), default=0)
    if last > state.batch:
        problems.append(f"history: batch {last} is committed but state counts {state.batch}")
    return problems + _ignored_files(store, repo)


def _ignored_files(store: Store, repo: Repo) -> list[str]:
    """Store files the repository's ignore rules keep out of git (a vault's "*.jsonl" rule
    added after init): they are never committed, so a clone lacks them."""
    from scene_engine.store.store import STORE_FILES

    found = []
    for part in STORE_FILES:
        name = history.ignored_path(repo, store.root.absolute() / part)
        if name:
            found.append(f"git: the repository ignores {name} (a .gitignore rule): files like "
                         "it are never committed and a clone lacks them; remove the rule")
    return found


def _check_ledgers(store: Store) -> list[str]:
    """Every memory of every live batch has a ledger entry (placed / recorded / duplicate /
    skipped, with its scenes), and each entry's id is the memory the journal holds at the
    number it gives (``_mismatched``). Batches made before ledgers were kept have no
    ``Ledger`` trailer and are taken as they are."""
    from scene_engine.batch.accounting import OUTCOMES, Ledger

    repo = history.open_repo(store.root)
    problems = []
    journal = {m.seq: (m.id, *m.aliases) for m in Journal(store.memories_dir).intact()[0]}
    for number, commit in sorted(history.live_batches(repo).items()):
        found = history.trailers(history.message_of(commit))
        if "Ledger" not in found:
            continue
        try:
            blob = commit.tree / history.tree_path(repo, found["Ledger"])
            committed = blob.data_stream.read()
            ledger = Ledger.parse(committed.decode())
        except (KeyError, ValueError) as exc:
            problems.append(f"ledger: batch {number} has no readable ledger ({exc})")
            continue
        problems += _mismatched(number, ledger, journal)
        problems += _ledger_on_disk(store, number, found["Ledger"], committed, journal)
        entries = {e.seq: e for e in ledger.entries}
        seqs = expand_seqs(found.get("Memory-Seqs", ""))
        missing = [s for s in seqs if s not in entries]
        vague = [s for s in seqs if s in entries and (
            entries[s].outcome not in OUTCOMES
            or (entries[s].outcome in ("placed", "recorded") and not entries[s].scenes)
            or (entries[s].outcome == "skipped" and not entries[s].reason))]
        if missing or vague:
            first = (missing or vague)[0]
            problems.append(f"ledger: batch {number} does not account for "
                            f"{len(missing) + len(vague)} of its memories (first #{first}); "
                            "`scenes trace` shows where each went")
    return problems


def _ledger_on_disk(store: Store, number: int, path: str, committed: bytes,
                    journal: dict[int, tuple[str, ...]]) -> list[str]:
    """Batch ``number``'s ledger file as it is now against what the batch committed: gone,
    or changed since (by hand, or by a merge that kept another copy's file), it no longer
    says where the batch's memories went; what it says now is checked against the journal
    too."""
    from scene_engine.batch.accounting import Ledger

    file = store.root / path
    if not file.exists():
        return [f"ledger: {path} (batch {number}) is gone; `git checkout HEAD -- {path}` "
                "brings it back"]
    now = file.read_bytes()
    if now == committed:
        return []
    problems = [f"ledger: {path} differs from what batch {number} committed (edited by "
                "hand, or a merge kept another copy's); `scenes repair` after a merge, "
                f"else `git log -- {path}` shows the change"]
    try:
        problems += _mismatched(number, Ledger.parse(now.decode("utf-8")), journal)
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        problems.append(f"ledger: {path} is not readable ({exc})")
    return problems


def _mismatched(number: int, ledger, journal: dict[int, tuple[str, ...]]) -> list[str]:
    """A live batch's ledger entries whose id is not the memory the journal holds at the
    number the entry gives (``journal``: seq -> (id, *aliases)): after a merge of two copies
    renumbered without regard to what each batch took, the ledger credits a memory with
    another's fate (``numbering``)."""
    wrong = [e for e in ledger.entries if e.id not in journal.get(e.seq, ())]
    if not wrong:
        return []
    first = wrong[0]
    held = journal.get(first.seq)
    there = f"is memory {held[0]}" if held else "does not exist"
    return [f"ledger: batch {number} took memory {first.id} as #{first.seq}, but the "
            f"journal's #{first.seq} {there} ({len(wrong)} such entr"
            f"{'y' if len(wrong) == 1 else 'ies'}); `scenes repair` decides again, by id, "
            "which memories are folded"]
