"""The deployed-config reader against oslo.config itself, and the device_spec / alias IDs against Nova's parser.

Each case is a ``nova.conf`` and up to four ``nova.conf.d`` files, generated at random (valid lines, tricky
lines and hostile ones: continuations, indented comments and headers, case and spaces in section names,
``=`` and ``:`` separators, quotes, byte-order marks, duplicate keys and sections, blank lines, CR and
CRLF line ends, a missing last newline, non-UTF-8 bytes) or written by hand for one rule each.
``nova_config_info``'s reader (``deployed.read_nova_conf_d``) reads the files from a root; oslo.config 10
reads the same files in the nova venv with Nova's ``[pci]`` options registered
(``tests/support/oslo_ini_oracle.py``, one process per batch). They must agree on every value of every
group, on ``[pci] device_spec`` and ``[pci] alias`` as Nova gets them (every occurrence, across files in
``nova.conf.d`` order, ``passthrough_whitelist`` joined), and on every refusal: the same file, line number,
reason and line. ``ACCEL_DIFFERENTIAL_CASES`` sets the number of random cases.

The second test feeds generated ``vendor_id`` / ``product_id`` spellings to Nova's whitelist and alias
parsers and to ``device_ids``: the same IDs, the same refusals.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._host.oslo_ini import OsloIniError
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot
from ansible_collections.accel.openstack.plugins.module_utils._nova import deployed, device_ids
from tests.support import oslo_ini_oracle

pytestmark = pytest.mark.nova

CASES = int(os.environ.get("ACCEL_DIFFERENTIAL_CASES", "400"))
MULTI = {("pci", "device_spec"), ("pci", "passthrough_whitelist"), ("pci", "alias")}

SECTIONS = ["pci", "PCI", "Pci", "pci", "pci", " pci ", "DEFAULT", "default", "devices", "mdev_nvidia-35",
            "filter_scheduler", "pci ", "[pci", "pci]", "pCi"]  # fmt: skip
KEYS = ["device_spec", "alias", "passthrough_whitelist", "report_in_placement", "enabled_mdev_types", "Device_Spec",
        "device-spec", "x", "a b", "k#", "k;"]  # fmt: skip
SEPARATORS = ["=", " = ", ":", " : ", "= ", " :", "\t=\t", "=:", ":="]
VALUES = ['{"vendor_id": "10de", "product_id": "2330"}', '{"name": "a100", "vendor_id": "10de", "product_id": "20b5"}',
          "true", "False", "", '"quoted"', "'single'", '"', "'", '"mixed\'', "a = b", "x:y", "# not a comment",
          "; neither", "  spaced  ", '"  inner "', "nvidia-35,nvidia-36", "\u00e9t\u00e9",
          "\u00a0nbsp\u00a0"]  # fmt: skip
CONTINUATIONS = ["  more", "\tmore", "  # indented comment", "    [pci]", "\t; c", '  "q"', "  key = v"]
COMMENTS = ["# comment", "; comment", "#", "#[pci]", "# key = value"]
BLANKS = ["", "   ", "\t", "\x0c"]
HOSTILE = ["[pci", "[]", "[pci] # trailing", "= value", ": value", "no separator", "\ufeff[pci]", "\ufeffkey = v",
           "[", "]", "\x0ckey = v", "\u2028", "\x85x = 1"]  # fmt: skip
CONF_D_NAMES = ["00-base.conf", "10-pci.conf", "9-late.conf", "A.conf", "a.conf", "_x.conf", "z.conf.bak", "Z.CONF"]


def _line(rng: random.Random, hostile: bool) -> str:
    roll = rng.random()
    if roll < 0.15:
        return f"[{rng.choice(SECTIONS)}]" + rng.choice(["", "", " ", "\t"])
    if roll < 0.55:
        return rng.choice(KEYS) + rng.choice(SEPARATORS) + rng.choice(VALUES) + rng.choice(["", "", " ", "\t"])
    if roll < 0.7:
        return rng.choice(CONTINUATIONS)
    if roll < 0.8:
        return rng.choice(COMMENTS)
    if roll < 0.93 or not hostile:
        return rng.choice(BLANKS)
    return rng.choice(HOSTILE)


def _file(rng: random.Random) -> str | dict:
    hostile = rng.random() < 0.3
    lines = [] if rng.random() < 0.1 else [f"[{rng.choice(['pci', 'PCI', 'DEFAULT', 'devices'])}]"]
    for _line_number in range(rng.randint(0, 14)):
        line = _line(rng, hostile)
        # a tidy file continues only a value; a hostile one anything
        if (
            not hostile
            and line[:1] in (" ", "\t")
            and lines
            and (lines[-1][:1] in ("", "[", "#", ";") or not lines[-1].strip())
        ):
            line = rng.choice(KEYS) + " = " + rng.choice(VALUES)
        lines.append(line)
    if hostile and rng.random() < 0.1:
        lines.insert(0, "\ufeff" + (lines[0] if lines else ""))
    ending = rng.choice(["\n", "\n", "\n", "\r\n", "\r"])
    text = ending.join(lines) + ("" if rng.random() < 0.15 else ending)
    if hostile and rng.random() < 0.05:
        return {"bytes_b64": __import__("base64").b64encode(text.encode() + b"\xff\n").decode()}
    return text


def random_case(rng: random.Random, index: int) -> dict:
    files = {"nova.conf": _file(rng)} if rng.random() < 0.9 else {}
    for name in rng.sample(CONF_D_NAMES, rng.randint(0, 4)):
        files[f"nova.conf.d/{name}"] = _file(rng)
    return {"id": f"random-{index}", "files": files}


TARGETED = {
    "continuation": '[pci]\nalias = {"name": "a",\n  "vendor_id": "10de",\n\t"product_id": "2330"}\n',
    "indented_comment_joins_the_value": "[pci]\nalias = a\n  # not a comment\nx = 1\n",
    "indented_comment_after_a_blank_line": "[pci]\nalias = a\n\n  # refused\n",
    "indented_section_header": "[DEFAULT]\n  [pci]\ndevice_spec = {}\n",
    "indented_header_continues_a_value": "[pci]\nalias = a\n  [devices]\nx = 1\n",
    "upper_case_section": '[PCI]\ndevice_spec = {"vendor_id": "10de"}\n',
    "mixed_case_sections_interleaved": "[pci]\nalias = 1\n[PCI]\nalias = 2\n[pci]\nalias = 3\n[Pci]\nx = a\n[pci]\nx=b",
    "spaced_section_name": '[ pci ]\ndevice_spec = {"vendor_id": "10de"}\n',
    "colon_separator": '[pci]\ndevice_spec: {"vendor_id": "10de", "product_id": "2330"}\n',
    "colon_before_equals": "[pci]\na:b = c\n",
    "equals_before_colon": "[pci]\na = b:c\n",
    "bom": "\ufeff[pci]\nalias = a\n",
    "bom_before_a_comment": "\ufeff# comment\n[pci]\n",
    "duplicate_keys": "[pci]\nalias = 1\nalias = 2\nreport_in_placement = true\nreport_in_placement = false\n",
    "duplicate_sections": "[pci]\nalias = 1\n[devices]\nx = 1\n[pci]\nalias = 2\n",
    "key_before_section": "alias = a\n[pci]\n",
    "key_before_section_then_blank": "alias = a\n\n[pci]\n",
    "empty_key": "[pci]\n= 1\n",
    "no_separator": "[pci]\nalias\n",
    "empty_section_name": "[]\n",
    "header_with_trailing_text": "[pci] # comment\n",
    "quotes": '[pci]\na = "x"\nb = \'y\'\nc = "z\'\nd = "\ne = ""\n',
    "crlf": "[pci]\r\nalias = a\r\n  b\r\n",
    "lone_cr": "[pci]\ralias = a\r\x20 b\r",
    "no_final_newline": "[pci]\nalias = a",
    "default_case": "[DEFAULT]\nx = 1\n[default]\nx = 2\n[Default]\nx = 3\n",
    "form_feed_line": "[pci]\nalias = a\n\x0c\n  b\n",
    "unicode_line_separator": "[pci]\nalias = a\u2028b\n",
}


def targeted_cases() -> list[dict]:
    cases = [{"id": name, "files": {"nova.conf": text}} for name, text in TARGETED.items()]
    spec = '{"vendor_id": "10de", "product_id": "%s"}'
    cases.append(
        {
            "id": "multi_valued_across_files_in_name_order",
            "files": {
                "nova.conf": "[pci]\npassthrough_whitelist = " + spec % "0001" + "\ndevice_spec = " + spec % "0002"
                + "\nalias = {\"name\": \"n\"}\nreport_in_placement = true\n",
                "nova.conf.d/20-b.conf": "[PCI]\ndevice_spec = " + spec % "0005" + "\npassthrough_whitelist = "
                + spec % "0006\n",
                "nova.conf.d/10-a.conf": "[pci]\ndevice_spec = " + spec % "0003" + "\ndevice_spec = " + spec % "0004"
                + "\nreport_in_placement = false\n",
                "nova.conf.d/9-c.conf": "[pci]\nalias = {\"name\": \"m\"}\n",
            },
        }
    )  # fmt: skip
    cases.append({"id": "refused_file_in_conf_d", "files": {"nova.conf": "[pci]\n", "nova.conf.d/a.conf": "[pci\n"}})
    cases.append({"id": "only_conf_d", "files": {"nova.conf.d/a.conf": "[pci]\nalias = x\n"}})
    cases.append({"id": "not_utf8", "files": {"nova.conf": {"bytes_b64": "W3BjaV0KYWxpYXMgPSD/Cg=="}}})
    return cases


def _ours(tmp_path, case: dict) -> dict:
    root = tmp_path / case["id"]
    (root / "etc/nova/nova.conf.d").mkdir(parents=True)
    for name, content in case["files"].items():
        data = __import__("base64").b64decode(content["bytes_b64"]) if isinstance(content, dict) else content.encode()
        (root / "etc/nova" / name).write_bytes(data)
    try:
        found = deployed.read_nova_conf_d(
            HostRoot(str(root)), "/etc/nova/nova.conf", "/etc/nova/nova.conf.d", "h", ["compute"]
        )
    except OsloIniError as exc:
        return {
            "ok": False,
            "path": exc.path,
            "line": exc.line_number,
            "reason": exc.reason,
            "text": exc.line,
            "msg": str(exc),
        }
    except deployed.DeployedConfigError as exc:
        return {"ok": False, "path": exc.extra.get("path"), "msg": str(exc)}
    return {"ok": True, "config": found["h"]["services"]["compute"]}  # fmt: skip


def _compare(ours: dict, oslo: dict, case: dict) -> None:
    shown = json.dumps(case["files"], ensure_ascii=True)
    if "error" in oslo:  # not a parse refusal: here only undecodable bytes
        assert "UnicodeDecodeError" in oslo["error"], (oslo, shown)
        assert not ours["ok"] and "not UTF-8" in ours["msg"], (ours, shown)
        return
    if not oslo["ok"]:
        assert not ours["ok"], (ours, oslo, shown)
        assert ours["path"] == "/etc/nova/" + oslo["file"], (ours, oslo, shown)
        assert (ours["line"], ours["reason"], ours["text"] or "") == (oslo["line"], oslo["reason"], oslo["text"]), (
            ours,
            oslo,
            shown,
        )
        assert f"/etc/nova/{oslo['file']} line {oslo['line']}" in ours["msg"]
        return
    assert ours["ok"], (ours, oslo, shown)
    config = ours["config"]
    assert config.get("pci", {}).get("device_spec", []) == oslo["device_spec"], (config, oslo, shown)
    assert config.get("pci", {}).get("alias", []) == oslo["alias"], (config, oslo, shown)
    single = {(g, k): v[-1] for g, keys in config.items() for k, v in keys.items() if (g, k) not in MULTI}
    theirs = {(g, k): v for g, keys in oslo["values"].items() for k, v in keys.items() if (g, k) not in MULTI}
    assert single == theirs, (single, theirs, shown)


def _run(tmp_path, cases: list[dict]) -> dict:
    answers = {a["id"]: a for a in oslo_ini_oracle.ask(cases)}
    outcomes = {"accepted": 0, "refused": 0}
    for case in cases:
        ours = _ours(tmp_path, case)
        _compare(ours, answers[case["id"]], case)
        outcomes["accepted" if ours["ok"] else "refused"] += 1
    return outcomes


def test_targeted_files_are_read_as_oslo_config_reads_them(tmp_path):
    outcomes = _run(tmp_path, targeted_cases())
    assert outcomes["accepted"] >= 15 and outcomes["refused"] >= 10, outcomes


def test_random_files_are_read_as_oslo_config_reads_them(tmp_path):
    rng = random.Random(20261202)
    outcomes = _run(tmp_path, [random_case(rng, i) for i in range(CASES)])
    # the generator must exercise both sides, or the comparison proves little
    assert outcomes["accepted"] >= CASES // 5 and outcomes["refused"] >= CASES // 10, outcomes


ID_SPELLINGS = ["10de", "10DE", "0x10de", "0X10DE", " 10de ", "10de\n", "\t10de", "+10de", "1_0de", "010de", "0010de",
                "ffff", "0xffff", "10000", "fffff", "-1", "-0", "0", "", " ", "*", " * ", "**", "10dg", "0x", "x10de",
                "\u0661\u0660de", "10de ", "1eb8", "1EB8", "0x1eb8", 4318, None, True, ["10de"], 1.5]  # fmt: skip


ALIAS_SPELLINGS = ["10de", "10DE", "1eb8", "1EB8", "AbCd", "10de\n", "ffff"]


def _id_cases(rng: random.Random, count: int) -> list[dict]:
    cases = []
    for index in range(count):
        spec: dict = {}
        alias: dict = {"name": "gpu"}
        for key in ("vendor_id", "product_id"):
            if rng.random() < 0.9:
                spec[key] = rng.choice(ID_SPELLINGS)
            if rng.random() < 0.95:
                alias[key] = rng.choice(ID_SPELLINGS if rng.random() < 0.5 else ALIAS_SPELLINGS)
        cases.append({"id": f"ids-{index}", "kind": "ids", "device_spec": json.dumps(spec), "alias": json.dumps(alias)})
    return cases


def test_device_spec_and_alias_ids_are_read_as_nova_reads_them():
    rng = random.Random(4318)
    cases = _id_cases(rng, 600)
    answers = {a["id"]: a for a in oslo_ini_oracle.ask(cases)}
    refused = {"device_spec": 0, "alias": 0}
    for case in cases:
        answer = answers[case["id"]]
        spec = json.loads(case["device_spec"])
        try:
            ours = list(device_ids.spec_ids(spec))
        except device_ids.DeviceIdError:
            ours = None
        theirs = answer["device_spec"]
        assert (ours is not None) == theirs["ok"], (case, ours, theirs)
        if ours is not None:
            assert [ours] == theirs["ids"], (case, ours, theirs)
        else:
            refused["device_spec"] += 1
        alias = json.loads(case["alias"])
        try:
            ids = [device_ids.alias_id(alias, "vendor_id"), device_ids.alias_id(alias, "product_id")]
            ok = None not in ids  # Nova wants both (without pci_in_placement)
        except device_ids.DeviceIdError:
            ids, ok = None, False
        theirs = answer["alias"]
        assert ok == theirs["ok"], (case, ids, theirs)
        if ok:
            # Nova keeps the ID as written and compares it with the device's in lower case
            assert [ids] == [[i.lower() for i in theirs["ids"][0]]], (case, ids, theirs)
        else:
            refused["alias"] += 1
    assert 50 < refused["device_spec"] < 550 and 50 < refused["alias"] < 550, refused
