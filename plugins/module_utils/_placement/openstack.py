# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack side of every module: options, connection, and error translation.

``openstack_argument_spec()`` is the one builder of the usual OpenStack options (documented by the
``accel.openstack.openstack`` doc fragment). ``OpenStackModule`` owns the AnsibleModule, the
openstacksdk connection and the translation of errors into ``fail_json`` messages that say what to
do; subclasses declare ``argument_spec`` and implement ``run()``.
"""

from __future__ import annotations

import traceback
from typing import Any

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._placement.client import PlacementClient

try:
    import keystoneauth1.exceptions
    import openstack

    HAS_OPENSTACKSDK = True
    OPENSTACKSDK_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - exercised only where openstacksdk is missing
    HAS_OPENSTACKSDK = False
    OPENSTACKSDK_IMPORT_ERROR = traceback.format_exc()

CONNECTION_OPTIONS = ("cloud", "auth", "auth_type", "region_name", "interface", "api_timeout")


def openstack_argument_spec(**extra: dict) -> dict:
    """The usual OpenStack options plus the module's own (``extra`` wins on a name clash)."""
    spec: dict[str, dict] = {
        "cloud": {"type": "raw"},
        "auth": {"type": "dict", "no_log": True},
        "auth_type": {"type": "str"},
        "region_name": {"type": "str"},
        "validate_certs": {"type": "bool", "aliases": ["verify"]},
        "ca_cert": {"type": "path", "aliases": ["cacert"]},
        "client_cert": {"type": "path", "aliases": ["cert"]},
        "client_key": {"type": "path", "aliases": ["key"], "no_log": False},
        "interface": {
            "type": "str",
            "default": "public",
            "choices": ["admin", "internal", "public"],
            "aliases": ["endpoint_type"],
        },
        "api_timeout": {"type": "int"},
    }
    spec.update(extra)
    return spec


def connection_kwargs(params: dict) -> dict:
    """openstacksdk ``connect()`` arguments from module parameters; unset options are left out."""
    kwargs: dict[str, Any] = {k: params.get(k) for k in CONNECTION_OPTIONS if params.get(k) is not None}
    if isinstance(kwargs.get("cloud"), dict):
        kwargs.update(kwargs.pop("cloud"))
    for option, name in (("validate_certs", "verify"), ("ca_cert", "cacert")):
        if params.get(option) is not None:
            kwargs[name] = params[option]
    if params.get("client_cert"):
        kwargs["cert"] = params["client_cert"]
        if params.get("client_key"):
            kwargs["key"] = params["client_key"]
    kwargs["app_name"] = "accel.openstack"
    return kwargs


def connect(params: dict):
    """An openstacksdk connection for these module parameters."""
    return openstack.connect(**connection_kwargs(params))


def placement_client(params: dict) -> PlacementClient:
    conn = connect(params)
    hint = ""
    auth = params.get("auth") or {}
    if isinstance(auth, dict):
        hint = auth.get("endpoint") or auth.get("auth_url") or ""
    return PlacementClient(conn.placement, endpoint_hint=hint)


class OpenStackModule:
    """Base for the collection's OpenStack modules.

    Subclasses set ``argument_spec`` (their own options only) and ``module_kwargs`` and implement
    ``run()``, which returns the result dict (``changed``, ``diff`` ...). Every AccelError becomes
    ``fail_json`` with its message and result keys (a declaration's ValueError with its message).
    """

    argument_spec: dict = {}
    module_kwargs: dict = {}

    def __init__(self) -> None:
        self.ansible = AnsibleModule(
            argument_spec=openstack_argument_spec(**self.argument_spec),
            supports_check_mode=True,
            **self.module_kwargs,
        )
        self.params = self.ansible.params
        self._client: PlacementClient | None = None
        self._connection = None

    @property
    def check_mode(self) -> bool:
        return self.ansible.check_mode

    @property
    def placement(self) -> PlacementClient:
        if self._client is None:
            self._client = placement_client(self.params)
        return self._client

    @property
    def connection(self):
        """The openstacksdk connection, for services other than Placement."""
        if self._connection is None:
            self._connection = connect(self.params)
        return self._connection

    def run(self) -> dict:
        raise NotImplementedError

    def __call__(self) -> None:
        if not HAS_OPENSTACKSDK:
            self.ansible.fail_json(msg=missing_required_lib("openstacksdk"), exception=OPENSTACKSDK_IMPORT_ERROR)
        try:
            result = self.run()
        except (AccelError, ValueError) as exc:
            failure = exc.result() if isinstance(exc, AccelError) else {"msg": str(exc)}
            if self._client is not None:
                failure.setdefault("api_calls", dict(self._client.calls))
            self.ansible.fail_json(**failure)
        except (openstack.exceptions.SDKException, keystoneauth1.exceptions.ClientException) as exc:
            self.ansible.fail_json(
                msg=f"could not reach the OpenStack service: {exc}; check the cloud/auth options "
                "(a standalone Placement needs auth_type: admin_token and auth: {endpoint: URL, token: ...})"
            )
        if self._client is not None:
            result.setdefault("api_calls", dict(self._client.calls))
        self.ansible.exit_json(**result)
