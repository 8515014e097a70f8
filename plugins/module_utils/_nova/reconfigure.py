# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts still wait for ``kolla-ansible reconfigure``, kept on the deploy host between runs.

A run that changes a host's Nova config records the host with the time of the change in a JSON file
(``{"hosts": {"gpu-01": 1764600000.0}}``). Every later run prints the reconfigure command for every
recorded host until Kolla-Ansible has applied it: a host counts as applied once the newest of the merged
``nova.conf`` files Kolla-Ansible deployed on it (``/etc/kolla/nova-*/nova.conf``, which reconfigure
rewrites when its content changes) is newer than the recorded change. A host whose deployed files cannot
be read stays pending.

The file is read as untrusted input: at most 1 MiB of JSON of that shape, host names as the inventory
writes them; anything else is refused, naming the file and the fix.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange
from ansible_collections.accel.openstack.plugins.module_utils._host.root import HostRoot

MAX_BYTES = 1024 * 1024
MAX_HOSTS = 100000
HOST_NAME = re.compile(r"[A-Za-z0-9_.:@-]{1,255}")


class PendingFileError(AccelError):
    pass


def read_pending(host: HostRoot, path: str) -> dict[str, float]:
    """The recorded hosts and change times; an absent file is no host."""
    text = host.read_existing(path)
    if not text:
        return {}

    def refuse(why: str) -> PendingFileError:
        return PendingFileError(
            f"{path}: {why}; it records the hosts that wait for kolla-ansible reconfigure (JSON "
            '{"hosts": {"<host>": <seconds since the epoch>}}): fix it, or delete it and run '
            "kolla-ansible reconfigure -t nova on every Nova host"
        )

    if len(text.encode()) > MAX_BYTES:
        raise refuse(f"larger than {MAX_BYTES} bytes")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise refuse(f"not JSON ({exc})") from exc
    hosts = document.get("hosts") if isinstance(document, dict) else None
    if not isinstance(hosts, dict) or len(hosts) > MAX_HOSTS:
        raise refuse('no "hosts" mapping of at most 100000 entries')
    pending = {}
    for name, when in hosts.items():
        if not HOST_NAME.fullmatch(name):
            raise refuse(f"host name {name!r} is not an inventory host name")
        if isinstance(when, bool) or not isinstance(when, (int, float)) or not math.isfinite(when) or when < 0:
            raise refuse(f"the time of {name} is {when!r}, not seconds since the epoch")
        pending[name] = float(when)
    return pending


def plan_pending(
    host: HostRoot,
    path: str,
    changed_hosts: list[str],
    deployed: Mapping[str, object],
    now: float,
) -> tuple[FileChange, list[str]]:
    """The pending file's change and the hosts that still need reconfigure after this run."""
    pending = read_pending(host, path)
    for name, when in list(pending.items()):
        applied_at = deployed.get(name)
        if isinstance(applied_at, (int, float)) and not isinstance(applied_at, bool) and applied_at > when:
            del pending[name]
    for name in changed_hosts:
        pending[name] = now
    after = json.dumps({"hosts": dict(sorted(pending.items()))}, indent=2) + "\n" if pending else None
    return FileChange.of(host, path, after, mode=0o644), sorted(pending)
