# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flavor extra specs nova-api knows (microversion 2.86+): generated from Nova 34.0.0, do not edit.

``VALIDATORS``: Nova's registry (``nova.api.validation.extra_specs``) in its load order, one tuple per
validator: (name, name regex, value type, value pattern, value enum, min, max), None where Nova has
none. ``NAMESPACES``: the namespace regexes of the names with a ``:`` (a key in one of them that no
validator matches is refused). To follow a new Nova, pin it in requirements/nova.txt and run
``make names``.
"""

from __future__ import annotations

NOVA_VERSION = "34.0.0"

# One validator a line: name, name regex, value pattern, enum (values separated by |), min, max and
# type, separated by tabs; an empty field is None.
_TABLE = r"""
accel:device_profile	accel:device_profile					str
aggregate_instance_extra_specs:{key}	aggregate_instance_extra_specs:(?P<key>.+)					str
capabilities:id	capabilities:id					str
capabilities:uuid	capabilities:uuid					str
capabilities:service_id	capabilities:service_id					str
capabilities:host	capabilities:host					str
capabilities:vcpus	capabilities:vcpus					str
capabilities:memory_mb	capabilities:memory_mb					str
capabilities:local_gb	capabilities:local_gb					str
capabilities:vcpus_used	capabilities:vcpus_used					str
capabilities:memory_mb_used	capabilities:memory_mb_used					str
capabilities:local_gb_used	capabilities:local_gb_used					str
capabilities:hypervisor_type	capabilities:hypervisor_type					str
capabilities:hypervisor_version	capabilities:hypervisor_version					str
capabilities:hypervisor_hostname	capabilities:hypervisor_hostname					str
capabilities:free_ram_mb	capabilities:free_ram_mb					str
capabilities:free_disk_gb	capabilities:free_disk_gb					str
capabilities:current_workload	capabilities:current_workload					str
capabilities:running_vms	capabilities:running_vms					str
capabilities:disk_available_least	capabilities:disk_available_least					str
capabilities:host_ip	capabilities:host_ip					str
capabilities:mapped	capabilities:mapped					str
capabilities:cpu_allocation_ratio	capabilities:cpu_allocation_ratio					str
capabilities:ram_allocation_ratio	capabilities:ram_allocation_ratio					str
capabilities:disk_allocation_ratio	capabilities:disk_allocation_ratio					str
capabilities:total_usable_ram_mb	capabilities:total_usable_ram_mb					str
capabilities:total_usable_disk_gb	capabilities:total_usable_disk_gb					str
capabilities:disk_mb_used	capabilities:disk_mb_used					str
capabilities:free_disk_mb	capabilities:free_disk_mb					str
capabilities:vcpus_total	capabilities:vcpus_total					str
capabilities:num_instances	capabilities:num_instances					str
capabilities:num_io_ops	capabilities:num_io_ops					str
capabilities:failed_builds	capabilities:failed_builds					str
capabilities:aggregates	capabilities:aggregates					str
capabilities:cell_uuid	capabilities:cell_uuid					str
capabilities:updated	capabilities:updated					str
capabilities:cpu_info{filter}	capabilities:cpu_info(?P<filter>(:\w+)*)					str
capabilities:metrics{filter}	capabilities:metrics(?P<filter>(:\w+)*)					str
capabilities:stats{filter}	capabilities:stats(?P<filter>(:\w+)*)					str
capabilities:numa_topology{filter}	capabilities:numa_topology(?P<filter>(:\w+)*)					str
capabilities:supported_hv_specs{filter}	capabilities:supported_hv_specs(?P<filter>(:\w+)*)					str
capabilities:pci_device_pools{filter}	capabilities:pci_device_pools(?P<filter>(:\w+)*)					str
capabilities:nodename{filter}	capabilities:nodename(?P<filter>(:\w+)*)					str
capabilities:pci_stats{filter}	capabilities:pci_stats(?P<filter>(:\w+)*)					str
capabilities:supported_instances{filter}	capabilities:supported_instances(?P<filter>(:\w+)*)					str
capabilities:limits{filter}	capabilities:limits(?P<filter>(:\w+)*)					str
capabilities:instances{filter}	capabilities:instances(?P<filter>(:\w+)*)					str
hw:cpu_realtime	hw:cpu_realtime					bool
hw:cpu_realtime_mask	hw:cpu_realtime_mask	(\^)?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*				str
hw:hide_hypervisor_id	hw:hide_hypervisor_id					bool
hw:cpu_policy	hw:cpu_policy		dedicated|shared|mixed			str
hw:cpu_thread_policy	hw:cpu_thread_policy		prefer|isolate|require			str
hw:emulator_threads_policy	hw:emulator_threads_policy		isolate|share			str
hw:cpu_dedicated_mask	hw:cpu_dedicated_mask	\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*				str
hw:mem_page_size	hw:mem_page_size	(large|small|any|\d+([kKMGT]i?)?(b|bit|B)?)				str
hw:locked_memory	hw:locked_memory					bool
hw:numa_nodes	hw:numa_nodes			1		int
hw:numa_cpus.{num}	hw:numa_cpus.(?P<num>\d+)	\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*				str
hw:numa_mem.{num}	hw:numa_mem.(?P<num>\d+)			1		int
hw:pci_numa_affinity_policy	hw:pci_numa_affinity_policy		required|preferred|legacy|socket			str
hw:cpu_sockets	hw:cpu_sockets			1		int
hw:cpu_cores	hw:cpu_cores			1		int
hw:cpu_threads	hw:cpu_threads			1		int
hw:cpu_max_sockets	hw:cpu_max_sockets			1		int
hw:cpu_max_cores	hw:cpu_max_cores			1		int
hw:cpu_max_threads	hw:cpu_max_threads			1		int
hw:boot_menu	hw:boot_menu					bool
hw:vif_multiqueue_enabled	hw:vif_multiqueue_enabled					bool
hw:mem_encryption	hw:mem_encryption					bool
hw:mem_encryption_model	hw:mem_encryption_model		amd-sev|amd-sev-es|amd-sev-snp|intel-tdx			str
hw:pmem	hw:pmem	([a-zA-Z0-9_]+(,)?)+				str
hw:pmu	hw:pmu					bool
hw:serial_port_count	hw:serial_port_count			0		int
hw:tpm_model	hw:tpm_model		tpm-tis|tpm-crb			str
hw:tpm_version	hw:tpm_version		1.2|2.0			str
hw:tpm_secret_security	hw:tpm_secret_security		user|host|deployment			str
hw:watchdog_action	hw:watchdog_action		none|pause|poweroff|reset|disabled			str
hw:viommu_model	hw:viommu_model		intel|smmuv3|virtio|auto			str
hw:virtio_packed_ring	hw:virtio_packed_ring					bool
hw:sound_model	hw:sound_model		sb16|es1370|pcspk|ac97|ich6|ich9|usb|virtio			str
hw:usb_model	hw:usb_model		none|nec-xhci|qemu-xhci			str
hw:redirected_usb_ports	hw:redirected_usb_ports			0	15	int
hw:ephemeral_encryption	hw:ephemeral_encryption					bool
hw:ephemeral_encryption_format	hw:ephemeral_encryption_format		plain|luks|luksv2			str
hw_rng:allowed	hw_rng:allowed					bool
hw_rng:rate_bytes	hw_rng:rate_bytes			0		int
hw_rng:rate_period	hw_rng:rate_period			0		int
hw_video:ram_max_mb	hw_video:ram_max_mb			0		int
hide_hypervisor_id	hide_hypervisor_id					bool
group_policy	group_policy		isolate|none			str
os:secure_boot	os:secure_boot		disabled|required			str
pci_passthrough:alias	pci_passthrough:alias	[^:]+:\d+(?:\s*,\s*[^:]+:\d+)*				str
quota:cpu_limit	quota:cpu_limit			0		int
quota:cpu_reservation	quota:cpu_reservation					int
quota:cpu_shares_level	quota:cpu_shares_level		custom|high|normal|low			str
quota:cpu_shares_share	quota:cpu_shares_share			0		int
quota:memory_limit	quota:memory_limit			0		int
quota:memory_reservation	quota:memory_reservation					int
quota:memory_shares_level	quota:memory_shares_level		custom|high|normal|low			str
quota:memory_shares_share	quota:memory_shares_share			0		int
quota:disk_io_limit	quota:disk_io_limit			0		int
quota:disk_io_reservation	quota:disk_io_reservation					int
quota:disk_io_shares_level	quota:disk_io_shares_level		custom|high|normal|low			str
quota:disk_io_shares_share	quota:disk_io_shares_share			0		int
quota:vif_limit	quota:vif_limit			0		int
quota:vif_reservation	quota:vif_reservation					int
quota:vif_shares_level	quota:vif_shares_level		custom|high|normal|low			str
quota:vif_shares_share	quota:vif_shares_share			0		int
quota:cpu_shares	quota:cpu_shares			0		int
quota:cpu_period	quota:cpu_period			0		int
quota:cpu_quota	quota:cpu_quota					int
quota:disk_read_bytes_sec	quota:disk_read_bytes_sec			0		int
quota:disk_read_iops_sec	quota:disk_read_iops_sec			0		int
quota:disk_write_bytes_sec	quota:disk_write_bytes_sec			0		int
quota:disk_write_iops_sec	quota:disk_write_iops_sec			0		int
quota:disk_total_bytes_sec	quota:disk_total_bytes_sec			0		int
quota:disk_total_iops_sec	quota:disk_total_iops_sec			0		int
quota:vif_inbound_average	quota:vif_inbound_average			0		int
quota:vif_inbound_peak	quota:vif_inbound_peak			0		int
quota:vif_inbound_burst	quota:vif_inbound_burst			0		int
quota:vif_outbound_average	quota:vif_outbound_average			0		int
quota:vif_outbound_peak	quota:vif_outbound_peak			0		int
quota:vif_outbound_burst	quota:vif_outbound_burst			0		int
resources{group}:VCPU	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):VCPU					int
resources{group}:MEMORY_MB	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):MEMORY_MB					int
resources{group}:DISK_GB	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):DISK_GB					int
resources{group}:PCI_DEVICE	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):PCI_DEVICE					int
resources{group}:SRIOV_NET_VF	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):SRIOV_NET_VF					int
resources{group}:NUMA_SOCKET	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NUMA_SOCKET					int
resources{group}:NUMA_CORE	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NUMA_CORE					int
resources{group}:NUMA_THREAD	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NUMA_THREAD					int
resources{group}:NUMA_MEMORY_MB	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NUMA_MEMORY_MB					int
resources{group}:IPV4_ADDRESS	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):IPV4_ADDRESS					int
resources{group}:VGPU	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):VGPU					int
resources{group}:VGPU_DISPLAY_HEAD	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):VGPU_DISPLAY_HEAD					int
resources{group}:NET_BW_EGR_KILOBIT_PER_SEC	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NET_BW_EGR_KILOBIT_PER_SEC					int
resources{group}:NET_BW_IGR_KILOBIT_PER_SEC	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NET_BW_IGR_KILOBIT_PER_SEC					int
resources{group}:PCPU	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):PCPU					int
resources{group}:MEM_ENCRYPTION_CONTEXT	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):MEM_ENCRYPTION_CONTEXT					int
resources{group}:FPGA	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):FPGA					int
resources{group}:PGPU	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):PGPU					int
resources{group}:NET_PACKET_RATE_KILOPACKET_PER_SEC	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NET_PACKET_RATE_KILOPACKET_PER_SEC					int
resources{group}:NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC					int
resources{group}:NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC					int
resources{group}:CUSTOM_{resource}	resources(?P<group>([a-zA-Z0-9_-]{1,64})?):CUSTOM_(?P<resource>[A-Z0-9_]+)					int
trait{group}:COMPUTE_DEVICE_TAGGING	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_DEVICE_TAGGING		required|forbidden			str
trait{group}:COMPUTE_NODE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NODE		required|forbidden			str
trait{group}:COMPUTE_TRUSTED_CERTS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_TRUSTED_CERTS		required|forbidden			str
trait{group}:COMPUTE_SAME_HOST_COLD_MIGRATE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SAME_HOST_COLD_MIGRATE		required|forbidden			str
trait{group}:COMPUTE_RESCUE_BFV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_RESCUE_BFV		required|forbidden			str
trait{group}:COMPUTE_ACCELERATORS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ACCELERATORS		required|forbidden			str
trait{group}:COMPUTE_SOCKET_PCI_NUMA_AFFINITY	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOCKET_PCI_NUMA_AFFINITY		required|forbidden			str
trait{group}:COMPUTE_REMOTE_MANAGED_PORTS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_REMOTE_MANAGED_PORTS		required|forbidden			str
trait{group}:COMPUTE_MEM_BACKING_FILE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_MEM_BACKING_FILE		required|forbidden			str
trait{group}:COMPUTE_MANAGED_PCI_DEVICE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_MANAGED_PCI_DEVICE		required|forbidden			str
trait{group}:COMPUTE_ADDRESS_SPACE_PASSTHROUGH	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ADDRESS_SPACE_PASSTHROUGH		required|forbidden			str
trait{group}:COMPUTE_ADDRESS_SPACE_EMULATED	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ADDRESS_SPACE_EMULATED		required|forbidden			str
trait{group}:COMPUTE_SHARE_LOCAL_FS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SHARE_LOCAL_FS		required|forbidden			str
trait{group}:COMPUTE_ARCH_AARCH64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_AARCH64		required|forbidden			str
trait{group}:COMPUTE_ARCH_PPC64LE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_PPC64LE		required|forbidden			str
trait{group}:COMPUTE_ARCH_MIPSEL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_MIPSEL		required|forbidden			str
trait{group}:COMPUTE_ARCH_S390X	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_S390X		required|forbidden			str
trait{group}:COMPUTE_ARCH_RISCV64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_RISCV64		required|forbidden			str
trait{group}:COMPUTE_ARCH_X86_64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_ARCH_X86_64		required|forbidden			str
trait{group}:COMPUTE_CONFIG_DRIVE_REGENERATION	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_CONFIG_DRIVE_REGENERATION		required|forbidden			str
trait{group}:COMPUTE_EPHEMERAL_ENCRYPTION	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_EPHEMERAL_ENCRYPTION		required|forbidden			str
trait{group}:COMPUTE_EPHEMERAL_ENCRYPTION_PLAIN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_EPHEMERAL_ENCRYPTION_PLAIN		required|forbidden			str
trait{group}:COMPUTE_EPHEMERAL_ENCRYPTION_LUKS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_EPHEMERAL_ENCRYPTION_LUKS		required|forbidden			str
trait{group}:COMPUTE_EPHEMERAL_ENCRYPTION_LUKSV2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_EPHEMERAL_ENCRYPTION_LUKSV2		required|forbidden			str
trait{group}:COMPUTE_FIRMWARE_BIOS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_FIRMWARE_BIOS		required|forbidden			str
trait{group}:COMPUTE_FIRMWARE_UEFI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_FIRMWARE_UEFI		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_BOCHS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_BOCHS		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_CIRRUS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_CIRRUS		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_GOP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_GOP		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_NONE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_NONE		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_QXL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_QXL		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_VGA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_VGA		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_VIRTIO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_VIRTIO		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_VMVGA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_VMVGA		required|forbidden			str
trait{group}:COMPUTE_GRAPHICS_MODEL_XEN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_GRAPHICS_MODEL_XEN		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_AKI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_AKI		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_AMI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_AMI		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_ARI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_ARI		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_ISO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_ISO		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_QCOW2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_QCOW2		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_RAW	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_RAW		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_VDI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_VDI		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_VHD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_VHD		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_VHDX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_VHDX		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_VMDK	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_VMDK		required|forbidden			str
trait{group}:COMPUTE_IMAGE_TYPE_PLOOP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_IMAGE_TYPE_PLOOP		required|forbidden			str
trait{group}:COMPUTE_MIGRATE_AUTO_CONVERGE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_MIGRATE_AUTO_CONVERGE		required|forbidden			str
trait{group}:COMPUTE_MIGRATE_POST_COPY	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_MIGRATE_POST_COPY		required|forbidden			str
trait{group}:COMPUTE_NET_ATTACH_INTERFACE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_ATTACH_INTERFACE		required|forbidden			str
trait{group}:COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG		required|forbidden			str
trait{group}:COMPUTE_NET_VIRTIO_PACKED	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIRTIO_PACKED		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_E1000	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_E1000		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_E1000E	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_E1000E		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_LAN9118	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_LAN9118		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_NETFRONT	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_NETFRONT		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_NE2K_PCI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_NE2K_PCI		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_PCNET	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_PCNET		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_RTL8139	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_RTL8139		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_SPAPR_VLAN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_SPAPR_VLAN		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_SRIOV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_SRIOV		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_VIRTIO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_VIRTIO		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_VMXNET	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_VMXNET		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_VMXNET3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_VMXNET3		required|forbidden			str
trait{group}:COMPUTE_NET_VIF_MODEL_IGB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_NET_VIF_MODEL_IGB		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_1_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_1_2		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_2_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_2_0		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_TIS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_TIS		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_CRB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_CRB		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_SECRET_SECURITY_USER		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_SECRET_SECURITY_HOST		required|forbidden			str
trait{group}:COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_TPM_SECRET_SECURITY_DEPLOYMENT		required|forbidden			str
trait{group}:COMPUTE_SECURITY_UEFI_SECURE_BOOT	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_UEFI_SECURE_BOOT		required|forbidden			str
trait{group}:COMPUTE_SECURITY_STATELESS_FIRMWARE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SECURITY_STATELESS_FIRMWARE		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_SB16	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_SB16		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_ES1370	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_ES1370		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_PCSPK	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_PCSPK		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_AC97	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_AC97		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_ICH6	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_ICH6		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_ICH9	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_ICH9		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_USB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_USB		required|forbidden			str
trait{group}:COMPUTE_SOUND_MODEL_VIRTIO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_SOUND_MODEL_VIRTIO		required|forbidden			str
trait{group}:COMPUTE_STATUS_DISABLED	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STATUS_DISABLED		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_FDC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_FDC		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_IDE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_IDE		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_LXC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_LXC		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_SATA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_SATA		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_SCSI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_SCSI		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_USB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_USB		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_VIRTIO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_VIRTIO		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_UML	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_UML		required|forbidden			str
trait{group}:COMPUTE_STORAGE_BUS_XEN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_BUS_XEN		required|forbidden			str
trait{group}:COMPUTE_STORAGE_VIRTIO_FS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_STORAGE_VIRTIO_FS		required|forbidden			str
trait{group}:COMPUTE_USB_MODEL_QEMU_XHCI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_USB_MODEL_QEMU_XHCI		required|forbidden			str
trait{group}:COMPUTE_USB_MODEL_NEC_XHCI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_USB_MODEL_NEC_XHCI		required|forbidden			str
trait{group}:COMPUTE_VIOMMU_MODEL_INTEL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VIOMMU_MODEL_INTEL		required|forbidden			str
trait{group}:COMPUTE_VIOMMU_MODEL_SMMUV3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VIOMMU_MODEL_SMMUV3		required|forbidden			str
trait{group}:COMPUTE_VIOMMU_MODEL_VIRTIO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VIOMMU_MODEL_VIRTIO		required|forbidden			str
trait{group}:COMPUTE_VIOMMU_MODEL_AUTO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VIOMMU_MODEL_AUTO		required|forbidden			str
trait{group}:COMPUTE_VOLUME_ATTACH	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VOLUME_ATTACH		required|forbidden			str
trait{group}:COMPUTE_VOLUME_ATTACH_WITH_TAG	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VOLUME_ATTACH_WITH_TAG		required|forbidden			str
trait{group}:COMPUTE_VOLUME_EXTEND	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VOLUME_EXTEND		required|forbidden			str
trait{group}:COMPUTE_VOLUME_MULTI_ATTACH	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):COMPUTE_VOLUME_MULTI_ATTACH		required|forbidden			str
trait{group}:HW_ARCH_ALPHA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_ALPHA		required|forbidden			str
trait{group}:HW_ARCH_ARMV6	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_ARMV6		required|forbidden			str
trait{group}:HW_ARCH_ARMV7	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_ARMV7		required|forbidden			str
trait{group}:HW_ARCH_ARMV7B	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_ARMV7B		required|forbidden			str
trait{group}:HW_ARCH_AARCH64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_AARCH64		required|forbidden			str
trait{group}:HW_ARCH_CRIS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_CRIS		required|forbidden			str
trait{group}:HW_ARCH_I686	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_I686		required|forbidden			str
trait{group}:HW_ARCH_IA64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_IA64		required|forbidden			str
trait{group}:HW_ARCH_LM32	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_LM32		required|forbidden			str
trait{group}:HW_ARCH_M68K	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_M68K		required|forbidden			str
trait{group}:HW_ARCH_MICROBLAZE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MICROBLAZE		required|forbidden			str
trait{group}:HW_ARCH_MICROBLAZEEL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MICROBLAZEEL		required|forbidden			str
trait{group}:HW_ARCH_MIPS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MIPS		required|forbidden			str
trait{group}:HW_ARCH_MIPSEL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MIPSEL		required|forbidden			str
trait{group}:HW_ARCH_MIPS64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MIPS64		required|forbidden			str
trait{group}:HW_ARCH_MIPS64EL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_MIPS64EL		required|forbidden			str
trait{group}:HW_ARCH_OPENRISC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_OPENRISC		required|forbidden			str
trait{group}:HW_ARCH_PARISC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PARISC		required|forbidden			str
trait{group}:HW_ARCH_PARISC64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PARISC64		required|forbidden			str
trait{group}:HW_ARCH_PPC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PPC		required|forbidden			str
trait{group}:HW_ARCH_PPCLE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PPCLE		required|forbidden			str
trait{group}:HW_ARCH_PPC64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PPC64		required|forbidden			str
trait{group}:HW_ARCH_PPC64LE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PPC64LE		required|forbidden			str
trait{group}:HW_ARCH_PPCEMB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_PPCEMB		required|forbidden			str
trait{group}:HW_ARCH_S390	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_S390		required|forbidden			str
trait{group}:HW_ARCH_S390X	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_S390X		required|forbidden			str
trait{group}:HW_ARCH_SH4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_SH4		required|forbidden			str
trait{group}:HW_ARCH_SH4EB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_SH4EB		required|forbidden			str
trait{group}:HW_ARCH_SPARC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_SPARC		required|forbidden			str
trait{group}:HW_ARCH_SPARC64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_SPARC64		required|forbidden			str
trait{group}:HW_ARCH_UNICORE32	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_UNICORE32		required|forbidden			str
trait{group}:HW_ARCH_X86_64	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_X86_64		required|forbidden			str
trait{group}:HW_ARCH_XTENSA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_XTENSA		required|forbidden			str
trait{group}:HW_ARCH_XTENSAEB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_ARCH_XTENSAEB		required|forbidden			str
trait{group}:HW_CPU_HYPERTHREADING	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_HYPERTHREADING		required|forbidden			str
trait{group}:HW_CPU_AARCH64_FP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_FP		required|forbidden			str
trait{group}:HW_CPU_AARCH64_ASIMD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_ASIMD		required|forbidden			str
trait{group}:HW_CPU_AARCH64_EVTSTRM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_EVTSTRM		required|forbidden			str
trait{group}:HW_CPU_AARCH64_AES	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_AES		required|forbidden			str
trait{group}:HW_CPU_AARCH64_PMULL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_PMULL		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SHA1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SHA1		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SHA2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SHA2		required|forbidden			str
trait{group}:HW_CPU_AARCH64_CRC32	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_CRC32		required|forbidden			str
trait{group}:HW_CPU_AARCH64_FPHP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_FPHP		required|forbidden			str
trait{group}:HW_CPU_AARCH64_ASIMDHP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_ASIMDHP		required|forbidden			str
trait{group}:HW_CPU_AARCH64_ASIMDRDM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_ASIMDRDM		required|forbidden			str
trait{group}:HW_CPU_AARCH64_ATOMICS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_ATOMICS		required|forbidden			str
trait{group}:HW_CPU_AARCH64_JSCVT	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_JSCVT		required|forbidden			str
trait{group}:HW_CPU_AARCH64_FCMA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_FCMA		required|forbidden			str
trait{group}:HW_CPU_AARCH64_LRCPC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_LRCPC		required|forbidden			str
trait{group}:HW_CPU_AARCH64_DCPOP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_DCPOP		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SHA3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SHA3		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SM3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SM3		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SM4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SM4		required|forbidden			str
trait{group}:HW_CPU_AARCH64_ASIMDDP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_ASIMDDP		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SHA512	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SHA512		required|forbidden			str
trait{group}:HW_CPU_AARCH64_SVE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_SVE		required|forbidden			str
trait{group}:HW_CPU_AARCH64_CPUID	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AARCH64_CPUID		required|forbidden			str
trait{group}:HW_CPU_AMD_SEV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_AMD_SEV		required|forbidden			str
trait{group}:HW_CPU_PPC64LE_POWER8	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_PPC64LE_POWER8		required|forbidden			str
trait{group}:HW_CPU_PPC64LE_POWER9	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_PPC64LE_POWER9		required|forbidden			str
trait{group}:HW_CPU_X86_AVX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX		required|forbidden			str
trait{group}:HW_CPU_X86_AVX2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX2		required|forbidden			str
trait{group}:HW_CPU_X86_CLMUL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_CLMUL		required|forbidden			str
trait{group}:HW_CPU_X86_FMA3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_FMA3		required|forbidden			str
trait{group}:HW_CPU_X86_FMA4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_FMA4		required|forbidden			str
trait{group}:HW_CPU_X86_F16C	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_F16C		required|forbidden			str
trait{group}:HW_CPU_X86_MMX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_MMX		required|forbidden			str
trait{group}:HW_CPU_X86_SSE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE		required|forbidden			str
trait{group}:HW_CPU_X86_SSE2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE2		required|forbidden			str
trait{group}:HW_CPU_X86_SSE3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE3		required|forbidden			str
trait{group}:HW_CPU_X86_SSSE3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSSE3		required|forbidden			str
trait{group}:HW_CPU_X86_SSE41	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE41		required|forbidden			str
trait{group}:HW_CPU_X86_SSE42	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE42		required|forbidden			str
trait{group}:HW_CPU_X86_SSE4A	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SSE4A		required|forbidden			str
trait{group}:HW_CPU_X86_XOP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_XOP		required|forbidden			str
trait{group}:HW_CPU_X86_3DNOW	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_3DNOW		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512F	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512F		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512CD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512CD		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512PF	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512PF		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512ER	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512ER		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VL		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512BW	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512BW		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512DQ	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512DQ		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VNNI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VNNI		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VBMI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VBMI		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512IFMA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512IFMA		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VBMI2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VBMI2		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512BITALG	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512BITALG		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VAES	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VAES		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512GFNI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512GFNI		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VPCLMULQDQ	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VPCLMULQDQ		required|forbidden			str
trait{group}:HW_CPU_X86_AVX512VPOPCNTDQ	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AVX512VPOPCNTDQ		required|forbidden			str
trait{group}:HW_CPU_X86_ABM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_ABM		required|forbidden			str
trait{group}:HW_CPU_X86_BMI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_BMI		required|forbidden			str
trait{group}:HW_CPU_X86_BMI2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_BMI2		required|forbidden			str
trait{group}:HW_CPU_X86_TBM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_TBM		required|forbidden			str
trait{group}:HW_CPU_X86_AESNI	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AESNI		required|forbidden			str
trait{group}:HW_CPU_X86_SHA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SHA		required|forbidden			str
trait{group}:HW_CPU_X86_MPX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_MPX		required|forbidden			str
trait{group}:HW_CPU_X86_SGX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SGX		required|forbidden			str
trait{group}:HW_CPU_X86_TSX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_TSX		required|forbidden			str
trait{group}:HW_CPU_X86_ASF	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_ASF		required|forbidden			str
trait{group}:HW_CPU_X86_VMX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_VMX		required|forbidden			str
trait{group}:HW_CPU_X86_SVM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_SVM		required|forbidden			str
trait{group}:HW_CPU_X86_PDPE1GB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_PDPE1GB		required|forbidden			str
trait{group}:HW_CPU_X86_STIBP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_STIBP		required|forbidden			str
trait{group}:HW_CPU_X86_AMXBF16	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMXBF16		required|forbidden			str
trait{group}:HW_CPU_X86_AMXINT8	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMXINT8		required|forbidden			str
trait{group}:HW_CPU_X86_AMXTILE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMXTILE		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_SEV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_SEV		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_SEV_ES	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_SEV_ES		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_SEV_SNP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_SEV_SNP		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_SVM	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_SVM		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_IBPB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_IBPB		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_NO_SSB	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_NO_SSB		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_SSBD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_SSBD		required|forbidden			str
trait{group}:HW_CPU_X86_AMD_VIRT_SSBD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_AMD_VIRT_SSBD		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_MD_CLEAR	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_MD_CLEAR		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_PCID	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_PCID		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_SPEC_CTRL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_SPEC_CTRL		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_SSBD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_SSBD		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_VMX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_VMX		required|forbidden			str
trait{group}:HW_CPU_X86_INTEL_TDX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_CPU_X86_INTEL_TDX		required|forbidden			str
trait{group}:HW_GPU_API_DIRECTX_V10	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECTX_V10		required|forbidden			str
trait{group}:HW_GPU_API_DIRECTX_V11	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECTX_V11		required|forbidden			str
trait{group}:HW_GPU_API_DIRECTX_V12	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECTX_V12		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT2D	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT2D		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V6_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V6_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V7_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V7_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V8_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V8_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V8_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V8_1		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V9_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V9_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V9_0B	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V9_0B		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V9_0C	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V9_0C		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V9_0L	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V9_0L		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V10_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V10_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V10_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V10_1		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V11_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V11_0		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V11_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V11_1		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V11_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V11_2		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V11_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V11_3		required|forbidden			str
trait{group}:HW_GPU_API_DIRECT3D_V12_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DIRECT3D_V12_0		required|forbidden			str
trait{group}:HW_GPU_API_VULKAN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_VULKAN		required|forbidden			str
trait{group}:HW_GPU_API_DXVA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_DXVA		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V1_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V1_0		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V1_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V1_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V1_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V1_2		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V2_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V2_0		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V2_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V2_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENCL_V2_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENCL_V2_2		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V1_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V1_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V1_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V1_2		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V1_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V1_3		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V1_4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V1_4		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V1_5	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V1_5		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V2_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V2_0		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V2_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V2_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V3_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V3_0		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V3_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V3_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V3_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V3_2		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V3_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V3_3		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_0		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_1		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_2		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_3		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_4		required|forbidden			str
trait{group}:HW_GPU_API_OPENGL_V4_5	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_API_OPENGL_V4_5		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_1		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_3		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V2_1		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_5	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_5		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_7	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V3_7		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_3	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V5_3		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_1		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V6_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_1		required|forbidden			str
trait{group}:HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_COMPUTE_CAPABILITY_V7_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V6_5	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V6_5		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V7_5	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V7_5		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V8_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V8_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V9_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V9_0		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V9_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V9_1		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V9_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V9_2		required|forbidden			str
trait{group}:HW_GPU_CUDA_SDK_V10_0	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_CUDA_SDK_V10_0		required|forbidden			str
trait{group}:HW_GPU_MAX_DISPLAY_HEADS_1	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_MAX_DISPLAY_HEADS_1		required|forbidden			str
trait{group}:HW_GPU_MAX_DISPLAY_HEADS_2	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_MAX_DISPLAY_HEADS_2		required|forbidden			str
trait{group}:HW_GPU_MAX_DISPLAY_HEADS_4	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_MAX_DISPLAY_HEADS_4		required|forbidden			str
trait{group}:HW_GPU_MAX_DISPLAY_HEADS_6	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_MAX_DISPLAY_HEADS_6		required|forbidden			str
trait{group}:HW_GPU_MAX_DISPLAY_HEADS_8	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_MAX_DISPLAY_HEADS_8		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W320H240	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W320H240		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W640H480	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W640H480		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W800H600	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W800H600		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1024H600	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1024H600		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1024H768	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1024H768		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1152H864	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1152H864		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1280H720	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1280H720		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1280H768	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1280H768		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1280H800	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1280H800		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1280H1024	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1280H1024		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1360H768	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1360H768		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1366H768	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1366H768		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1440H900	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1440H900		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1600H900	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1600H900		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1600H1200	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1600H1200		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1680H1050	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1680H1050		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1920H1080	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1920H1080		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W1920H1200	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W1920H1200		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W2560H1440	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W2560H1440		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W2560H1600	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W2560H1600		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W3840H2160	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W3840H2160		required|forbidden			str
trait{group}:HW_GPU_RESOLUTION_W7680H4320	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_GPU_RESOLUTION_W7680H4320		required|forbidden			str
trait{group}:HW_NIC_SRIOV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_SRIOV		required|forbidden			str
trait{group}:HW_NIC_MULTIQUEUE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_MULTIQUEUE		required|forbidden			str
trait{group}:HW_NIC_VMDQ	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_VMDQ		required|forbidden			str
trait{group}:HW_NIC_PROGRAMMABLE_PIPELINE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_PROGRAMMABLE_PIPELINE		required|forbidden			str
trait{group}:HW_NIC_ACCEL_SSL	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_SSL		required|forbidden			str
trait{group}:HW_NIC_ACCEL_IPSEC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_IPSEC		required|forbidden			str
trait{group}:HW_NIC_ACCEL_TLS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_TLS		required|forbidden			str
trait{group}:HW_NIC_ACCEL_DIFFIEH	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_DIFFIEH		required|forbidden			str
trait{group}:HW_NIC_ACCEL_RSA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_RSA		required|forbidden			str
trait{group}:HW_NIC_ACCEL_ECC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_ECC		required|forbidden			str
trait{group}:HW_NIC_ACCEL_LZS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_LZS		required|forbidden			str
trait{group}:HW_NIC_ACCEL_DEFLATE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_ACCEL_DEFLATE		required|forbidden			str
trait{group}:HW_NIC_DCB_PFC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_DCB_PFC		required|forbidden			str
trait{group}:HW_NIC_DCB_ETS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_DCB_ETS		required|forbidden			str
trait{group}:HW_NIC_DCB_QCN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_DCB_QCN		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_TSO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_TSO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_GRO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_GRO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_GSO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_GSO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_UFO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_UFO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_LRO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_LRO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_LSO	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_LSO		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_TCS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_TCS		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_UCS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_UCS		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_SCS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_SCS		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_L2CRC	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_L2CRC		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_FDF	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_FDF		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_RXVLAN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_RXVLAN		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_TXVLAN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_TXVLAN		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_VXLAN	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_VXLAN		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_GRE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_GRE		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_GENEVE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_GENEVE		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_TXUDP	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_TXUDP		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_QINQ	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_QINQ		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_RDMA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_RDMA		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_RXHASH	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_RXHASH		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_RX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_RX		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_TX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_TX		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_SG	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_SG		required|forbidden			str
trait{group}:HW_NIC_OFFLOAD_SWITCHDEV	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_OFFLOAD_SWITCHDEV		required|forbidden			str
trait{group}:HW_NIC_SRIOV_QOS_TX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_SRIOV_QOS_TX		required|forbidden			str
trait{group}:HW_NIC_SRIOV_QOS_RX	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_SRIOV_QOS_RX		required|forbidden			str
trait{group}:HW_NIC_SRIOV_MULTIQUEUE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_SRIOV_MULTIQUEUE		required|forbidden			str
trait{group}:HW_NIC_SRIOV_TRUSTED	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NIC_SRIOV_TRUSTED		required|forbidden			str
trait{group}:HW_NUMA_ROOT	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NUMA_ROOT		required|forbidden			str
trait{group}:HW_NVME_CES	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NVME_CES		required|forbidden			str
trait{group}:HW_NVME_BES	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NVME_BES		required|forbidden			str
trait{group}:HW_NVME_WZS	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_NVME_WZS		required|forbidden			str
trait{group}:HW_PCI_LIVE_MIGRATABLE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_PCI_LIVE_MIGRATABLE		required|forbidden			str
trait{group}:HW_PCI_ONE_TIME_USE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):HW_PCI_ONE_TIME_USE		required|forbidden			str
trait{group}:MISC_SHARES_VIA_AGGREGATE	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):MISC_SHARES_VIA_AGGREGATE		required|forbidden			str
trait{group}:OWNER_CYBORG	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):OWNER_CYBORG		required|forbidden			str
trait{group}:OWNER_NOVA	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):OWNER_NOVA		required|forbidden			str
trait{group}:STORAGE_DISK_HDD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):STORAGE_DISK_HDD		required|forbidden			str
trait{group}:STORAGE_DISK_SSD	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):STORAGE_DISK_SSD		required|forbidden			str
trait{group}:CUSTOM_{trait}	trait(?P<group>([a-zA-Z0-9_-]{1,64})?):CUSTOM_(?P<trait>[A-Z0-9_]+)		required|forbidden			str
vmware:hw_version	vmware:hw_version					str
vmware:storage_policy	vmware:storage_policy					str
"""

_NAMESPACES = r"""
accel
aggregate_instance_extra_specs
capabilities
hw
hw_rng
hw_video
os
pci_passthrough
quota
resources(?P<group>([a-zA-Z0-9_-]{1,64})?)
trait(?P<group>([a-zA-Z0-9_-]{1,64})?)
vmware
"""


def _row(line: str) -> tuple:
    name, name_regex, pattern, enum, minimum, maximum, kind = line.split("\t")
    return (
        name,
        name_regex,
        kind,
        pattern or None,
        tuple(enum.split("|")) if enum else None,
        int(minimum) if minimum else None,
        int(maximum) if maximum else None,
    )


VALIDATORS = tuple(_row(line) for line in _TABLE.strip("\n").splitlines())
NAMESPACES = tuple(_NAMESPACES.split())
