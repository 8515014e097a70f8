# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An inventory record: its fields, the defaults Placement applies, and the capacity it gives."""

from __future__ import annotations

from collections.abc import Mapping

INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
# Placement's largest integer: the max_unit of an inventory that sets none.
MAX_INT = 0x7FFFFFFF
# What a field left out means; max_unit is left to the writer (Placement: MAX_INT; the provider
# module: the total).
INVENTORY_DEFAULTS = {"reserved": 0, "min_unit": 1, "step_size": 1, "allocation_ratio": 1.0}


def capacity(inventory: Mapping) -> int:
    """``(total - reserved) x allocation_ratio``, rounded down: what allocations may use in all."""
    reserved = inventory.get("reserved", INVENTORY_DEFAULTS["reserved"])
    ratio = inventory.get("allocation_ratio", INVENTORY_DEFAULTS["allocation_ratio"])
    return int((inventory["total"] - reserved) * ratio)
