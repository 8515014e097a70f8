# Copyright: contributors to accel.openstack
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every module of the collection shares, under ``HostModule`` and ``OpenStackModule``.

A subclass declares ``argument_spec`` (its own options) and ``module_kwargs``, and implements ``run()``,
which returns the result dict; the base in between adds its own options (``root``, or the cloud's) and
turns failures into ``fail_json``.
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule


class CollectionModule:
    """One AnsibleModule with check mode, built from the options the base in between gives."""

    argument_spec: dict = {}
    module_kwargs: dict = {}

    def __init__(self, argument_spec: dict) -> None:
        self.ansible = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True, **self.module_kwargs)
        self.params = self.ansible.params

    @property
    def check_mode(self) -> bool:
        return self.ansible.check_mode

    def run(self) -> dict:
        raise NotImplementedError
