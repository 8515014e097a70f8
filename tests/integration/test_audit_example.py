"""The example cloud of ``make audit-example`` reports exactly the findings docs/audit.md lists."""

from __future__ import annotations

import re
from pathlib import Path

from ansible_collections.accel.openstack.plugins.plugin_utils.audit.cloud import audit_cloud
from tests.support import audit_example

REPO = Path(__file__).resolve().parents[2]


def documented() -> list[tuple[str, str | None, str]]:
    text = (REPO / "docs" / "audit.md").read_text()
    table = text.split("<!-- audit-example findings -->")[1].split("<!-- end audit-example findings -->")[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        severity, host, code = (cell.strip() for cell in line.strip("|").split("|")[:3])
        rows.append((severity, None if host == "-" else host, code))
    return rows


def test_example_reports_what_the_docs_say(tmp_path):
    cloud = audit_example.build(str(tmp_path / "example"))
    result = audit_cloud(cloud["hosts"], cloud["deployed"], cloud["fleet"], cloud["flavors"])
    found = [(f["severity"], f["host"], f["code"]) for f in result["findings"] if f["severity"] != "info"]
    assert sorted(found, key=str) == sorted(documented(), key=str)
    by_code = {f["code"]: f["message"] for f in result["findings"]}
    assert re.search(r"CUSTOM_VGPU_A16_4Q, which no provider", str([f["message"] for f in result["findings"]]))
    assert "t4-a_0000:B1:00.0" in by_code["provider_orphaned"]
