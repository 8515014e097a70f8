"""Write plugins/module_utils/_host/device_catalog_data.py from device_catalog.yml beside it.

    .venv/bin/python tests/support/gen_device_catalog.py          # check the YAML, rewrite the data module
    .venv/bin/python tests/support/gen_device_catalog.py --print  # print the module instead

``make catalog`` does the first. A catalog that breaks the schema is refused with every problem named.
The data module needs no YAML parser at run time (module_utils run on managed hosts); a unit test runs
:func:`render` and compares it with the file, so an edit of the YAML without a rerun fails there.
"""

from __future__ import annotations

import json
import os
import sys

if __package__:
    from tests.support import generator_cli
else:  # run as a script (make names, make catalog): its own folder comes first on sys.path
    import generator_cli

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(REPO, "plugins", "module_utils", "_host", "device_catalog.yml")
TARGET = os.path.join(REPO, "plugins", "module_utils", "_host", "device_catalog_data.py")

HEADER = '''\
# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The accelerator device catalog as data: generated from device_catalog.yml, do not edit.

Edit device_catalog.yml and run ``make catalog`` (tests/support/gen_device_catalog.py).
"""

from __future__ import annotations

'''


def load(path: str = SOURCE) -> dict:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def render(document: dict) -> str:
    """The data module's text for a catalog document (refused when it breaks the schema)."""
    sys.path.insert(0, REPO)
    import conftest  # noqa: F401  (makes ansible_collections.accel.openstack importable from a checkout)
    from ansible_collections.accel.openstack.plugins.module_utils._host.device_catalog import catalog_problems

    problems = catalog_problems(document)
    if problems:
        raise SystemExit("device_catalog.yml is not a valid catalog:\n" + "\n".join(problems))
    return HEADER + "CATALOG = " + literal(document) + "\n"


def literal(value, depth: int = 0) -> str:
    """``value`` as a Python literal laid out as ruff formats it: one item a line, trailing commas, keys in
    the document's order, strings in double quotes."""
    pad, inner = "    " * depth, "    " * (depth + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = "".join(f"{inner}{json.dumps(k)}: {literal(v, depth + 1)},\n" for k, v in value.items())
        return "{\n" + items + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"{inner}{literal(v, depth + 1)},\n" for v in value) + pad + "]"
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | str):
        return json.dumps(value, ensure_ascii=False)
    raise SystemExit(f"device_catalog.yml holds a {type(value).__name__}, which the catalog has no use for: {value!r}")


def main() -> int:
    return generator_cli.run(__doc__, TARGET, lambda: render(load()))


if __name__ == "__main__":
    sys.exit(main())
