"""Stand-in for ansible-test's pip bootstrap script where its download host is unreachable.

ansible-test runs the bootstrap script inside a fresh venv with pip's install arguments, in an environment
it has cleaned of pip settings. This one installs the pip bundled with Python (ensurepip), carries this
machine's pip settings (CA bundle, extra indexes) into the venv's own pip.conf, then installs what was
asked for.
"""

import ensurepip
import os
import subprocess
import sys

PIP_CONF = ""  # filled in by tests/run_sanity.sh from this machine's pip settings

if PIP_CONF:
    with open(os.path.join(sys.prefix, "pip.conf"), "w") as target:
        target.write(PIP_CONF)
ensurepip.bootstrap()
# ensurepip points PIP_CONFIG_FILE at /dev/null for the rest of this process; undo that for our install.
env = {k: v for k, v in os.environ.items() if k != "PIP_CONFIG_FILE"}
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", *args], env=env))
