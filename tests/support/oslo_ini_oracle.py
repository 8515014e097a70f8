"""Read INI files with oslo.config itself and report what a service gets: the oracle for the collection's reader.

Runs under the nova venv's interpreter (``.venv-nova/bin/python``), never imported by the test process:
JSON cases on stdin, JSON results on stdout, one process for many cases.

A case: ``{"id": ..., "files": {"nova.conf": TEXT, "nova.conf.d/10-a.conf": TEXT, ...}}``; texts are
written as UTF-8 bytes (``"bytes_b64"`` instead of a text gives raw bytes: ``{"nova.conf": {"bytes_b64": ...}}``).
oslo.config reads ``--config-file nova.conf --config-dir nova.conf.d`` (the directory only when the case
has files there), with Nova's own ``[pci]`` options registered (``nova.conf.pci.register_opts``).

The result: ``{"id", "ok": true, "device_spec": [...], "alias": [...], "values": {group: {key: VALUE}}}``
where ``values`` holds, for every group and key the files set (groups as oslo.config normalises them),
the value oslo.config returns for a single-valued option of that name (the last one); or
``{"id", "ok": false, "file": NAME, "line": N, "reason": TEXT, "text": LINE}`` for a file oslo.config
refuses (``reason`` is oslo's own message, ``text`` the line it shows, empty where it shows none),
or ``{"ok": false, "error": ...}`` for any other exception.

A case with ``"kind": "ids"`` holds one ``device_spec`` and one ``alias`` value (JSON text) instead; the
result gives, for each, ``{"ok": true, "ids": [[vendor_id, product_id], ...]}`` as Nova's own parser keeps
them (``*`` for any), or ``{"ok": false, "error": ...}`` where Nova refuses the value.
"""

from __future__ import annotations

import ast
import base64
import os
import sys
import tempfile

# oslo.config's parser messages, as its ParseError words them: "at FILE:LINE, REASON: 'LINE TEXT'"
REASONS = (
    "No ':' or '=' found in assignment",
    "Key cannot be empty",
    "Unexpected continuation line",
    "Invalid section (must end with ])",
    "Empty section name",
    "Section must be started before assignment",
)


def _parse_error(exc, workdir: str) -> dict:
    """file, line number, reason and line text of oslo.config's refusal, read back from its message."""
    found = {"file": os.path.relpath(exc.config_file, workdir), "line": None, "reason": exc.msg, "text": None}
    prefix = f"at {exc.config_file}:"
    if exc.msg.startswith(prefix):
        number, _comma, rest = exc.msg[len(prefix) :].partition(", ")
        for reason in REASONS:
            if rest.startswith(reason + ": "):
                found.update(line=int(number), reason=reason, text=ast.literal_eval(rest[len(reason) + 2 :]))
    return found


def _write(workdir: str, files: dict) -> tuple[str, str]:
    os.makedirs(os.path.join(workdir, "nova.conf.d"), exist_ok=True)
    for name, content in files.items():
        path = os.path.join(workdir, name)
        data = base64.b64decode(content["bytes_b64"]) if isinstance(content, dict) else content.encode("utf-8")
        with open(path, "wb") as handle:
            handle.write(data)
    return os.path.join(workdir, "nova.conf"), os.path.join(workdir, "nova.conf.d")


def _case(case: dict) -> dict:
    from nova.conf import pci
    from oslo_config import cfg

    with tempfile.TemporaryDirectory() as workdir:
        main, conf_d = _write(workdir, case["files"])
        args = []
        if "nova.conf" in case["files"]:
            args += ["--config-file", main]
        if any(n.startswith("nova.conf.d/") for n in case["files"]):
            args += ["--config-dir", conf_d]
        conf = cfg.ConfigOpts()
        pci.register_opts(conf)
        try:
            conf(args=args, project=None, default_config_files=[], default_config_dirs=[])
        except cfg.ConfigFileParseError as exc:
            return {"id": case["id"], "ok": False, **_parse_error(exc, workdir)}
        except Exception as exc:  # noqa: BLE001 - any other refusal is reported by its type
            return {"id": case["id"], "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        namespace = conf._namespace
        values: dict = {}
        for parsed in namespace._normalized:
            for group, keys in parsed.items():
                for key in keys:
                    value, _loc = namespace._get_value([(group, key)], multi=False, normalized=True)
                    values.setdefault(group, {})[key] = value
        return {
            "id": case["id"],
            "ok": True,
            "device_spec": list(conf.pci.device_spec),
            "alias": list(conf.pci.alias),
            "values": values,
        }


def _ids_case(case: dict) -> dict:
    """Nova's own reading of one ``[pci] device_spec`` value (``nova.pci.whitelist.Whitelist``) and one
    ``[pci] alias`` value (``nova.pci.request.get_alias_from_config``): the IDs it matches devices with."""
    import nova.conf
    from nova.pci import request, whitelist

    result: dict = {"id": case["id"]}
    try:
        specs = whitelist.Whitelist([case["device_spec"]]).specs
        result["device_spec"] = {"ok": True, "ids": [[s.vendor_id, s.product_id] for s in specs]}
    except Exception as exc:  # noqa: BLE001 - any exception is Nova refusing the value
        result["device_spec"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    conf = nova.conf.CONF
    conf.set_override("alias", [case["alias"]], group="pci")
    request.get_alias_from_config.cache_clear()
    try:
        aliases = request.get_alias_from_config()
        result["alias"] = {
            "ok": True,
            "ids": [
                [spec.get("vendor_id"), spec.get("product_id")] for _p, specs in aliases.values() for spec in specs
            ],
        }
    except Exception as exc:  # noqa: BLE001 - any exception is Nova refusing the value
        result["alias"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        conf.clear_override("alias", group="pci")
    return result


def run(cases: list[dict]) -> list[dict]:
    return [_ids_case(case) if case.get("kind") == "ids" else _case(case) for case in cases]


def ask(cases: list[dict], timeout: int = 600) -> list[dict]:
    """Test side: oslo.config's answers for ``cases``, from one process in the nova venv."""
    from tests.support import nova_venv

    return nova_venv.ask(__file__, cases, timeout, "oslo.config oracle")


if __name__ == "__main__":
    # Run as a script in the nova venv: this folder is on sys.path, the collection's tests package is not.
    from nova_venv import serve

    sys.exit(serve(run))
