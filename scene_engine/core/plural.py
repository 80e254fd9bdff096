"""Counts as a person reads them: "1 memory", "2 memories", never "1 memories" or "batch(es)".

Every line the command line, the run display and the messages print with a count goes
through ``count`` (docs/DESIGN.md "Command line": output is for people first).
"""

from __future__ import annotations

__all__ = ["count", "plural_of"]


def count(n: int, word: str, plural: str | None = None) -> str:
    """``"1 memory"`` / ``"3 memories"``: ``n`` and ``word`` in the form that agrees with it.

    ``word``: the singular (its last word is the one made plural: "known id" -> "known ids");
    ``plural``: an irregular plural, if ``plural_of`` would get it wrong."""
    return f"{n} {word if n == 1 else (plural or plural_of(word))}"


def plural_of(word: str) -> str:
    """The English plural of ``word`` by the regular rules: memory -> memories, batch ->
    batches, scene -> scenes."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"
