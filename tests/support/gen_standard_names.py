"""Write plugins/module_utils/_names/standard.py from the installed os-traits and os-resource-classes.

Run it with the Python of a venv that has the pinned packages (the Nova venv has both):

    .venv-nova/bin/python tests/support/gen_standard_names.py          # rewrite the data module
    .venv-nova/bin/python tests/support/gen_standard_names.py --print  # print it instead

``make names`` does the first. The data module needs neither package at run time; a unit test runs
``--print`` and compares the output with the file, so an upgrade of either package shows up there.
"""

from __future__ import annotations

import sys

if __package__:
    from tests.support import generator_cli
else:  # run as a script (make names, make catalog): its own folder comes first on sys.path
    import generator_cli

TARGET = generator_cli.module_utils_path("_names", "standard.py")

HEADER = '''\
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names Placement knows before any custom name is created: generated, do not edit.

The standard resource classes (os-resource-classes {rc_version}) and standard traits (os-traits
{traits_version}), the sets a Placement database holds after ``placement-manage db sync``. To follow a
new release, pin it in requirements/nova.txt and run ``make names``.
"""

from __future__ import annotations

OS_TRAITS_VERSION = "{traits_version}"
OS_RESOURCE_CLASSES_VERSION = "{rc_version}"
'''


def render(traits, resource_classes, traits_version: str, rc_version: str) -> str:
    """The data module's text for these names (one a line, sorted, so an upgrade's diff reads easily)."""

    def block(name: str, values) -> str:
        lines = "\n".join(sorted(set(values)))
        return f'\n_{name} = """\n{lines}\n"""\n'

    return (
        HEADER.format(traits_version=traits_version, rc_version=rc_version)
        + block("RESOURCE_CLASSES", resource_classes)
        + block("TRAITS", traits)
        + "\nSTANDARD_RESOURCE_CLASSES = frozenset(_RESOURCE_CLASSES.split())\n"
        + "STANDARD_TRAITS = frozenset(_TRAITS.split())\n"
    )


def from_packages() -> str:
    from importlib.metadata import version

    import os_resource_classes
    import os_traits

    return render(
        os_traits.get_traits(),
        os_resource_classes.STANDARDS,
        version("os-traits"),
        version("os-resource-classes"),
    )


def main() -> int:
    return generator_cli.run(__doc__, TARGET, from_packages)


if __name__ == "__main__":
    sys.exit(main())
