# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  cloud:
    description:
      - Name of a cloud in C(clouds.yaml), or a dict of connection options.
    type: raw
  auth:
    description:
      - Authentication options as openstacksdk takes them (C(auth_url), C(username), C(password),
        C(project_name) ... or C(endpoint) and C(token) for O(auth_type=admin_token)).
    type: dict
  auth_type:
    description:
      - The keystoneauth plugin, for example V(password) or V(admin_token).
      - A standalone Placement with C(noauth2) is reached with O(auth_type=admin_token) and an O(auth) dict
        holding C(endpoint) (the service URL) and C(token) (any string, such as C(admin)).
    type: str
  region_name:
    description: Region of the cloud.
    type: str
  validate_certs:
    description: Whether to verify TLS certificates. Unset means the cloud's own setting.
    type: bool
    aliases: [verify]
  ca_cert:
    description: CA bundle to verify the service certificates with.
    type: path
    aliases: [cacert]
  client_cert:
    description: Client certificate for TLS client authentication.
    type: path
    aliases: [cert]
  client_key:
    description: Private key for O(client_cert).
    type: path
    aliases: [key]
  interface:
    description: Which endpoint of the service catalog to use.
    type: str
    default: public
    choices: [admin, internal, public]
    aliases: [endpoint_type]
  api_timeout:
    description:
      - Seconds to wait for an API answer.
      - Unset, the cloud's C(api_timeout) in clouds.yaml applies, else 60 seconds (a service that accepts the
        connection and never answers fails the task then).
    type: int
requirements:
  - python >= 3.11
  - openstacksdk >= 1.0.0
notes:
  - Every request is sent with an explicit Placement microversion (1.39).
"""
