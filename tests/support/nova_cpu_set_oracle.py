"""Nova's own CPU set parser (nova.virt.hardware.parse_cpu_spec), run in the nova venv.

Input: a JSON list of texts. Output: per text, ``{"cpus": sorted list}`` or ``{"refused": Nova's message}``.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.support.nova_venv import serve  # noqa: E402


def run(cases):
    from nova import exception
    from nova.virt import hardware

    out = []
    for text in cases:
        try:
            out.append({"cpus": sorted(hardware.parse_cpu_spec(text))})
        except exception.Invalid as exc:
            out.append({"refused": str(exc)})
    return out


if __name__ == "__main__":
    sys.exit(serve(run))
