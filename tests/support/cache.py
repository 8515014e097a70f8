"""Where the test suite keeps what it builds once for every checkout: ``$XDG_CACHE_HOME`` (else ``~/.cache``)
``/accel-openstack`` (tests/venv.sh says the same for the venvs in shell)."""

from __future__ import annotations

import os


def accel_cache(*parts: str) -> str:
    """``<the cache>/accel-openstack/<parts>``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "accel-openstack", *parts)
