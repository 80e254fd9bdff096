"""Make ``import sandbox`` find the real package, not this test folder.

pytest puts ``tests/`` on sys.path (tests/conftest.py has no package), and this folder is named
like the package, so under a bare ``pytest`` run ``import sandbox`` could resolve to this folder
as a namespace package. ``python -m pytest`` (the README/CI command) is not affected.
"""

from __future__ import annotations

import sys
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[2])
if sys.path[:1] != [_REPO]:
    sys.path.insert(0, _REPO)
if getattr(sys.modules.get("sandbox"), "__file__", "") is None:  # a namespace stand-in
    del sys.modules["sandbox"]
