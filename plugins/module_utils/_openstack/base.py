# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack side of every API module: options, connection, redaction and error translation.

``openstack_argument_spec()`` is the one builder of the usual OpenStack options (documented by the
``accel.openstack.openstack`` doc fragment). ``OpenStackModule`` owns the AnsibleModule, the
openstacksdk connection and the translation of errors into ``fail_json`` messages that say what to
do; subclasses declare ``argument_spec`` and implement ``run()``.
"""

from __future__ import annotations

import traceback
from typing import Any

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.parameters import _list_no_log_values

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._module import CollectionModule
from ansible_collections.accel.openstack.plugins.module_utils._openstack.redaction import (
    CREDENTIAL_OPTIONS,
    Redactor,
    option_secrets,
)
from ansible_collections.accel.openstack.plugins.module_utils._openstack.redaction import secret_leaves as _secrets

try:
    import keystoneauth1.exceptions
    import openstack

    HAS_OPENSTACKSDK = True
    OPENSTACKSDK_IMPORT_ERROR = None
except ImportError:  # pragma: no cover - exercised only where openstacksdk is missing
    HAS_OPENSTACKSDK = False
    OPENSTACKSDK_IMPORT_ERROR = traceback.format_exc()

CONNECTION_OPTIONS = ("cloud", "auth", "auth_type", "region_name", "interface", "api_timeout")
# Ansible hides every occurrence of a no_log value in all output; a shorter secret would blank out
# ordinary words (a token "admin" hides "admin" in every message), so it is refused.
MIN_SECRET_LENGTH = 8


def openstack_argument_spec(**extra: dict) -> dict:
    """The usual OpenStack options plus the module's own (``extra`` wins on a name clash)."""
    spec: dict[str, dict] = {
        "cloud": {"type": "raw", "no_log": True},
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


def secret_texts(params: dict) -> set[str]:
    """The secret values in ``cloud`` and ``auth`` (for callers without Ansible's no_log, such as inventories)."""
    return option_secrets(params)


def redact(message: str, params: dict, connection: Any = None) -> str:
    """``message`` with every credential of these options (and of what they resolve to) replaced by ``********``."""
    return Redactor(params, connection).mask(message)


def credential_problems(params: dict) -> list[str]:
    """Why the credential options cannot be used as given: wrong types, secrets too short to mask."""
    problems = []
    cloud = params.get("cloud")
    if cloud is not None and not isinstance(cloud, (str, dict)):
        problems.append(
            f"cloud is {type(cloud).__name__}; give the name of a cloud in clouds.yaml (a string) or a dict of "
            "connection options"
        )
    timeout = params.get("api_timeout")
    if timeout is not None and timeout < 1:
        problems.append(f"api_timeout is {timeout}; give the seconds to wait for an answer, 1 or more")
    problems += auth_problems(params.get("auth"), params.get("auth_type"))
    for option in CREDENTIAL_OPTIONS:
        for path, text in _secrets(params.get(option), option):
            if len(text) < MIN_SECRET_LENGTH:
                problems.append(
                    f"{path} is {len(text)} characters; a secret shorter than {MIN_SECRET_LENGTH} would make "
                    "Ansible hide every occurrence of that text in all output, so it is refused: use a longer "
                    "one (a Placement running noauth2 takes the token 'admin', which is not a secret)"
                )
    return problems


# keystoneauth's admin_token plugin takes exactly these (``url`` is its old name for ``endpoint``).
ADMIN_TOKEN_KEYS = ("endpoint", "token")


def auth_problems(auth: Any, auth_type: Any) -> list[str]:
    """Why ``auth`` cannot reach keystoneauth as given (it would answer with a Python TypeError): a value
    that is not text, and for ``auth_type: admin_token`` a key missing or one it does not take. Messages
    name keys, never values."""
    if auth is None:
        return []
    if not isinstance(auth, dict):
        return [f"auth is {type(auth).__name__}; give a dict of the auth plugin's options"]
    problems = [
        f"auth.{key} is {type(value).__name__}; give it as text"
        for key, value in auth.items()
        if not isinstance(value, str | int | float | bool) and value is not None
    ]
    if auth_type == "admin_token":
        keys = {"endpoint" if key == "url" else str(key) for key in auth}
        missing = [key for key in ADMIN_TOKEN_KEYS if key not in keys]
        extra = sorted(keys - set(ADMIN_TOKEN_KEYS))
        if missing:
            problems.append(
                f"auth_type admin_token needs auth.{' and auth.'.join(missing)}; give auth: "
                "{endpoint: <Placement URL>, token: <token>}"
            )
        if extra:
            problems.append(
                f"auth_type admin_token takes only endpoint and token; remove auth.{', auth.'.join(extra)} "
                "(or choose the auth_type those options belong to)"
            )
    return problems


def refuse_credentials(module: AnsibleModule, problems: list[str]) -> None:
    """Fail for ``problems`` with a message Ansible does not blank out.

    A refused short secret is still in ``no_log_values``, so Ansible would replace each occurrence of its
    text in the message (a token ``e`` blanks every ``e``). The message never holds the secret (it names
    the option and the length), so the short values are taken out of ``no_log_values`` and out of the
    parameters Ansible echoes as ``invocation``; they are replaced there by Ansible's own placeholder."""
    short = {
        text
        for option in CREDENTIAL_OPTIONS
        for _path, text in _secrets(module.params.get(option), option)
        if len(text) < MIN_SECRET_LENGTH
    }
    for option in CREDENTIAL_OPTIONS:
        module.params[option] = _hidden(module.params.get(option), short)
    module.no_log_values.difference_update(short)
    module.fail_json(msg="; ".join(problems), errors=problems)


def _hidden(value: Any, texts: set[str]) -> Any:
    if isinstance(value, dict):
        return {key: _hidden(item, texts) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_hidden(item, texts) for item in value]
    if value is not None and not isinstance(value, bool) and str(value) in texts:
        return "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"
    return value


def narrow_no_log(module: AnsibleModule) -> None:
    """Mask the secrets of ``cloud`` and ``auth``, not their every value.

    Ansible marks every leaf of a no_log dict (and a cloud's name) as a secret and then hides each of them
    wherever it appears, so a username ``admin`` or ``interface: public`` would blank out unrelated text.
    The options stay no_log (never logged to syslog); only the values under secret keys stay masked.
    """
    params = module.params
    others = {k: v for k, v in params.items() if k not in CREDENTIAL_OPTIONS}
    spec = {k: v for k, v in module.argument_spec.items() if k not in CREDENTIAL_OPTIONS}
    keep = set(_list_no_log_values(spec, others))
    for option in CREDENTIAL_OPTIONS:
        keep.update(text for _path, text in _secrets(params.get(option), option))
    module.no_log_values.clear()
    module.no_log_values.update(keep)


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


def clouds_yaml_problem(cloud: Any) -> str | None:
    """Why openstacksdk did not find ``cloud``: a clouds.yaml it skipped because it is not YAML (it only logs
    that). Names the file, the line and column and the parser's reason, never the line's text (it may hold a
    password)."""
    if not isinstance(cloud, str):
        return None
    import os

    import yaml

    files = [os.environ["OS_CLIENT_CONFIG_FILE"]] if os.environ.get("OS_CLIENT_CONFIG_FILE") else []
    files += [f for f in openstack.config.loader.CONFIG_FILES if f not in files]
    for path in files:
        if path.endswith(".json") or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                yaml.safe_load(handle)
        except (OSError, UnicodeDecodeError):
            continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            reason = getattr(exc, "problem", None) or "not YAML"
            return (
                f"cloud {cloud!r} was not found because {path} could not be read as YAML ({reason}{where}), so "
                "openstacksdk skipped the file; correct it there (YAML indents with spaces, never tabs)"
            )
        return None
    return None


# Seconds an API call may wait for an answer when neither api_timeout nor the cloud's clouds.yaml entry says:
# without it a service that accepts the connection and never answers would hold the task forever.
DEFAULT_API_TIMEOUT = 60


def connect(params: dict):
    """An openstacksdk connection for these module parameters (as openstack.connect builds it), with
    :data:`DEFAULT_API_TIMEOUT` where neither the options nor clouds.yaml set ``api_timeout``."""
    kwargs = connection_kwargs(params)
    try:
        region = openstack.config.get_cloud_region(**kwargs)
    except openstack.exceptions.ConfigException:
        problem = clouds_yaml_problem(kwargs.get("cloud"))
        if problem:
            raise AccelError(problem) from None
        raise
    if region.config.get("api_timeout") is None:
        region.config["api_timeout"] = DEFAULT_API_TIMEOUT
    return openstack.connection.Connection(config=region, vendor_hook=kwargs.get("vendor_hook"))


def endpoint_hint(params: dict) -> str:
    """The endpoint the options name, for messages about a service that did not answer."""
    auth = params.get("auth") or {}
    if isinstance(auth, dict):
        return auth.get("endpoint") or auth.get("auth_url") or ""
    return ""


class OpenStackModule(CollectionModule):
    """Base for the collection's OpenStack modules.

    Subclasses set ``argument_spec`` (their own options only) and ``module_kwargs`` and implement
    ``run()``, which returns the result dict (``changed``, ``diff`` ...). Every AccelError becomes
    ``fail_json`` with its message and result keys (a declaration's ValueError with its message).
    Every result, failure and warning passes :attr:`redactor`: no credential the module holds is printed.
    """

    def __init__(self) -> None:
        super().__init__(openstack_argument_spec(**self.argument_spec))
        # The client whose call counts a result reports as ``api_calls`` (Placement's; see PlacementModule).
        self._client: Any = None
        self._connection = None
        self.redactor = Redactor(self.params)
        narrow_no_log(self.ansible)
        problems = credential_problems(self.params)
        if problems:
            refuse_credentials(self.ansible, problems)

    @property
    def connection(self):
        """The openstacksdk connection, for services other than Placement."""
        if self._connection is None:
            self._connection = connect(self.params)
            self.redactor.connection = self._connection
        return self._connection

    def doing(self) -> str:
        """What the module was asking for, for the message when the service could not be reached
        (``" while reading the flavors gpu.h100"``); empty by default."""
        return ""

    def mask(self, text: str) -> str:
        """``text`` with every credential the module holds masked."""
        return self.redactor.mask(text)

    def _finish(self, result: dict, failed: bool = False) -> None:
        """Exit with ``result`` masked; every form of every credential also joins Ansible's no_log values,
        so the warnings Ansible adds to the result are masked as well."""
        forms = self.redactor.forms()
        self.ansible.no_log_values.update(forms)
        result = self.redactor.mask_value(result)
        if failed:
            self.ansible.fail_json(**result)
        self.ansible.exit_json(**result)

    def __call__(self) -> None:
        if not HAS_OPENSTACKSDK:
            self.ansible.fail_json(msg=missing_required_lib("openstacksdk"), exception=OPENSTACKSDK_IMPORT_ERROR)
        try:
            result = self.run()
        except (AccelError, ValueError) as exc:
            failure = exc.result() if isinstance(exc, AccelError) else {"msg": str(exc)}
            if self._client is not None:
                failure.setdefault("api_calls", dict(self._client.calls))
            self._finish(failure, failed=True)
        except (openstack.exceptions.SDKException, keystoneauth1.exceptions.ClientException) as exc:
            self._finish(
                {
                    "msg": f"could not reach the OpenStack service{self.doing()}: {exc}; check the cloud/auth options "
                    "(a standalone Placement needs auth_type: admin_token and auth: {endpoint: URL, token: ...})"
                },
                failed=True,
            )
        except Exception as exc:  # an unforeseen error's traceback may quote a credential: it is masked too
            self._finish(
                {"msg": f"unexpected error: {type(exc).__name__}: {exc}", "exception": traceback.format_exc()},
                failed=True,
            )
        if self._client is not None:
            result.setdefault("api_calls", dict(self._client.calls))
        self._finish(result)
