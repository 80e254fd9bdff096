"""Property: whatever a person and the offline backend do in turn, nothing a person wrote is
lost and every processed memory is accounted for (issue 9).

Hypothesis draws sequences of: batches of new memories on a dozen topics (folded by the offline
backend under a small scene cap, so merges happen), hand edits (a line appended to a scene,
a dated line in the timeline's own form, a header key added in a spelling YAML would not
give back, a scene renamed, a scene pinned) and
undos of the newest batch. After every step: every line a person appended is still a line of
some scene, every header key line a person added is still in some scene's header byte for byte,
and doctor finds no processed memory without a live batch and a ledger entry.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import git
import pytest
from clirunner import CheckedRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scene_engine.batch.contract import BatchError
from scene_engine.cli import app
from scene_engine.offline.backend import OfflineBackend
from scene_engine.services.add import add_memories
from scene_engine.services.doctor import check_store
from scene_engine.services.run import run_pending
from scene_engine.store import history
from scene_engine.store.store import init_store, open_store

TOPICS = ["Went hiking on the {w} ridge trail with Bob", "Cooked {w} curry with coriander",
          "Piano lesson on the {w} sonata with the teacher", "Knee physiotherapy session {w}",
          "Paid the {w} car insurance bill", "Watered the {w} tomatoes on the balcony",
          "我和妈妈在{w}吃了晚饭", "周末在{w}练习钢琴"]
WORDS = ["alpine", "cedar", "nova", "maple", "orion", "上海", "杭州"]
KEY_SPELLINGS = ["10:00", "0755", "yes", "1.10", "2024-05-01 10:00", "'quoted'  # note"]

step = st.one_of(
    st.tuples(st.just("add"), st.integers(1, 6), st.integers(0, 10_000)),
    st.tuples(st.just("append"), st.integers(0, 20), st.integers(0, 10_000)),
    st.tuples(st.just("dated"), st.integers(0, 20), st.integers(1, 28)),
    st.tuples(st.just("key"), st.integers(0, 20), st.integers(0, len(KEY_SPELLINGS) - 1)),
    st.tuples(st.just("rename"), st.integers(0, 20), st.integers(0, 0)),
    st.tuples(st.just("pin"), st.integers(0, 20), st.integers(0, 0)),
    st.tuples(st.just("undo"), st.integers(0, 0), st.integers(0, 0)),
)


class World:
    """A store plus what the person wrote into it (to be found again)."""

    def __init__(self, root: Path):
        store = init_store(root)
        text = re.sub(r"(?m)^max_scenes = \d+", "max_scenes = 5", store.config_path.read_text())
        text = re.sub(r"(?m)^max_scene_chars = \d+", "max_scene_chars = 700", text)
        store.config_path.write_text(text)
        history.commit_files(git.Repo(root), "hand edit: config.toml",
                             [".scene-engine/config.toml"])
        self.store = open_store(root)
        self.lines: list[str] = []
        self.keys: list[str] = []
        self.count = 0
        self.renames = 0

    def scene(self, index: int) -> Path | None:
        names = self.store.scene_names()
        return self.store.scenes_dir / names[index % len(names)] if names else None

    def do(self, kind: str, a: int, b: int) -> None:
        getattr(self, f"_{kind}")(a, b)

    def _add(self, count: int, seed: int) -> None:
        rows = []
        for i in range(count):
            n = self.count + i
            text = TOPICS[(seed + i * 7) % len(TOPICS)].format(w=WORDS[(seed + n) % len(WORDS)])
            rows.append({"id": f"m{n}", "content": f"{text} (note {n})",
                         "created_at": 1_700_000_000 + 3600 * n})
        self.count += count
        add_memories(self.store, json.dumps(rows, ensure_ascii=False).encode())
        try:
            run_pending(self.store, OfflineBackend())
        except BatchError as exc:   # only a full store may refuse, and then keeps them pending
            assert "fits in no scene" in str(exc) or "cannot" in str(exc), exc

    def _append(self, index: int, tag: int) -> None:
        path = self.scene(index)
        if path:
            line = f"Hand line {tag}-{len(self.lines)}: keep this as I wrote it."
            path.write_text(path.read_text("utf-8").rstrip("\n") + f"\n{line}\n", "utf-8")
            self.lines.append(line)

    def _dated(self, index: int, day: int) -> None:
        """A line in the timeline's own form: the engine must still see it is a person's."""
        path = self.scene(index)
        if path:
            line = f"- 2023-11-{day:02d}: Hand dated {len(self.lines)}, in my own words."
            path.write_text(path.read_text("utf-8").rstrip("\n") + f"\n{line}\n", "utf-8")
            self.lines.append(line)

    def _key(self, index: int, spelling: int) -> None:
        path = self.scene(index)
        if path:
            line = f"note_{len(self.keys)}: {KEY_SPELLINGS[spelling]}"
            text = path.read_text("utf-8")
            path.write_text(text.replace("---\n", f"---\n{line}\n", 1), "utf-8")
            self.keys.append(line)

    def _rename(self, index: int, _: int) -> None:
        path = self.scene(index)
        if path:
            self.renames += 1      # a fresh name: renaming onto a scene would replace it
            path.rename(path.with_name(f"renamed-{self.renames}.md"))

    def _pin(self, index: int, _: int) -> None:
        path = self.scene(index)
        if path and "pinned: true" not in path.read_text("utf-8"):
            self._key_line(path, "pinned: true")

    def _key_line(self, path: Path, line: str) -> None:
        path.write_text(path.read_text("utf-8").replace("---\n", f"---\n{line}\n", 1), "utf-8")

    def _undo(self, *_) -> None:
        # The checked runner fails on a crash (exit 1 with an exception, no "Traceback"
        # in the output); exit 1 without one is a refusal (a later change, nothing to undo).
        result = CheckedRunner().invoke(app, ["--dir", str(self.store.root), "undo"])
        assert result.exit_code in (0, 1), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)

    def check(self, history_so_far: list) -> None:
        texts = [p.read_text("utf-8") for p in self.store.scenes_dir.glob("*.md")]
        lines = {line.strip() for text in texts for line in text.splitlines()}
        headers = [text.split("---\n")[1] if text.startswith("---\n") else "" for text in texts]
        lost = [line for line in self.lines if line not in lines]
        assert not lost, f"lost a person's line {lost} after {history_so_far}"
        for key in self.keys:
            assert any(f"{key}\n" in h for h in headers), \
                f"lost header key {key!r} after {history_so_far}"
        problems = [p for p in check_store(self.store)
                    if p.startswith(("history:", "ledger:", "state:"))]
        assert not problems, f"{problems} after {history_so_far}"


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(step, min_size=4, max_size=14))
def test_nothing_a_person_wrote_is_lost_and_every_memory_is_accounted_for(steps):
    steps = [("add", 5, 1), *steps, ("add", 6, 2)]
    with tempfile.TemporaryDirectory() as tmp:
        world = World(Path(tmp) / "store")
        for i, (kind, a, b) in enumerate(steps):
            world.do(kind, a, b)
            world.check(steps[: i + 1])
