"""Read Nova's ``[libvirt]`` options with oslo.config and Nova 34's own option definitions: the oracle for what
the nova_config stage writes there.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test process:
JSON cases on stdin, JSON results on stdout, one process for many cases.

A case ``{"id", "files": {"nova.conf": TEXT, "nova.conf.d/50-a.conf": TEXT, ...}}`` is read as nova-compute
reads ``--config-file nova.conf --config-dir nova.conf.d`` with ``nova.conf.libvirt``'s options registered.
The result: ``{"id", "ok": true, "libvirt": {name: VALUE}}`` for every ``[libvirt]`` option the files set,
VALUE as Nova gets it (``CONF.libvirt.<name>``: a bool, an int, a string, a list), or ``{"error": TEXT}`` for
a value oslo.config refuses; ``{"id", "ok": false, "error": TEXT}`` when the files cannot be read at all.

A case ``{"id", "kind": "type", "name": OPTION, "value": TEXT}`` runs the option's own type on ``TEXT`` as
a file line holds it: ``{"id", "ok": true, "value": VALUE}`` or ``{"id", "ok": false, "error": TEXT}``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

warnings.simplefilter("ignore")


def _options():
    from nova.conf import libvirt

    (opts,) = libvirt.list_opts().values()
    return {opt.name: opt for opt in opts}


def _files_case(case: dict) -> dict:
    from nova.conf import libvirt
    from oslo_config import cfg

    with tempfile.TemporaryDirectory() as workdir:
        os.makedirs(os.path.join(workdir, "nova.conf.d"))
        for name, text in case["files"].items():
            with open(os.path.join(workdir, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        args = []
        if "nova.conf" in case["files"]:
            args += ["--config-file", os.path.join(workdir, "nova.conf")]
        if any(n.startswith("nova.conf.d/") for n in case["files"]):
            args += ["--config-dir", os.path.join(workdir, "nova.conf.d")]
        conf = cfg.ConfigOpts()
        libvirt.register_opts(conf)
        try:
            conf(args=args, project=None, default_config_files=[], default_config_dirs=[])
        except Exception as exc:  # noqa: BLE001 - any refusal of the files is reported by its type
            return {"id": case["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        given = set()
        for parsed in conf._namespace._normalized:
            given.update(parsed.get("libvirt", {}))
        values = {}
        for name in sorted(given):
            if name not in _options():
                continue
            try:
                values[name] = getattr(conf.libvirt, name)
            except Exception as exc:  # noqa: BLE001 - a value oslo.config refuses raises on access
                values[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return {"id": case["id"], "ok": True, "libvirt": values}


def _type_case(case: dict) -> dict:
    opt = _options()[case["name"]]
    try:
        return {"id": case["id"], "ok": True, "value": opt.type(case["value"])}
    except Exception as exc:  # noqa: BLE001 - the type refusing the value
        return {"id": case["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}"}


def run(cases: list[dict]) -> list[dict]:
    return [_type_case(case) if case.get("kind") == "type" else _files_case(case) for case in cases]


def ask(cases: list[dict], timeout: int = 600) -> list[dict]:
    """Test side: Nova's answers for ``cases``, from one process in the nova venv."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "Nova [libvirt] oracle")


if __name__ == "__main__":
    # Run as a script in the nova venv: this folder is on sys.path, the collection's tests package is not.
    from nova_venv import serve

    sys.exit(serve(run))
