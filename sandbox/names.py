"""File-name rules: which names a model may use, and when two spellings are the same file.

Rules (docs/DESIGN.md "The sandbox"): flat relative names with an allowed suffix; nothing that any
common platform would read as a path, a device, a hidden file or a different name than shown.
Windows rules are applied on every platform because a store is a git repository that may be
checked out anywhere.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from .errors import NameRefused

MAX_NAME_BYTES = 200
"""Cap on the UTF-8 length of a name; leaves room under the usual 255-byte limit for temp names."""

# Characters that look like dots or slashes; refused so no display or later NFKC pass can turn
# a name into a path (U+FF0E/FF0F/FF3C full-width, U+2215 division slash, U+2044 fraction slash,
# U+29F8 big solidus, U+29F9 big reverse solidus, U+2024 one-dot leader, U+FE52 small full
# stop, U+FE68 small reverse solidus, U+2216 set minus, U+3002 ideographic full stop is allowed).
_LOOKALIKES = frozenset("\uff0e\uff0f\uff3c\u2215\u2044\u29f8\u29f9\u2024\ufe52\ufe68\u2216")
# Separators of any platform plus characters Windows forbids in names (":" also covers drive
# letters "C:x.md" and NTFS alternate streams).
_FORBIDDEN = frozenset('/\\:*?"<>|')
# Unicode categories refused anywhere in a name: controls (incl. NUL), format characters (bidi
# overrides and isolates U+202A-202E, U+2066-2069, marks U+200E/F, zero-width characters, BOM),
# lone surrogates, line and paragraph separators, private use and unassigned code points.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Windows device names, reserved with any suffix ("con.md", "nul.tar.md"); superscript digits
# count as digits there too.
_DEVICE_RE = re.compile(r"(con|prn|aux|nul|conin\$|conout\$|(com|lpt)[0-9\u00b9\u00b2\u00b3])")


def name_key(name: str) -> str:
    """Identity of a name for comparison: NFC after casefold (``Work.md`` == ``work.md``).

    ``name``: a name already accepted by ``validate_name`` (or an on-disk spelling). Returns a
    string that is equal for two spellings exactly when the sandbox treats them as one file.
    """
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _describe(ch: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``: how a refused character is named to the model."""
    return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed character')})"


def _check_chars(name: str) -> None:
    """Raise NameRefused for the first character the rules forbid."""
    for ch in name:
        if ch in _FORBIDDEN:
            raise NameRefused(
                f"the name contains {ch!r}; paths and separators are not allowed. "
                "Use a plain file name such as 'notes.md' (all files live in one folder)."
            )
        if ch in _LOOKALIKES:
            raise NameRefused(
                f"the name contains {_describe(ch)}, which looks like a dot or slash. "
                "Use plain ASCII '.' only before the suffix, and no slashes."
            )
        if unicodedata.category(ch) == "Zs" and ch != " ":
            raise NameRefused(
                f"the name contains the unusual space {_describe(ch)}. Use a plain space or '-'."
            )
        if unicodedata.category(ch) in _BAD_CATEGORIES:
            raise NameRefused(
                f"the name contains the invisible or control character {_describe(ch)}. "
                "Use only visible characters in file names."
            )


def validate_name(name: object, suffixes: Iterable[str] = (".md",)) -> str:
    """Check a file name a model sent and return its canonical (NFC) spelling.

    ``name``: anything (a model may send any JSON value). ``suffixes``: allowed endings such as
    ``(".md",)``, compared case-insensitively. Returns the name NFC-normalised (case kept).
    Raises ``NameRefused`` with a message for the model that names the rule and the fix. Nothing
    is URL-decoded: ``%2e%2e.md`` is the literal, legal name it spells.
    """
    suffixes = tuple(suffixes)
    allowed = ", ".join(repr(s) for s in suffixes)
    if not isinstance(name, str):
        raise NameRefused(f"the path must be a string such as 'notes.md', not {type(name).__name__}.")
    if not name:
        raise NameRefused("the path is empty. Give a file name such as 'notes.md'.")
    if len(name) > MAX_NAME_BYTES:  # cheap early exit before normalising huge input
        raise NameRefused(f"the name is longer than {MAX_NAME_BYTES} bytes. Use a shorter name.")
    _check_chars(name)  # before NFC too, so nothing is normalised away unseen
    nfc = unicodedata.normalize("NFC", name)
    _check_chars(nfc)
    if len(nfc.encode("utf-8")) > MAX_NAME_BYTES:
        raise NameRefused(
            f"the name is longer than {MAX_NAME_BYTES} bytes (UTF-8). Use a shorter name."
        )
    if nfc != nfc.strip():
        raise NameRefused("the name starts or ends with whitespace. Remove the spaces.")
    if nfc.endswith("."):
        raise NameRefused(f"the name ends with a dot. Names must end with {allowed}.")
    if nfc.startswith("."):
        raise NameRefused(
            "names starting with '.' are hidden files and are not allowed. "
            "Use a plain name such as 'notes.md'."
        )
    if nfc.startswith("-"):
        raise NameRefused("names may not start with '-'. Start the name with a letter or digit.")
    if ".." in nfc:
        raise NameRefused("the name contains '..'. Use a plain name without '..'.")
    suffix = next((s for s in suffixes if nfc[-len(s) :].casefold() == s.casefold()), None)
    if suffix is None:
        example = f"notes{suffixes[0]}" if suffixes else "notes"
        raise NameRefused(f"only files ending with {allowed} may be used. Rename it, e.g. '{example}'.")
    stem = nfc[: len(nfc) - len(suffix)]
    if not stem.strip():
        raise NameRefused(f"the name has no stem before the suffix. Use e.g. 'notes{suffix}'.")
    device = nfc.casefold().split(".", 1)[0].rstrip(" ")
    if _DEVICE_RE.fullmatch(device):
        raise NameRefused(
            f"'{device}' is a reserved device name on Windows. Choose another name."
        )
    return nfc
