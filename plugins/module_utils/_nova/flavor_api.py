# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's flavors read through openstacksdk's compute proxy, as the validate stage needs them.

``read_flavors()`` returns each flavor with openstack.cloud.compute_flavor's keys (``name``, ``vcpus``,
``ram``, ``disk``, ``ephemeral``, ``swap``, ``extra_specs``) plus ``id``, ``is_public``, ``is_disabled``
and ``description``; ``swap`` is 0 where Nova answers an empty string. Names asked for and not found
are an error that lists the names the cloud has.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

# Bounds for what the cloud answers: a flavor list is small; anything larger is not a flavor catalog.
MAX_FLAVORS = 10000
SHOWN_NAMES = 20


def _flavor(resource: Any) -> dict:
    fields = resource.to_dict(computed=False) if hasattr(resource, "to_dict") else dict(resource)
    get = fields.get
    swap = get("swap")
    extra_specs = get("extra_specs") or {}
    return {
        "id": get("id"),
        "name": get("name"),
        "vcpus": get("vcpus"),
        "ram": get("ram"),
        "disk": get("disk"),
        "ephemeral": get("ephemeral") or 0,
        "swap": 0 if swap in (None, "") else swap,
        "extra_specs": {str(k): str(v) for k, v in dict(extra_specs).items()},
        "is_public": get("is_public"),
        "is_disabled": get("is_disabled"),
        "description": get("description"),
    }


def read_flavors(compute: Any, names: Iterable[str] | None = None) -> list[dict]:
    """The cloud's flavors (only ``names`` when given, in that order), with their extra specs."""
    flavors = []
    for resource in compute.flavors(details=True, get_extra_specs=True):
        flavors.append(_flavor(resource))
        if len(flavors) > MAX_FLAVORS:
            raise AccelError(f"the cloud lists more than {MAX_FLAVORS} flavors; name the ones to read in names")
    flavors.sort(key=lambda flavor: str(flavor["name"]))
    if names is None:
        return flavors
    by_name = {flavor["name"]: flavor for flavor in flavors}
    wanted = list(dict.fromkeys(names))
    missing = [name for name in wanted if name not in by_name]
    if missing:
        known = sorted(by_name)
        more = len(known) - SHOWN_NAMES
        shown = ", ".join(known[:SHOWN_NAMES]) + (f" and {more} more" if more > 0 else "")
        raise AccelError(
            f"names: no flavor named {', '.join(missing)} in this cloud; give names the cloud has "
            f"(it has: {shown or 'no flavors'}), or leave names out to read every flavor",
            missing=missing,
        )
    return [by_name[name] for name in wanted]
