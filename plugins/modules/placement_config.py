#!/usr/bin/python
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

DOCUMENTATION = r"""
module: placement_config
short_description: Write Placement's candidate-generation settings where placement-api reads them
version_added: 1.0.0
description:
  - Writes the Placement options that decide how it generates allocation candidates, C([placement]
    max_allocation_candidates), C([placement] allocation_candidates_generation_strategy) and C([workarounds]
    optimize_for_wide_provider_trees), and nothing else, into Kolla-Ansible's override file
    C(<config_dir>/placement.conf) (O(layout=kolla), merged by Kolla-Ansible with its own template at the
    next C(kolla-ansible reconfigure -t placement)) or into a plain O(placement_conf).
  - The keys it writes are recorded in a header comment of the file; other keys and comments stay as they
    are, and a key it wrote before and is no longer given is removed.
  - "Placement at its defaults takes minutes, or never answers, for a flavor asking 6 or 8 single-GPU
    providers of one host (Placement bug 2126751); Placement's own advice for such wide trees is
    O(settings) C({max_allocation_candidates: 1000, allocation_candidates_generation_strategy: breadth-first,
    optimize_for_wide_provider_trees: true}). P(accel.openstack.flavor_fit#lookup) predicts, per flavor, what
    Placement at given settings does."
author:
  - accel.openstack contributors (@accel-openstack)
options:
  settings:
    description:
      - The options to write, with Placement's names. V(max_allocation_candidates) is -1 (no bound) or a
        whole number; V(allocation_candidates_generation_strategy) is V(depth-first) or V(breadth-first);
        V(optimize_for_wide_provider_trees) is a boolean.
      - An empty dict removes what the module wrote before.
    type: dict
    required: true
  layout:
    description: Where placement-api reads its settings from.
    type: str
    choices: [kolla, placement_conf]
    default: kolla
  config_dir:
    description: Kolla-Ansible's C(node_custom_config) directory (O(layout=kolla)).
    type: path
    default: /etc/kolla/config
  placement_conf:
    description: The placement.conf to edit (O(layout=placement_conf)).
    type: path
    default: /etc/placement/placement.conf
  kolla_inventory:
    description: The Kolla-Ansible inventory path to put in RV(command).
    type: str
attributes:
  check_mode:
    support: full
    description: Reports whether the file would change and the command that would apply it; writes nothing.
  diff_mode:
    support: full
    description: Shows the file as it is and as it would be.
seealso:
  - module: accel.openstack.nova_config_info
notes:
  - With O(layout=kolla), O(root) is the root of the deploy host, which holds Kolla-Ansible's override file.
extends_documentation_fragment:
  - accel.openstack.root
"""

EXAMPLES = r"""
- name: Let Placement answer full-node GPU flavors in time (Kolla-Ansible)
  accel.openstack.placement_config:
    settings:
      max_allocation_candidates: 1000
      allocation_candidates_generation_strategy: breadth-first
      optimize_for_wide_provider_trees: true
    config_dir: /etc/kolla/config
  delegate_to: localhost
  run_once: true
  register: placement_settings

- name: Say what applies them
  ansible.builtin.debug:
    msg: "{{ placement_settings.command }}"
  when: placement_settings.command
"""

RETURN = r"""
path:
  description: The file written (a host path under O(root)).
  returned: success
  type: str
  sample: /etc/kolla/config/placement.conf
settings:
  description: The options written, checked.
  returned: success
  type: dict
command:
  description:
    - What makes placement-api read the change (C(kolla-ansible reconfigure -t placement), or a restart of
      placement-api for O(layout=placement_conf)); null when nothing changed.
  returned: success
  type: str
"""

import shlex

from ansible_collections.accel.openstack.plugins.module_utils._host.files import FileChange, apply_all, diffs
from ansible_collections.accel.openstack.plugins.module_utils._host.ini_file import update_text
from ansible_collections.accel.openstack.plugins.module_utils._host.module import HostModule
from ansible_collections.accel.openstack.plugins.module_utils._placement import settings as placement_settings


class PlacementConfigModule(HostModule):
    argument_spec = {
        "settings": {"type": "dict", "required": True},
        "layout": {"type": "str", "choices": ["kolla", "placement_conf"], "default": "kolla"},
        "config_dir": {"type": "path", "default": "/etc/kolla/config"},
        "placement_conf": {"type": "path", "default": "/etc/placement/placement.conf"},
        "kolla_inventory": {"type": "str"},
    }

    def run(self) -> dict:
        params = self.params
        wanted = placement_settings.checked(params["settings"], "settings")
        if params["layout"] == "kolla":
            path = params["config_dir"].rstrip("/") + "/placement.conf"
        else:
            path = params["placement_conf"]
        before = self.host.read_existing(path)
        after = update_text(before or "", placement_settings.ini(wanted), path)
        change = FileChange(path, before, after if after or before else None)
        changed = apply_all(self.host, [change], self.check_mode)
        command = None
        if changed:
            if params["layout"] == "kolla":
                inventory = params.get("kolla_inventory")
                command = "kolla-ansible reconfigure " + (f"-i {shlex.quote(inventory)} " if inventory else "")
                command += "-t placement"
            else:
                command = "systemctl restart placement-api (or the web server that serves it)"
        self.diff = diffs([change])
        return {"changed": bool(changed), "path": path, "settings": wanted, "command": command}


def main() -> None:
    PlacementConfigModule()()


if __name__ == "__main__":
    main()
