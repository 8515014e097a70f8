"""The venv the installed-collection tests run the tarball with holds ansible-core and the collection's
requirements.txt, nothing else: no ``ansible`` package, so no openstack.cloud (tests/support/
installed_collection.py). The tarball itself runs the whole pipeline and the audit in test_try_it.py (the
documented first run, from the default collections path) and test_kolla_example.py (the Kolla example).
"""

import os
import re

import pytest

from tests.support.installed_collection import pin, run

pytestmark = pytest.mark.xdist_group("tarball")


def test_the_venv_holds_ansible_core_and_the_requirements_only(user_venv):
    frozen = run([os.path.join(user_venv, "python"), "-m", "pip", "freeze"]).lower()
    assert pin("ansible-core").lower() in frozen
    assert not re.search(r"^ansible==", frozen, re.MULTILINE), "the full ansible package would bring openstack.cloud"
    assert "openstacksdk==" in frozen
