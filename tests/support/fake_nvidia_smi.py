"""The stateful nvidia-smi double, for the tests: a re-export of the collection's own
(plugins/module_utils/_simulate/nvidia_smi.py), with its command line.

    python -m tests.support.fake_nvidia_smi --root ROOT ARGS...
    python -m tests.support.fake_nvidia_smi --install ROOT   # /usr/bin/nvidia-smi inside a Debian root
"""

import importlib
import sys

importlib.import_module("conftest")  # run as a script: makes ansible_collections.accel.openstack importable
from ansible_collections.accel.openstack.plugins.module_utils._simulate.nvidia_smi import (  # noqa: E402
    INSTALLED_TABLES,
    RECORDED,
    STATE,
    TABLES,
    FakeNvidiaSmi,
    SmiError,
    after_reboot,
    command_line,
    initial_state,
    install,
    load_tables,
    recorded_outputs,
    render_recorded,
    render_xml,
)

__all__ = [
    "INSTALLED_TABLES",
    "RECORDED",
    "STATE",
    "TABLES",
    "FakeNvidiaSmi",
    "SmiError",
    "after_reboot",
    "initial_state",
    "install",
    "load_tables",
    "recorded_outputs",
    "render_recorded",
    "render_xml",
    "main",
]


def main(argv: list[str] | None = None) -> int:
    status, out, err = command_line(sys.argv[1:] if argv is None else argv)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return status


if __name__ == "__main__":
    sys.exit(main())
