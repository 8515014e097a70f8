"""Nova 34's own extra-spec validation for [name, value] pairs (run under the nova venv's Python).

JSON cases on stdin (``[[name, value], ...]``), JSON results on stdout: per pair, null where
``nova.api.validation.extra_specs.validators.validate`` accepts it, else its message.
"""

from __future__ import annotations

import os
import sys
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.support.nova_venv import serve  # noqa: E402


def run(cases):
    from nova import exception
    from nova.api.validation.extra_specs import validators

    validators.load_validators()
    found = []
    for name, value in cases:
        try:
            validators.validate(name, value)
            found.append(None)
        except exception.ValidationError as exc:
            found.append(exc.format_message())
    return found


if __name__ == "__main__":
    sys.exit(serve(run))
