"""What identifies the installed aqmlab's behaviour, for stores of finished runs (sweeps,
reproductions) that must not mix runs of different code.

The compiled library's bytes differ from build to build of the same sources, so the native part is
the digest of the Rust sources it was built from (``crates/py/build.rs``); the Python part is every
source file of the package. Equal fingerprints on two machines mean the same code.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from . import _native

__all__ = ["fingerprint"]


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """16 hex digits of a SHA-256 over the Rust source digest and the package's Python sources."""
    h = hashlib.sha256(_native.source_digest().encode())
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]
