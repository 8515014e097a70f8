"""Turn on the compiled-code store of ``sitecustomize.py`` (beside this file) for every process the tests start.

``enable()`` puts this directory first on PYTHONPATH and names the store in ACCEL_ZIP_CODE_CACHE
(``~/.cache/accel-openstack/zip-code``, or the directory already named there); the Pythons that run the
modules of the tests' playbooks inherit both. ``ACCEL_ZIP_CODE_CACHE=off`` keeps every module compiling its
sources as Ansible alone does. The services the tests start (Placement, Ironic, Cyborg, nova-api) drop
PYTHONPATH and are not concerned.
"""

from __future__ import annotations

import os

from tests.support.cache import accel_cache

HERE = os.path.dirname(os.path.abspath(__file__))


def enable(environ=None) -> None:
    """Set PYTHONPATH and ACCEL_ZIP_CODE_CACHE in ``environ`` (the process's own by default)."""
    if environ is None:
        environ = os.environ
    if environ.get("ACCEL_ZIP_CODE_CACHE") == "off":
        del environ["ACCEL_ZIP_CODE_CACHE"]
        return
    if not environ.get("ACCEL_ZIP_CODE_CACHE"):
        environ["ACCEL_ZIP_CODE_CACHE"] = accel_cache("zip-code")
    paths = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != HERE]
    environ["PYTHONPATH"] = os.pathsep.join([HERE, *paths])
