"""CyborgClient: devices with their status where Cyborg has it, without it where it does not."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError


class Answer:
    def __init__(self, status: int, body):
        self.status_code = status
        self.content = json.dumps(body).encode()
        self.text = self.content.decode()

    def json(self):
        return json.loads(self.content)


class Cyborg:
    """Answers GET /devices as a Cyborg with microversions up to ``newest`` does; records what was asked."""

    def __init__(self, newest: str):
        self.newest, self.asked = newest, []

    def get(self, path, microversion, raise_exc):
        self.asked.append(microversion)
        if tuple(map(int, microversion.split("."))) > tuple(map(int, self.newest.split("."))):
            return Answer(406, {"error_message": "Version not acceptable"})
        device = {"uuid": "d1"} | ({"status": "enabled"} if microversion == "2.3" else {})
        return Answer(200, {"devices": [device]})


def test_devices_carry_their_status_from_2_3():
    cyborg = Cyborg("2.3")
    assert CyborgClient(cyborg).devices() == [{"uuid": "d1", "status": "enabled"}] and cyborg.asked == ["2.3"]


def test_an_older_cyborg_is_asked_again_at_2_0():
    cyborg = Cyborg("2.0")
    assert CyborgClient(cyborg).devices() == [{"uuid": "d1"}] and cyborg.asked == ["2.3", "2.0"]


def test_other_refusals_are_errors():
    class Broken(Cyborg):
        def get(self, path, microversion, raise_exc):
            return Answer(500, {"error_message": "boom"})

    with pytest.raises(CyborgError, match="500"):
        CyborgClient(Broken("2.3")).devices()


def test_a_refusal_is_quoted_with_the_credentials_masked_and_its_length_said():
    class Refusing(Cyborg):
        def get(self, path, microversion, raise_exc):
            return Answer(401, {"error_message": "token tok-secret-123 is not valid " + "x" * 400})

    client = CyborgClient(Refusing("2.0"), mask=lambda text: text.replace("tok-secret-123", "********"))
    with pytest.raises(CyborgError) as caught:
        client.arqs()
    message = str(caught.value)
    assert message.startswith(
        'Cyborg answered 401 to GET /accelerator_requests (check the credentials): {"error_message": "token ********'
    )
    masked = json.dumps({"error_message": "token ******** is not valid " + "x" * 400})
    assert "tok-secret" not in message and message.endswith(f" (the first 300 of {len(masked)} characters)")
