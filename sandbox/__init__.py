"""Sandboxed file tools for a model: read, write and replace text files under one root.

Standalone (knows nothing about scenes); see docs/DESIGN.md "The sandbox" and ``Sandbox``.
"""

from .core import Sandbox
from .errors import ApplyError, ConflictError, NameRefused, RootError, SandboxError
from .model import DELETED, CallRecord, Change
from .names import MAX_NAME_BYTES, name_key, validate_name

__all__ = [
    "DELETED",
    "MAX_NAME_BYTES",
    "ApplyError",
    "CallRecord",
    "Change",
    "ConflictError",
    "NameRefused",
    "RootError",
    "Sandbox",
    "SandboxError",
    "name_key",
    "validate_name",
]
