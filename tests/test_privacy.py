"""What never reaches a store (issue 38, "Privacy"): ``<private>…</private>`` spans and lines
holding a secret, by the built-in patterns and a store's own, through every door in."""

from __future__ import annotations

import json
import subprocess

import pytest
from clirunner import CheckedRunner

from scene_engine.cli import app
from scene_engine.core.privacy import redactor
from scene_engine.store.config import ConfigError
from scene_engine.store.memories import Journal
from scene_engine.store.store import init_store, open_store

runner = CheckedRunner()
KEY = "sk-proj-Zx8aQ2mN4bV6cX1zL9kJ7hG5fD3sA0pO"


@pytest.fixture
def store(tmp_path):
    return init_store(tmp_path / "s")


def set_patterns(store, toml_list: str) -> None:
    config = store.meta_dir / "config.toml"
    lines = [f"secret_patterns = {toml_list}" if line.startswith("# secret_patterns") else line
             for line in config.read_text(encoding="utf-8").splitlines()]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cli(store, *args, stdin=None):
    return runner.invoke(app, ["--dir", str(store.root), *args], input=stdin)


@pytest.mark.parametrize("text, kept", [
    ("Lunch with <private>Dr. Ruiz about the biopsy</private> went fine.",
     "Lunch with went fine."),
    ("Notes <PRIVATE>one\ntwo</PRIVATE>\nthree", "Notes\nthree"),
    ("Before <private>never closed, all of this is hidden", "Before"),
    (f"Set the key.\nexport OPENAI_API_KEY={KEY}\nThen run it.", "Set the key.\nThen run it."),
    ("db_password: correct-horse-battery", ""),
    ("My password is hunter22 and I forget it.", ""),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\n"
     "The deploy key is on the NAS.", "The deploy key is on the NAS."),
    ("Connect to postgres://app:s3cretpw@db.internal/orders for reports.", ""),
    ("The token is new at each start; the secret is out.",
     "The token is new at each start; the secret is out."),       # words, not secrets
    ("我的密码是abcd1234\n明天去上海。", "明天去上海。"),
])
def test_private_spans_and_secret_lines_are_taken_out(text, kept):
    assert redactor().text(text) == kept


def test_a_store_adds_its_own_patterns_and_keeps_the_defaults(store):
    set_patterns(store, r'["(?i)project\\s+falcon", "\\bINC-\\d{4}\\b"]')
    private = open_store(store.root).config.redactor()
    said = private.text(f"Falcon news.\nProject Falcon ships in May.\nSee INC-4821.\n{KEY}\nok")
    assert said == "Falcon news.\nok"
    assert private.note() == "3 secret lines left out"


def test_a_pattern_that_is_not_a_regex_names_the_key(store):
    set_patterns(store, '["(unclosed"]')
    with pytest.raises(ConfigError, match="secret_patterns"):
        open_store(store.root)


def test_scenes_add_never_journals_a_private_span(store):
    record = {"id": "m1", "content": "Met <private>Jonas from the clinic</private> for coffee "
                                     "in Lisbon.", "created_at": "2026-01-05T09:00:00Z"}
    assert cli(store, "add", "-", stdin=json.dumps(record)).exit_code == 0
    [memory] = Journal(store.memories_dir).all()
    assert memory.content == "Met for coffee in Lisbon."
    only = {"content": f"<private>all of it</private>\nAPI_KEY={KEY}"}
    refused = cli(store, "add", "-", stdin=json.dumps(only))
    assert refused.exit_code == 2 and "only private text" in refused.output


def test_nothing_private_reaches_any_file_of_the_store_or_its_history(store, tmp_path):
    chat = [{"role": "user", "content": "I moved to Porto in March. <private>My landlord is "
                                        "Rui Costa.</private>", "created_at": "2026-03-01"},
            {"role": "user", "content": f"I use the OpenAI API daily.\nkey={KEY}",
             "created_at": "2026-03-02"}]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(chat))
    result = cli(store, "ingest", "--conversation", str(path))
    assert result.exit_code == 0, result.output
    assert "1 private span and 1 secret line left out" in result.output
    for file in store.root.rglob("*"):
        if file.is_file() and ".git" not in file.parts and file.suffix != ".sqlite":
            text = file.read_bytes()
            assert b"Rui Costa" not in text and KEY.encode() not in text, file
    history = subprocess.run(["git", "log", "-p", "--all"], cwd=store.root, check=True,
                             capture_output=True).stdout
    assert b"Rui Costa" not in history and KEY.encode() not in history
    assert b"Porto" in history


@pytest.mark.parametrize("secret", [
    KEY, "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx", "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1" * 18, "github_pat_" + "B2" * 16, "glpat-" + "c3" * 11, "xoxb-1234567890-abc",
    "AIza" + "D4" * 18, "hf_" + "e5" * 16,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345", "client_secret = 'q9w8e7r6'",
    "Passphrase is tulip-moon-42", "密码：abcd1234", "mongodb+srv://ana:pw1234@cluster0/db"])
def test_every_built_in_pattern_is_found_past_the_quick_check(secret):
    from scene_engine.core.privacy import TRIGGERS

    assert any(t in secret.lower() for t in TRIGGERS)
    assert redactor().text(f"before\nuse {secret} here\nafter") == "before\nafter"
