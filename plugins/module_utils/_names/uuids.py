# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What Placement accepts as a UUID: hyphens, case, braces and a ``urn:uuid:`` prefix are optional."""

from __future__ import annotations

import uuid


def is_uuid_like(value: object) -> bool:
    """True for a value Placement takes as a UUID (for a provider, an aggregate or ``in_tree``)."""
    if not isinstance(value, str):
        return False
    try:
        canonical = str(uuid.UUID(value)).replace("-", "")
    except (TypeError, ValueError, AttributeError):
        return False
    plain = value.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "").lower()
    return canonical == plain
