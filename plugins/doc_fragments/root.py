# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    """The filesystem root of the host modules: one wording for every module that reads or writes a host."""

    DOCUMENTATION = r"""
options:
  root:
    description:
      - Filesystem root of the host, V(/) for the running system, or the path of a chroot, a mounted image or a
        simulated root (M(accel.openstack.simulated_host)).
      - Every path the module reads or writes is taken inside it, and a link that leads out of it is refused;
        the root is a boundary no read, write or delete crosses.
    type: path
    default: /
"""
