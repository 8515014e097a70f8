#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: cyborg_arq_info
short_description: Report Cyborg's accelerator requests and classify the leaked ones; never deletes
description:
  - Lists every accelerator request (ARQ) Cyborg holds with its state, device profile, instance, host,
    project and age, and classifies each one.
  - V(orphaned) - bound to an instance that does not exist (the live instances are O(instances), or the
    servers of all projects read from the cloud's compute API when O(instances) is not given).
  - V(stale) - in C(Initial), C(BindFailed) or C(Unbound) for longer than O(stale_after), counted from its last
    update.
  - V(no_project) - no C(project_id), so no project's quota or cleanup reaches it.
  - V(ok) - none of these. The classification is the first that applies, in that order; C(problems)
    lists all.
  - Each orphaned or stale ARQ carries the exact C(curl) command that deletes it through Cyborg's API, run by a
    person after checking that the instance is really gone. It reads the tokens from C($USER_TOKEN) (a cloud
    administrator's) and, for an ARQ bound to an instance, C($SERVICE_TOKEN) (a user with Cyborg's service role),
    because Cyborg 17 unbinds or deletes a bound ARQ only for a request with a service token, an administrator's
    included, and openstackclient cannot send one. Only values validated as UUIDs, and Cyborg's endpoint
    validated as an http(s) URL and shell-quoted, become part of a command; an ARQ whose uuid or instance_uuid
    is not a UUID gets no command, and C(invalid) says why.
  - Credentials without the admin role see only their own project's ARQs, and a compute API that refuses to
    list all projects' servers leaves the orphans unknown; RV(not_read) and a C(cyborg_arq_scope_limited)
    finding say what could not be read and which role is needed. A token given as is
    (O(auth_type=admin_token)) carries no roles the module can read; a warning says so.
  - The module changes nothing, in Cyborg or anywhere else. Error messages mask every credential the module
    holds (its options, what openstacksdk resolved from C(clouds.yaml), the token).
  - RV(findings) holds the same as audit findings (area C(cyborg)).
version_added: 1.0.0
author:
  - accel.openstack contributors (@accel-openstack)
options:
  instances:
    description:
      - UUIDs of the instances that exist. When not given, the servers of all projects are read through the
        cloud's compute API (the credentials must be allowed to list all projects' servers; when the compute
        API refuses, no ARQ is called orphaned and RV(not_read) says so; a warning says when no server is
        found at all).
    type: list
    elements: str
  stale_after:
    description: How long an ARQ may stay C(Initial), C(BindFailed) or C(Unbound); seconds, or a number with C(s), C(m), C(h), C(d) or C(w).
    type: str
    default: 1h
  with_arqs:
    description:
      - Read and classify the ARQs. V(false) skips them (and the servers), for a caller that wants only
        O(with_inventory).
    type: bool
    default: true
  with_inventory:
    description:
      - Also return Cyborg's device profiles, devices and deployables (RV(device_profiles), RV(devices),
        RV(deployables)), which the validate stage needs to walk a flavor's device profile chain.
    type: bool
    default: false
extends_documentation_fragment:
  - accel.openstack.openstack
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: The module changes nothing, so there is no difference to show.
notes:
  - Talks to Cyborg's v2 API (C(/v2/accelerator_requests)) with microversion 2.0.
  - Cyborg 17 deletes or unbinds a bound ARQ only for a request that carries a service token; the command and the
    finding's fix say how to get one.
"""

EXAMPLES = r"""
- name: Report the ARQs, checked against the servers of all projects
  accel.openstack.cyborg_arq_info:
    cloud: mycloud-admin
    stale_after: 24h
  register: arqs

- name: Show the orphans and the command that deletes each
  ansible.builtin.debug:
    msg: "{{ arqs.arqs | selectattr('classification', 'equalto', 'orphaned') | map(attribute='command') }}"
"""

RETURN = r"""
arqs:
  description: Every ARQ, orphans first, then stale, no project, ok.
  returned: success
  type: list
  elements: dict
  sample:
    - uuid: 6c7c1f7e-8d7e-4b4b-9a3c-2f2d6c1e5a10
      state: Bound
      device_profile_name: gpu-h100
      device_profile_group_id: 0
      instance_uuid: 0a3f5b1c-2d4e-4f60-8a9b-0c1d2e3f4a5b
      hostname: gpu-host-1
      device_rp_uuid: 9d3c7b1a-0e2f-4a5b-8c6d-7e8f9a0b1c2d
      project_id: 0d4c0d6a8e4b4f0c9a1d7b1e2f3a4b5c
      created_at: "2026-01-02T03:04:05+00:00"
      age_seconds: 86400
      classification: orphaned
      problems: [orphaned]
      reasons: ["bound to instance 0a3f5b1c-2d4e-4f60-8a9b-0c1d2e3f4a5b, which does not exist"]
      command: >-
        curl -sS --fail-with-body -X DELETE -H "X-Auth-Token: $USER_TOKEN" -H "X-Service-Token: $SERVICE_TOKEN"
        -H 'OpenStack-API-Version: accelerator 2.0' https://cyborg.example.org:6666/v2/accelerator_requests?arqs=6c7c1f7e-8d7e-4b4b-9a3c-2f2d6c1e5a10
