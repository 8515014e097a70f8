# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How texts meant for people name the collection's playbooks: the way the operator runs them.

From a checkout a playbook is a path (``ansible-playbook playbooks/nova_config.yml``); from an installed
collection it is its fully qualified name (``ansible-playbook accel.openstack.nova_config``), and the path
names a file inside the collection directory that the operator never runs by hand. Fix texts are written
with the path form; :func:`name_playbooks` gives them the form of the run that reports them.
"""

from __future__ import annotations

import re

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError

FORMS = ("path", "fqcn")
COLLECTION = "accel.openstack"
# playbooks/<name>.yml, not inside a longer path (a file under another directory keeps its name)
_PATH_FORM = re.compile(r"(?<![\w./-])playbooks/([a-z][a-z0-9_]*)\.yml(?![\w.-])")


class PlaybookFormError(AccelError, ValueError):
    """A playbook form that is not one of FORMS; the message names the choices."""


def _checked(form: str) -> str:
    if form not in FORMS:
        raise PlaybookFormError(
            f"playbook form {form!r} is not one of {', '.join(FORMS)} (path: playbooks/<name>.yml, as from a "
            f"checkout; fqcn: {COLLECTION}.<name>, as from an installed collection)"
        )
    return form


def playbook(name: str, form: str) -> str:
    """``playbooks/<name>.yml`` or ``accel.openstack.<name>``."""
    return f"{COLLECTION}.{name}" if _checked(form) == "fqcn" else f"playbooks/{name}.yml"


def name_playbooks(text: str, form: str) -> str:
    """``text`` with every ``playbooks/<name>.yml`` it names in ``form``."""
    if _checked(form) == "path":
        return text
    return _PATH_FORM.sub(lambda match: playbook(match.group(1), form), text)
