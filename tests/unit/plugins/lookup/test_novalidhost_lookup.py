"""The novalidhost lookup as ansible runs it: one answer per term from log files; bad options fail naming them."""

import json

from tests.support.ansible_runner import run_expression
from tests.unit.plugins.plugin_utils.test_flavor_fit import FLEET, flavor
from tests.unit.plugins.plugin_utils.test_forensics import FILTERED_INFO, INSTANCE, NO_CANDIDATES, REQ, line


def _run(tmp_path, options: str, data: dict):
    return run_expression(tmp_path, f"{{{{ query('accel.openstack.novalidhost', {options}) | to_json }}}}", data)


def _answers(done):
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(json.loads(done.stdout.split("=>", 1)[1])["msg"])


def test_lookup_explains_from_log_files_and_a_saved_fleet(tmp_path):
    scheduler = tmp_path / "nova-scheduler.log"
    scheduler.write_text("\n".join(FILTERED_INFO) + "\n")
    other = "req-44444444-2222-4333-8444-555555555555"
    conductor = tmp_path / "nova-conductor.log"
    conductor.write_text(line("INFO", "nova.scheduler.manager", NO_CANDIDATES, request=other) + "\n")
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps(FLEET))
    data = {"logs": [str(scheduler), str(conductor)], "flavor": flavor("big", ram=10**6), "fleet_file": str(fleet_file)}
    answers = _answers(
        _run(tmp_path, f"'{INSTANCE}', '{other}', logs=logs, flavor=flavor, fleet_file=fleet_file", data)
    )
    assert [a["request"] for a in answers] == [REQ, other]
    assert answers[0]["log"]["zeroed_by"] == "AggregateInstanceExtraSpecsFilter"
    assert answers[0]["agrees"] is False and "today Placement returns none" in answers[0]["disagreement"]
    assert answers[1]["agrees"] is True and answers[1]["replay"]["reason"]["code"] == "too_big"


def test_lookup_fleet_and_fleet_file_together_fail_naming_both(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("\n".join(FILTERED_INFO))
    data = {"logs": [str(log)], "fleet": FLEET}
    done = _run(tmp_path, f"'{REQ}', logs=logs, fleet=fleet, fleet_file='/nonexistent.json'", data)
    assert done.returncode != 0
    assert "give fleet or fleet_file, not both" in done.stdout + done.stderr


def test_lookup_bad_term_fails_naming_it(tmp_path):
    log = tmp_path / "s.log"
    log.write_text("\n".join(FILTERED_INFO))
    done = _run(tmp_path, "'server-42', logs=logs", {"logs": [str(log)]})
    assert done.returncode != 0
    assert '"server-42" is neither a request id' in done.stdout + done.stderr
