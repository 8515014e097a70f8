"""Nova 34's own live-migration decisions, run in the nova venv.

Input: ``{"versions": [[libvirt, qemu], ...], "aliases": [alias dict, ...], "tags": [device_spec tag, ...]}``
(versions as ``[major, minor, micro]``). Output: the driver's minimum constants; per version pair whether
``LibvirtDriver._host_can_support_mdev_live_migration`` accepts the host and whether the host passes the
vfio-pci variant check ``_check_pci_whitelist`` makes for a ``live_migratable`` device_spec; per alias
whether ``InstancePCIRequest.is_live_migratable`` holds for the request Nova builds from it (or Nova's
refusal); per ``live_migratable`` tag value whether nova-compute reports HW_PCI_LIVE_MIGRATABLE.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.support.nova_venv import serve  # noqa: E402


class _Connection:
    def __init__(self, libvirt, qemu):
        self.libvirt, self.qemu = libvirt, qemu

    def getLibVersion(self):  # noqa: N802 (libvirt's name)
        return self.libvirt[0] * 1000000 + self.libvirt[1] * 1000 + self.libvirt[2]

    def getVersion(self):  # noqa: N802
        return self.qemu[0] * 1000000 + self.qemu[1] * 1000 + self.qemu[2]

    def getType(self):  # noqa: N802
        return "QEMU"


def run(cases):
    from nova import conf, exception, objects
    from nova.compute import pci_placement_translator
    from nova.pci import request
    from nova.virt.libvirt import driver, host

    objects.register_all()
    out = {
        "constants": {
            name: list(getattr(driver, name))
            for name in (
                "MIN_MDEV_LIVEMIG_LIBVIRT_VERSION",
                "MIN_MDEV_LIVEMIG_QEMU_VERSION",
                "MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION",
                "MIN_VFIO_PCI_VARIANT_QEMU_VERSION",
            )
        },
        "versions": [],
        "aliases": [],
        "tags": [],
    }
    for libvirt, qemu in cases["versions"]:
        the_host = host.Host.__new__(host.Host)
        the_host.get_connection = lambda libvirt=libvirt, qemu=qemu: _Connection(libvirt, qemu)
        fake_driver = type("Driver", (), {"_host": the_host})()
        out["versions"].append(
            {
                "mdev": driver.LibvirtDriver._host_can_support_mdev_live_migration(fake_driver),
                "pci": the_host.has_min_version(
                    lv_ver=driver.MIN_VFIO_PCI_VARIANT_LIBVIRT_VERSION,
                    hv_ver=driver.MIN_VFIO_PCI_VARIANT_QEMU_VERSION,
                    hv_type=host.HV_DRIVER_QEMU,
                ),
            }
        )
    for alias in cases["aliases"]:
        request.get_alias_from_config.cache_clear()
        try:
            conf.CONF.set_override("alias", [json.dumps(alias)], group="pci")
            _numa_policy, specs = request.get_alias_from_config()[alias["name"]]
            pci_request = objects.InstancePCIRequest(count=1, spec=specs, alias_name=alias["name"])
            out["aliases"].append({"live_migratable": pci_request.is_live_migratable()})
        except exception.PciInvalidAlias as exc:
            out["aliases"].append({"refused": str(exc)})
    for tag in cases["tags"]:
        traits = pci_placement_translator._get_traits_for_dev({"live_migratable": tag})
        out["tags"].append("HW_PCI_LIVE_MIGRATABLE" in traits)
    return out


if __name__ == "__main__":
    sys.exit(serve(run))
