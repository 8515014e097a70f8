"""Insert what Cyborg's agent reports (device, control path, deployable, attributes, attach handles) with
Cyborg's own objects, into the database of a running test Cyborg (run with Cyborg's venv).

Usage: python cyborg_seed.py CONFIG_FILE JSON
JSON: a list of {"hostname", "vendor", "model", "type", "address", "rp_uuid", "name", "handles": N,
      "attributes": {"rc": "PGPU", "trait0": "CUSTOM_..."}}; prints one {"device_uuid", "deployable_uuid"}
      per item, as a JSON list.
"""

import json
import sys

from oslo_utils import uuidutils


def main() -> None:
    config_file, specs = sys.argv[1], json.loads(sys.argv[2])
    from cyborg.common import service as cyborg_service
    from cyborg.context import get_admin_context

    cyborg_service.prepare_service(["cyborg-seed", "--config-file", config_file])
    context = get_admin_context()
    print(json.dumps([seed(context, spec) for spec in specs]))


def seed(context, spec: dict) -> dict:
    from cyborg import objects

    device = objects.Device(
        context,
        uuid=uuidutils.generate_uuid(),
        type=spec.get("type", "GPU"),
        vendor=spec["vendor"],
        model=spec["model"],
        std_board_info=json.dumps({"product_id": spec.get("product_id", "")}),
        vendor_board_info="{}",
        hostname=spec["hostname"],
        status="enabled",
    )
    device.create(context)
    domain, bus, rest = spec["address"].split(":")
    slot, function = rest.split(".")
    pci = {"domain": domain, "bus": bus, "device": slot, "function": function}
    cpid = objects.ControlpathID(
        context, uuid=uuidutils.generate_uuid(), device_id=device.id, cpid_type="PCI", cpid_info=json.dumps(pci)
    )
    cpid.create(context)
    deployable = objects.Deployable(
        context,
        uuid=uuidutils.generate_uuid(),
        name=spec["name"],
        num_accelerators=spec.get("handles", 1),
        device_id=device.id,
        driver_name=spec.get("driver_name", "nvidia_gpu_driver"),
        rp_uuid=spec["rp_uuid"],
    )
    deployable.create(context)
    for key, value in spec.get("attributes", {}).items():
        objects.Attribute(
            context, uuid=uuidutils.generate_uuid(), deployable_id=deployable.id, key=key, value=value
        ).create(context)
    for _n in range(spec.get("handles", 1)):
        objects.AttachHandle(
            context,
            uuid=uuidutils.generate_uuid(),
            deployable_id=deployable.id,
            cpid_id=cpid.id,
            attach_type="PCI",
            attach_info=json.dumps(pci),
            in_use=False,
        ).create(context)
    return {"device_uuid": device.uuid, "deployable_uuid": deployable.uuid}


if __name__ == "__main__":
    main()
