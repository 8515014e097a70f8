"""Make the repository importable as ``ansible_collections.accel.openstack`` for every test."""

import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.join(ROOT, ".build", "collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "accel", "openstack")

if not os.path.lexists(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(ROOT, LINK)
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", COLLECTIONS)
