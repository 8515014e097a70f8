# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Placement modules' base: the OpenStack module base with a counted Placement client."""

from __future__ import annotations

from ansible_collections.accel.openstack.plugins.module_utils._openstack.base import (
    OpenStackModule,
    connect,
    endpoint_hint,
)
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementClient
from ansible_collections.accel.openstack.plugins.module_utils._placement.names import converge_names


def placement_client(params: dict) -> PlacementClient:
    """A Placement client for these module (or inventory) options."""
    return PlacementClient(connect(params).placement, endpoint_hint=endpoint_hint(params))


class PlacementModule(OpenStackModule):
    """An OpenStack module that talks to Placement; the result reports its calls as ``api_calls``."""

    @property
    def placement(self) -> PlacementClient:
        if self._client is None:
            self._client = PlacementClient(
                self.connection.placement, endpoint_hint=endpoint_hint(self.params), mask=self.mask
            )
        return self._client


class NamesModule(PlacementModule):
    """placement_trait and placement_resource_class: custom names of one ``kind``, many per call."""

    kind = ""
    argument_spec = {
        "names": {"type": "list", "elements": "str", "required": True, "aliases": ["name"]},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    }

    def run(self) -> dict:
        return converge_names(self.placement, self.kind, self.params["names"], self.params["state"], self.check_mode)
