# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's ``[libvirt]`` options: generated from Nova 34.0.0 (``nova.conf.libvirt``), do not edit.

``OPTIONS``: ``{name: (kind, choices, min, max, deprecated_for_removal, old_names)}`` in Nova's order;
``kind`` is ``str``, ``int``, ``bool``, ``list`` (of strings) or ``host`` (an IP address or a host
domain name, oslo.config's HostDomain); ``choices`` a tuple or None; ``old_names`` the deprecated names
oslo.config still reads for it. To follow a new Nova, pin it in requirements/nova.txt and run
``make names``.
"""

from __future__ import annotations

NOVA_VERSION = "34.0.0"

# One option a line: name, choices (separated by |), min, max, flags (R: deprecated for removal), its
# deprecated names (separated by |) and kind, separated by tabs; an empty field is None.
_TABLE = r"""
rescue_image_id						str
rescue_kernel_id						str
rescue_ramdisk_id						str
virt_type	kvm|lxc|qemu|parallels					str
connection_uri						str
inject_password						bool
inject_key						bool
inject_partition		-2				int
live_migration_scheme						str
live_migration_inbound_addr						host
live_migration_uri				R		str
live_migration_tunnelled				R		bool
live_migration_bandwidth						int
live_migration_downtime		100				int
live_migration_downtime_steps		3				int
live_migration_downtime_delay		3				int
live_migration_completion_timeout		0				int
live_migration_parallel_connections						int
live_migration_timeout_action	abort|force_complete					str
live_migration_permit_post_copy						bool
live_migration_permit_auto_converge						bool
snapshot_image_format	raw|qcow2|vmdk|vdi					str
live_migration_with_native_tls						bool
live_migration_monitor_interval						int
disk_prefix						str
wait_soft_reboot_seconds						int
cpu_mode	host-model|host-passthrough|custom|none					str
cpu_models					cpu_model	list
cpu_model_extra_flags						list
snapshots_directory						str
disk_cachemodes						list
rng_dev_path						str
hw_machine_type						list
sysinfo_serial	none|os|hardware|auto|unique					str
mem_stats_period_seconds						int
uid_maps						list
gid_maps						list
realtime_scheduler_priority						int
enabled_perf_events						list
num_pcie_ports		0	28			int
file_backed_memory		0				int
device_detach_attempts		1				int
device_detach_timeout		1				int
tb_cache_size		0				int
migration_inbound_addr						str
num_intel_tdx_guests		0				int
images_type	raw|flat|qcow2|lvm|rbd|ploop|default					str
images_volume_group						str
sparse_logical_volumes				R		bool
images_rbd_pool						str
images_rbd_ceph_conf						str
images_rbd_glance_store_name						str
images_rbd_glance_copy_poll_interval						int
images_rbd_glance_copy_timeout						int
hw_disk_discard	ignore|unmap					str
images_cpu_time_limit						int
images_address_space_limit						int
volume_clear	zero|shred|none					str
volume_clear_size		0				int
snapshot_compression						bool
use_virtio_for_bridges						bool
volume_use_multipath					iscsi_use_multipath	bool
volume_enforce_multipath						bool
num_volume_scan_tries					num_iscsi_scan_tries	int
num_aoe_discover_tries						int
iscsi_iface					iscsi_transport	str
num_iser_scan_tries						int
iser_use_multipath						bool
rbd_user						str
rbd_secret_uuid						str
rbd_connect_timeout						int
rbd_destroy_volume_retry_interval		0				int
rbd_destroy_volume_retries		0				int
nfs_mount_point_base						str
nfs_mount_options						str
ceph_mount_point_base						str
ceph_mount_options						list
quobyte_mount_point_base				R		str
quobyte_client_cfg				R		str
smbfs_mount_point_base				R		str
smbfs_mount_options				R		str
remote_filesystem_transport	ssh|rsync					str
vzstorage_mount_point_base				R		str
vzstorage_mount_user				R		str
vzstorage_mount_group						str
vzstorage_mount_perms						str
vzstorage_log_path						str
vzstorage_cache_path						str
vzstorage_mount_opts						list
rx_queue_size	256|512|1024					int
tx_queue_size	256|512|1024					int
max_queues		1				int
num_nvme_discover_tries						int
pmem_namespaces						list
swtpm_enabled						bool
swtpm_user						str
swtpm_group						str
supported_tpm_secret_security						list
use_default_aio_mode_for_volumes						bool
cpu_power_management						bool
cpu_power_management_strategy	cpu_state|governor					str
cpu_power_governor_low						str
cpu_power_governor_high						str
"""


def _row(line: str) -> tuple:
    name, choices, minimum, maximum, flags, old, kind = line.split("\t")
    parsed = tuple(int(c) if kind == "int" else c for c in choices.split("|")) if choices else None
    return name, (
        kind,
        parsed,
        int(minimum) if minimum else None,
        int(maximum) if maximum else None,
        "R" in flags,
        tuple(old.split("|")) if old else (),
    )


OPTIONS = dict(_row(line) for line in _TABLE.strip("\n").splitlines())
