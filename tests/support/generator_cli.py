"""The command line every generated-data script shares: write the data module, or print it with ``--print``.

A unit test runs each generator with ``--print`` and compares the output with the file it writes, so a
change of its source (Nova, the catalog YAML) shows up there; ``make names`` and ``make catalog`` write.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable


def run(doc: str, target: str, produce: Callable[[], str]) -> int:
    """Parse ``--print``; print ``produce()`` or write it to ``target``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the module instead of writing it")
    args = parser.parse_args()
    text = produce()
    if args.print:
        sys.stdout.write(text)
        return 0
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {target}")
    return 0


def module_utils_path(room: str, name: str) -> str:
    """Where a generated data module lives: ``plugins/module_utils/<room>/<name>`` in this checkout."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(repo, "plugins", "module_utils", room, name)
