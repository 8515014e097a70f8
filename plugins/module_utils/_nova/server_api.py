# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live servers of every project, read through the compute API (openstacksdk's compute proxy).

One reader for the reports that must tell a live instance from a leftover: the Cyborg ARQ report (an ARQ
bound to no server is orphaned) and the audit (a Placement consumer that is no server holds a leaked
allocation).
"""

from __future__ import annotations

from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# Servers read per report, at most: a cloud larger than this is given as a list of instance UUIDs instead.
MAX_SERVERS = 200000


class ServerListError(AccelError):
    """The servers could not be listed; the message says what to give instead. ``status`` is the compute API's
    HTTP status where it answered with one (403: the credentials may not list all projects' servers)."""

    def __init__(self, msg: str, status: int | None = None):
        super().__init__(msg)
        self.status = status


def server_ids(compute: Any, limit: int = MAX_SERVERS, purpose: str = "tell instances from leftovers") -> list[str]:
    """The UUIDs of the servers of all projects (one paginated list, without details)."""
    ids: list[str] = []
    try:
        for server in compute.servers(details=False, all_projects=True):
            ids.append(str(server.id))
            if len(ids) > limit:
                raise ServerListError(f"more than {limit} servers; give the live instance UUIDs as instances")
    except ServerListError:
        raise
    except Exception as exc:  # openstacksdk and keystoneauth raise many kinds; each means "not read"
        status = getattr(exc, "status_code", None)
        raise ServerListError(
            f"could not list the servers to {purpose}: {exc}; give instances (the UUIDs of the live instances) or "
            "credentials that can list all projects' servers",
            status=status if isinstance(status, int) else None,
        ) from exc
    return ids
