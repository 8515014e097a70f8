# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every credential a Cyborg module holds, so that no message quotes one: a refusal from Cyborg (or a proxy
in front of it) may echo the token or the password back."""

from __future__ import annotations

from typing import Any

from ansible_collections.accel.openstack.plugins.module_utils._placement.openstack import (
    NOAUTH2_ADMIN_TOKEN,
    secret_texts,
)

MASK = "********"


def held_credentials(params: dict, connection: Any = None) -> set[str]:
    """The secrets of the module's ``cloud`` and ``auth`` options, those openstacksdk resolved for the
    connection (a clouds.yaml entry's password) and the token it authenticated with."""
    found = set(secret_texts(params))
    if connection is None:
        return found
    config = getattr(getattr(connection, "config", None), "config", None)
    auth_args = config.get("auth") if isinstance(config, dict) else None
    found |= secret_texts({"auth": auth_args if isinstance(auth_args, dict) else None})
    plugin = getattr(getattr(connection, "session", None), "auth", None)
    ref = getattr(plugin, "auth_ref", None)
    for value in (getattr(plugin, "token", None), getattr(ref, "auth_token", None)):
        if isinstance(value, str) and value and value != NOAUTH2_ADMIN_TOKEN:
            found.add(value)
    return found


def mask_credentials(text: str, params: dict, connection: Any = None) -> str:
    """``text`` with every credential :func:`held_credentials` finds replaced by ``********``."""
    for secret in sorted(held_credentials(params, connection), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
