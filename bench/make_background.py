#!/usr/bin/env python3
"""The sentence encoder's background: the mean vector of everyday memories, which the offline
backend takes away from a small batch's vectors (``offline.meaning``: a few texts' own mean
is mostly their topic, not what every text shares).

    python bench/make_background.py

Reads bench/knowledge/memories.jsonl (465 memories of six people, English and Chinese,
written for the recall benchmark, not for grouping) and writes
scene_engine/offline/background.npy (512 float32 numbers). Run again after a change of
encoder; the file is derived, and the same input gives the same bytes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scene_engine.index.dense import Use  # noqa: E402

SOURCE = ROOT / "bench" / "knowledge" / "memories.jsonl"
TARGET = ROOT / "scene_engine" / "offline" / "background.npy"


def main() -> int:
    texts = [json.loads(line)["content"] for line in SOURCE.read_text("utf-8").splitlines()
             if line.strip()]
    vectors = np.stack([Use().passage([t])[0] for t in texts])    # one at a time: exact
    mean = vectors.mean(axis=0).astype("<f4")
    np.save(TARGET, mean)
    print(f"{TARGET.relative_to(ROOT)}: mean of {len(texts)} memories, norm "
          f"{float(np.linalg.norm(mean)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
