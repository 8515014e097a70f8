# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one place that knows every credential the collection holds, and masks it in every text.

A service (or a proxy in front of it) that refuses a request may quote what it received: the token of the
``X-Auth-Token`` header, the password of a Keystone request body, a value a request carried. A
:class:`Redactor` gathers every credential the collection was given or obtained:

- the secret leaves of the ``cloud`` and ``auth`` options (keys holding password, token, secret ...);
- the ``auth`` section openstacksdk resolves for the same options (a clouds.yaml entry, ``OS_*`` variables);
- the secret ``OS_*`` environment variables themselves (``OS_PASSWORD``, ``OS_TOKEN`` ...);
- the token the connection's auth plugin holds (an admin token, or the one Keystone issued);
- texts a module names as secret (the values of a sensitive Ironic inspection rule's actions);

and :meth:`Redactor.mask` replaces each of them, and its JSON-escaped, Python-escaped and URL-encoded forms,
by ``********`` wherever it appears. :meth:`Redactor.mask_value` does the same through a result's dicts and
lists. Placement's noauth2 convention token ``admin`` is no secret and is never masked.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus

MASK = "********"
# Keys whose values are secrets wherever they appear (auth.password, a cloud dict's auth.token,
# application_credential_secret, OS_PASSWORD ...).
SECRET_KEY = re.compile(r"password|passwd|passcode|token|secret", re.IGNORECASE)
# Placement's noauth2 middleware takes the literal token "admin" as the admin: a convention every
# standalone Placement shares, not a secret, so it is never masked.
NOAUTH2_ADMIN_TOKEN = "admin"
CREDENTIAL_OPTIONS = ("cloud", "auth")


def secret_leaves(value: Any, path: str, secret: bool = False):
    """(path, text) for every secret leaf under ``value`` (a leaf under a secret key, at any depth)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from secret_leaves(item, f"{path}.{key}", secret or bool(SECRET_KEY.search(str(key))))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from secret_leaves(item, f"{path}[{index}]", secret)
    elif secret and value not in (None, "") and not isinstance(value, bool):
        if path.endswith(".token") and value == NOAUTH2_ADMIN_TOKEN:
            return
        yield path, str(value)


def option_secrets(params: dict) -> set[str]:
    """The secret values in the ``cloud`` and ``auth`` options."""
    return {text for option in CREDENTIAL_OPTIONS for _path, text in secret_leaves(params.get(option), option)}


def environment_secrets(environ: dict | None = None) -> set[str]:
    """The values of the ``OS_*`` variables whose name says they hold a secret (OS_PASSWORD, OS_TOKEN ...)."""
    environ = os.environ if environ is None else environ
    return {
        value
        for name, value in environ.items()
        if name.upper().startswith("OS_") and SECRET_KEY.search(name) and value and value != NOAUTH2_ADMIN_TOKEN
    }


def resolved_secrets(kwargs: dict) -> set[str]:
    """The secrets of the auth section openstacksdk resolves for these ``connect()`` arguments (clouds.yaml,
    secure.yaml, ``OS_*`` variables), read without reaching any service; empty when it cannot resolve."""
    try:
        import openstack.config

        region = openstack.config.get_cloud_region(load_yaml_config=True, load_envvars=True, **kwargs)
        auth = region.config.get("auth")
    except Exception:  # openstacksdk raises many types for a config it cannot resolve; the connect reports it
        return set()
    return {text for _path, text in secret_leaves(auth, "auth")} if isinstance(auth, dict) else set()


def connection_secrets(connection: Any) -> set[str]:
    """The secrets an openstacksdk connection (or a keystoneauth adapter) holds: its resolved auth section
    and the token its auth plugin got or was given. Read from attributes only: nothing is requested."""
    found: set[str] = set()
    if connection is None:
        return found
    config = getattr(getattr(connection, "config", None), "config", None)
    auth_args = config.get("auth") if isinstance(config, dict) else None
    if isinstance(auth_args, dict):
        found |= {text for _path, text in secret_leaves({"auth": auth_args}, "")}
    session = getattr(connection, "session", None)
    plugins = [getattr(connection, "auth", None), getattr(session, "auth", None)]
    plugins += [getattr(plugin, "_plugin", None) for plugin in list(plugins)]
    for plugin in plugins:
        ref = getattr(plugin, "auth_ref", None)
        for value in (getattr(plugin, "token", None), getattr(ref, "auth_token", None)):
            if isinstance(value, str) and value and value != NOAUTH2_ADMIN_TOKEN:
                found.add(value)
    return found


def encodings(secret: str) -> set[str]:
    """``secret`` and the forms a service's body or an exception text may quote it in."""
    forms = {
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
    }
    return {form for form in forms if form}


class Redactor:
    """Every credential of one module run (or one inventory source); masks them in texts and results."""

    def __init__(self, params: dict | None = None, connection: Any = None, extra: Iterable[str] = ()):
        self.params = params or {}
        self.connection = connection
        self.extra: set[str] = {text for text in extra if isinstance(text, str) and text}

    def add(self, *texts: str) -> None:
        """Mask these texts too (values a module knows to be secret)."""
        self.extra.update(text for text in texts if isinstance(text, str) and text)

    def secrets(self) -> set[str]:
        """Every credential known now (the connection's token once it authenticated)."""
        found = option_secrets(self.params) | environment_secrets() | connection_secrets(self.connection) | self.extra
        kwargs = _connect_kwargs(self.params)
        if kwargs is not None:
            found |= resolved_secrets(kwargs)
        found.discard(NOAUTH2_ADMIN_TOKEN)
        return {text for text in found if text}

    def forms(self) -> list[str]:
        """Every secret in every form it is masked in, longest first (a secret inside another goes last)."""
        return sorted({form for secret in self.secrets() for form in encodings(secret)}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        return mask_text(text, self.forms())

    def mask_value(self, value: Any) -> Any:
        """``value`` with every string in it (dict keys too, at any depth) masked."""
        return mask_value(value, self.forms())


def mask_text(text: str, forms: list[str]) -> str:
    for form in forms:
        text = text.replace(form, MASK)
    return text


def mask_value(value: Any, forms: list[str]) -> Any:
    if isinstance(value, str):
        return mask_text(value, forms)
    if isinstance(value, dict):
        return {mask_value(key, forms): mask_value(item, forms) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(mask_value(item, forms) for item in value)
    return value


def _connect_kwargs(params: dict) -> dict | None:
    """The openstacksdk arguments that select the cloud (None where the options name none and the
    environment has no OS_* variables: nothing to resolve)."""
    cloud = params.get("cloud")
    kwargs: dict[str, Any] = {}
    if isinstance(cloud, dict):
        kwargs.update(cloud)
    elif isinstance(cloud, str):
        kwargs["cloud"] = cloud
    for key in ("auth", "auth_type", "region_name"):
        if params.get(key) is not None:
            kwargs[key] = params[key]
    if not kwargs and not any(name.startswith("OS_") for name in os.environ):
        return None
    return kwargs
