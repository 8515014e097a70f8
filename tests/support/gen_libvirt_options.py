"""Write plugins/module_utils/_nova/libvirt_options.py from Nova's own ``[libvirt]`` option definitions.

Run it with the nova venv's Python (``nova.conf.libvirt``, Nova 34):

    .venv-nova/bin/python tests/support/gen_libvirt_options.py          # rewrite the data module
    .venv-nova/bin/python tests/support/gen_libvirt_options.py --print  # print it instead

``make names`` does the first. The data module needs no Nova at run time; a unit test runs ``--print``
and compares the output with the file, so a Nova upgrade shows up there.
"""

from __future__ import annotations

import sys
import warnings

if __package__:
    from tests.support import generator_cli
else:  # run as a script (make names, make catalog): its own folder comes first on sys.path
    import generator_cli

warnings.simplefilter("ignore")

TARGET = generator_cli.module_utils_path("_nova", "libvirt_options.py")

HEADER = '''\
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nova's ``[libvirt]`` options: generated from Nova {nova_version} (``nova.conf.libvirt``), do not edit.

``OPTIONS``: ``{{name: (kind, choices, min, max, deprecated_for_removal, old_names)}}`` in Nova's order;
``kind`` is ``str``, ``int``, ``bool``, ``list`` (of strings) or ``host`` (an IP address or a host
domain name, oslo.config's HostDomain); ``choices`` a tuple or None; ``old_names`` the deprecated names
oslo.config still reads for it. To follow a new Nova, pin it in requirements/nova.txt and run
``make names``.
"""

from __future__ import annotations

NOVA_VERSION = "{nova_version}"

# One option a line: name, choices (separated by |), min, max, flags (R: deprecated for removal), its
# deprecated names (separated by |) and kind, separated by tabs; an empty field is None.
_TABLE = r"""
'''

FOOTER = '''"""


def _row(line: str) -> tuple:
    name, choices, minimum, maximum, flags, old, kind = line.split("\\t")
    parsed = tuple(int(c) if kind == "int" else c for c in choices.split("|")) if choices else None
    return name, (
        kind,
        parsed,
        int(minimum) if minimum else None,
        int(maximum) if maximum else None,
        "R" in flags,
        tuple(old.split("|")) if old else (),
    )


OPTIONS = dict(_row(line) for line in _TABLE.strip("\\n").splitlines())
'''

KINDS = {"String": "str", "Integer": "int", "Boolean": "bool", "List": "list", "HostDomain": "host"}


def render(opts, nova_version: str) -> str:
    lines = []
    for opt in opts:
        kind = KINDS[type(opt.type).__name__]
        if kind == "list" and type(opt.type.item_type).__name__ != "String":
            raise ValueError(f"[libvirt] {opt.name}: a list of {opt.type.item_type!r} is not modelled")
        choices = getattr(opt.type, "choices", None) or ()
        minimum, maximum = getattr(opt.type, "min", None), getattr(opt.type, "max", None)
        old = [d.name for d in opt.deprecated_opts if d.group in (None, "libvirt") and d.name]
        fields = [
            opt.name,
            "|".join(str(c) for c in choices),
            "" if minimum is None else str(minimum),
            "" if maximum is None else str(maximum),
            "R" if opt.deprecated_for_removal else "",
            "|".join(old),
            kind,
        ]
        if any("\t" in f or "\n" in f for f in fields) or any("|" in str(c) or c == "" for c in choices):
            raise ValueError(f"[libvirt] {opt.name} cannot be written as one table line")
        lines.append("\t".join(fields))
    return HEADER.format(nova_version=nova_version) + "\n".join(lines) + "\n" + FOOTER


def from_nova() -> str:
    from importlib.metadata import version

    from nova.conf import libvirt

    (opts,) = libvirt.list_opts().values()
    return render(opts, version("nova"))


def main() -> int:
    return generator_cli.run(__doc__, TARGET, from_nova)


if __name__ == "__main__":
    sys.exit(main())