not_read:
  description:
    - What the credentials could not read, each C({what, reason, needs}); empty when they saw everything.
  returned: success
  type: list
  elements: dict
  sample:
    - what: other projects' ARQs
      reason: the credentials (project 7a1f0c2e9b3d4e5fa6b7c8d9e0f1a2b3, roles member, reader) lack the admin role, and Cyborg lists only
        their own project's ARQs to them
      needs: the admin role (Cyborg lists every project's ARQs only to an administrator)
summary:
  description: How many ARQs fall in each class.
  returned: success
  type: dict
  sample: {orphaned: 1, stale: 0, no_project: 0, ok: 4}
findings:
  description: The ARQs that are not ok as audit findings C({host, area, code, severity, message, fix}).
  returned: success
  type: list
  elements: dict
device_profiles:
  description: Cyborg's device profiles (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
devices:
  description: Cyborg's devices (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
deployables:
  description: Cyborg's deployables, each with its C(rp_uuid) and C(attributes_list) (with O(with_inventory)).
  returned: when O(with_inventory) is true
  type: list
  elements: dict
"""

from ansible_collections.accel.openstack.plugins.module_utils._cyborg.arqs import arq_findings, arq_report
from ansible_collections.accel.openstack.plugins.module_utils._cyborg.client import CyborgClient, CyborgError
from ansible_collections.accel.openstack.plugins.module_utils._nova.server_api import ServerListError, server_ids
from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import OpenStackModule

# Cyborg 17 lists every project's ARQs only to a token with this role (its API hook sets is_admin from it).
ADMIN_ROLE = "admin"


class CyborgArqInfoModule(OpenStackModule):
    argument_spec = {
        "instances": {"type": "list", "elements": "str"},
        "stale_after": {"type": "str", "default": "1h"},
        "with_arqs": {"type": "bool", "default": True},
        "with_inventory": {"type": "bool", "default": False},
    }

    def _identity(self) -> "tuple[list[str], str | None] | None":
        """The roles and project of the token, where Keystone issued it; None where the module cannot tell
        (a token given as is, e.g. auth_type admin_token)."""
        plugin = getattr(self.connection.session, "auth", None)
        if not hasattr(plugin, "get_access"):
            return None
        try:
            access = plugin.get_access(self.connection.session)
        except Exception as exc:  # keystoneauth raises many types; the Cyborg call that follows reports it
            raise CyborgError(f"could not authenticate: {self.mask(str(exc))}; check the cloud/auth options") from None
        roles = getattr(access, "role_names", None)
        if not isinstance(roles, list):
            return None
        return [str(r) for r in roles], getattr(access, "project_id", None)

    def _servers(self) -> "tuple[list[str] | None, list[dict]]":
        """The UUIDs of every project's servers, or None and what could not be read."""
        try:
            return server_ids(self.connection.compute, purpose="find orphaned ARQs"), []
        except ServerListError as exc:
            if exc.status == 403:
                gap = {
                    "what": "every project's servers",
                    "reason": "the compute API refused to list all projects' servers (403), so no ARQ is called "
                    "orphaned",
                    "needs": "the admin role (Nova's os_compute_api:servers:index:get_all_tenants), or give the "
                    "live instance UUIDs as instances",
                }
                return None, [gap]
            raise CyborgError(self.mask(exc.msg)) from None

    def _arq_scope(self) -> list[dict]:
        identity = self._identity()
        if identity is None:
            return []
        roles, project = identity
        if ADMIN_ROLE in roles:
            return []
        shown = ", ".join(sorted(roles)) or "none"
        return [
            {
                "what": "other projects' ARQs",
                "reason": f"the credentials (project {project or 'unknown'}, roles {shown}) lack the admin role, "
                "and Cyborg lists only their own project's ARQs to them, so other projects' orphaned and stale ARQs "
                "are not reported",
                "needs": "the admin role (Cyborg lists every project's ARQs only to an administrator)",
            }
        ]

    def _endpoint(self, client: CyborgClient) -> "str | None":
        try:
            return client.adapter.get_endpoint()
        except Exception:  # noqa: BLE001 - without an endpoint the commands read $CYBORG_ENDPOINT
            return None

    def run(self) -> dict:
        try:
            return self._run()
        except CyborgError as exc:
            raise CyborgError(self.mask(exc.msg), **exc.extra) from None

    def _run(self) -> dict:
        p = self.params
        client = CyborgClient(self.connection.accelerator, mask=self.mask)
        if p["with_arqs"]:
            not_read = self._arq_scope()
            instances = p["instances"]
            if instances is None:
                instances, gaps = self._servers()
                not_read += gaps
            report = arq_report(
                client.arqs(), instances, p["stale_after"], endpoint=self._endpoint(client), not_read=not_read
            )
        else:
            report = arq_report([], [], p["stale_after"])
        for warning in report.pop("warnings"):
            self.ansible.warn(warning)
        if p["with_arqs"] and self._identity() is None:
            self.ansible.warn(
                "the credentials are a token given as is: the module cannot tell whether they see every project's "
                "ARQs (Cyborg lists them all only to the admin role)"
            )
        result = {"changed": False, **report, "findings": arq_findings(report)}
        if p["with_inventory"]:
            result.update(device_profiles=client.profiles(), devices=client.devices(), deployables=client.deployables())
        return result


def main() -> None:
    CyborgArqInfoModule()()


if __name__ == "__main__":
    main()
