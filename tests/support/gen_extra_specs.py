"""Write plugins/module_utils/_names/extra_specs.py from Nova's own extra-spec validator registry.

Run it with the nova venv's Python (``nova.api.validation.extra_specs``, Nova 34):

    .venv-nova/bin/python tests/support/gen_extra_specs.py          # rewrite the data module
    .venv-nova/bin/python tests/support/gen_extra_specs.py --print  # print it instead

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

TARGET = generator_cli.module_utils_path("_names", "extra_specs.py")

# ansible-test's pep8 limit is 160 columns; a tab counts as one character there.
MAX_LINE = 150

HEADER = '''\
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flavor extra specs nova-api knows (microversion 2.86+): generated from Nova {nova_version}, do not edit.

``VALIDATORS``: Nova's registry (``nova.api.validation.extra_specs``) in its load order, one tuple per
validator: (name, name regex, value type, value pattern, value enum, min, max), None where Nova has
none. ``NAMESPACES``: the namespace regexes of the names with a ``:`` (a key in one of them that no
validator matches is refused). To follow a new Nova, pin it in requirements/nova.txt and run
``make names``.
"""

from __future__ import annotations

NOVA_VERSION = "{nova_version}"

# One validator a line: name, name regex, value pattern, enum (values separated by |), min, max and
# type, separated by tabs; an empty field is None. A line that starts with "+" and a tab continues the
# one above it (the table keeps within the 160 columns of ansible-test's pep8).
_TABLE = r"""
'''

FOOTER = '''"""

_NAMESPACES = r"""
{namespaces}
"""


def _row(line: str) -> tuple:
    name, name_regex, pattern, enum, minimum, maximum, kind = line.split("\\t")
    return (
        name,
        name_regex,
        kind,
        pattern or None,
        tuple(enum.split("|")) if enum else None,
        int(minimum) if minimum else None,
        int(maximum) if maximum else None,
    )


VALIDATORS = tuple(_row(line) for line in _TABLE.strip("\\n").replace("\\n+\\t", "\\t").splitlines())
NAMESPACES = tuple(_NAMESPACES.split())
'''


def render(validators, namespaces, nova_version: str) -> str:
    """The data module: one validator a line (the type last, so no line ends in whitespace)."""
    lines = []
    for validator in validators:
        value = validator.value
        kind = {int: "int", bool: "bool", str: "str"}[value["type"]]
        enum = [str(v) for v in value.get("enum") or ()]
        fields = [validator.name, validator.name_regex, value.get("pattern") or "", "|".join(enum)]
        fields += ["" if value.get(k) is None else str(int(value[k])) for k in ("min", "max")]
        fields.append(kind)
        if any("\t" in f or "\n" in f or '"""' in f for f in fields) or any("|" in v or not v for v in enum):
            raise ValueError(f"validator {validator.name!r} cannot be written as one table line")
        line = "\t".join(fields)
        if len(line) > MAX_LINE:  # continue after the name regex, on a line of its own
            line = "\t".join(fields[:2]) + "\n+\t" + "\t".join(fields[2:])
            if any(len(part) > MAX_LINE for part in line.split("\n")):
                raise ValueError(f"validator {validator.name!r} is too long for two table lines")
        lines.append(line)
    if any(any(c.isspace() for c in n) for n in namespaces):
        raise ValueError("a namespace with whitespace cannot be written one a line")
    return (
        HEADER.format(nova_version=nova_version)
        + "\n".join(lines)
        + "\n"
        + FOOTER.format(namespaces="\n".join(sorted(namespaces)))
    )


def from_nova() -> str:
    from importlib.metadata import version

    from nova.api.validation.extra_specs import validators

    validators.load_validators()
    return render(list(validators.VALIDATORS.values()), validators.NAMESPACES, version("nova"))


def main() -> int:
    return generator_cli.run(__doc__, TARGET, from_nova)


if __name__ == "__main__":
    sys.exit(main())
