"""What never reaches a store: ``<private>…</private>`` spans and secret lines (issue 38,
"Privacy").

A person marks what an agent may see but no memory may keep with ``<private>…</private>``
(the convention claude-mem's users already write); a span is taken out with its tags, across
lines too, and an opening tag never closed hides everything after it (a cut-off span must not
leak its second half). A line that holds a secret (an API key, a token, a password given as
``password: …``, a private key block) is taken out whole: a key is rarely alone on its line,
and what stands beside it ("export OPENAI_API_KEY=") is no memory either. The default patterns
are ``DEFAULT_SECRET_PATTERNS``; a store adds its own in ``config.toml``
(``secret_patterns``), never removes the defaults.

Every door in applies one ``Redactor``: the conversation readers (before extraction, so a
model never sees the text either), ``scenes add``, the inbox and the MCP ``remember``. The
journal, the scenes and the batch transcripts are made from what got in, so none of them can
hold what was taken out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# A span, its tags matched without regard to case; an unclosed one runs to the end.
PRIVATE_SPAN = re.compile(r"[ \t]*<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.IGNORECASE | re.DOTALL)
STRAY_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)
PEM_BLOCK = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE "
                       r"KEY-----|\Z)", re.DOTALL)

# Shapes of secrets, from the providers' documented key formats, and the assignments people
# type ("password: …", "API_KEY=…"). One per line of a person's paste is enough to drop it.
DEFAULT_SECRET_PATTERNS: tuple[str, ...] = (
    r"\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}",   # OpenAI, Anthropic, Stripe
    r"\bAKIA[0-9A-Z]{16}\b",                                   # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",                           # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",                             # GitLab
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}",                         # Slack
    r"\bAIza[0-9A-Za-z_-]{35}",                                # Google API key
    r"\bhf_[A-Za-z0-9]{30,}",                                  # Hugging Face
    r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",   # a JWT
    r"(?i:\bbearer\s+[A-Za-z0-9._~+/=-]{20,})",
    # No word start before the name (``db_password``): the whole line goes anyway, and a
    # leading ``\b[a-z0-9_]*`` made this the slowest pattern by far on long texts.
    r"(?i:(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|"
    r"auth[_-]?token|access[_-]?token|private[_-]?key|client[_-]?secret)[a-z0-9_]*"
    r"[\"']?\s*[:=]\s*[\"']?\S{4,})",
    r"(?i:\b(?:password|passwd|passphrase)\s+is\s+\S{4,})",
    r"(?:密码|口令|密钥)\s*(?:[:：=]|是|为)\s*\S{4,}",
    r"(?i:\b(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?|redis|amqp)://[^\s:@/]+:[^\s@/]+@)",
)


# A literal part of every built-in pattern, lower-cased: a text without any of them holds no
# built-in secret (kept in step with DEFAULT_SECRET_PATTERNS; tests/test_privacy.py checks).
TRIGGERS = ("sk-", "akia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
            "xox", "aiza", "hf_", "eyj", "bearer", "://", "pass", "secret", "key", "token",
            "密码", "口令", "密钥")


@dataclass(frozen=True)
class Cleaned:
    """A text with what may not be kept taken out. ``spans``: private spans (and private key
    blocks) removed; ``lines``: secret lines removed."""

    text: str
    spans: int = 0
    lines: int = 0


@dataclass
class Redactor:
    """Takes private spans and secret lines out of text. ``patterns``: the compiled secret
    patterns (the defaults and a store's own). ``spans`` / ``lines``: running totals of what
    it took out, for a report ("3 private spans and 1 secret line left out")."""

    patterns: tuple[re.Pattern[str], ...]
    spans: int = 0
    lines: int = 0
    _any: re.Pattern[str] | None = field(default=None, repr=False)
    _alone: tuple[re.Pattern[str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        # The built-in patterns as one alternation, searched only when the text holds one of
        # their literal parts (``TRIGGERS``, a substring test at C speed): most messages
        # hold none, and the alternation costs about a millisecond on a long answer. A
        # store's own patterns are searched one by one, always (they may carry flags).
        built_in = set(DEFAULT_SECRET_PATTERNS)
        defaults = [p.pattern for p in self.patterns if p.pattern in built_in]
        self._any = re.compile("|".join(f"(?:{p})" for p in defaults)) if defaults else None
        self._alone = tuple(p for p in self.patterns if p.pattern not in built_in)

    def _secret(self, text: str) -> bool:
        """True when ``text`` holds a match of any secret pattern."""
        if self._any is not None:
            lower = text.lower()
            if any(t in lower for t in TRIGGERS) and self._any.search(text):
                return True
        return any(p.search(text) for p in self._alone)

    def clean(self, text: str) -> Cleaned:
        """``text`` without its private spans (tags included) and without every line that
        matches a secret pattern; blank lines the removal leaves at the ends are dropped.
        Adds to the running totals."""
        spans = 0
        if "<" in text and PRIVATE_SPAN.search(text):
            text, spans = PRIVATE_SPAN.subn("", text)
        if "</" in text:
            text = STRAY_CLOSE.sub("", text)
        if "-----BEGIN" in text:
            text, more = PEM_BLOCK.subn("", text)
            spans += more
        dropped = 0
        if self._secret(text):
            kept = []
            for line in text.split("\n"):
                if self._secret(line):
                    dropped += 1
                else:
                    kept.append(line)
            text = "\n".join(kept)
        self.spans += spans
        self.lines += dropped
        return Cleaned(text.strip() if spans or dropped else text, spans, dropped)

    def text(self, text: str) -> str:
        """``clean(text).text``."""
        return self.clean(text).text

    def note(self) -> str:
        """What was taken out so far, in words ("" when nothing was)."""
        parts = []
        if self.spans:
            parts.append(f"{self.spans} private span{'s' if self.spans != 1 else ''}")
        if self.lines:
            parts.append(f"{self.lines} secret line{'s' if self.lines != 1 else ''}")
        return " and ".join(parts) + " left out" if parts else ""


def compile_patterns(extra: Iterable[str] = ()) -> tuple[re.Pattern[str], ...]:
    """The default secret patterns and ``extra`` (a store's ``secret_patterns``), compiled.
    Raises ``re.error`` for a pattern that is not a regular expression (the config check
    says which)."""
    return tuple(re.compile(p) for p in (*DEFAULT_SECRET_PATTERNS, *extra))


def redactor(extra: Iterable[str] = ()) -> Redactor:
    """A fresh ``Redactor`` with the defaults and ``extra`` patterns (totals at zero)."""
    return Redactor(compile_patterns(tuple(extra)))
