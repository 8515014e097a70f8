# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names and grammar every part of the collection shares, each rule written once.

- ``standard``: the standard traits and resource classes Placement ships (generated, never edited);
- ``custom``: the ``CUSTOM_`` rule, its normaliser and the length limit;
- ``uuids``: what Placement accepts as a UUID;
- ``inventory``: the fields of an inventory record and the defaults Placement applies;
- ``pci``: the PCI address grammar (one parser, one normaliser);
- ``suggest``: the one "did you mean" for misspelt names.
"""
