# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How big a YAML document becomes once its aliases are expanded, found without expanding them.

Ansible loads a variables file (``include_vars``) into Python objects whose aliases share one object, but
then walks and copies every value as if each alias were its own copy: nine levels of nine aliases, under a
kilobyte of text, become 387 million values and a load that does not end. :func:`check_document` composes the
document's node graph (PyYAML's composer builds each anchored node once), counts every node's expanded size
once (memoised per node, so the count costs the size of the graph, not of its expansion) and refuses a
document whose expansion passes the bound, before anything loads it.
"""

from __future__ import annotations

import yaml

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._inputs import MAX_ITEMS

# A variables file of Kolla-Ansible (globals.yml, passwords.yml, group_vars/all) is tens of kilobytes.
MAX_BYTES = 8 << 20


class DocumentTooBig(AccelError):
    pass


def expanded_size(node: yaml.Node, sizes: dict[int, int] | None = None, limit: int = MAX_ITEMS) -> int:
    """The number of values ``node`` holds once every alias is a copy (a scalar is one value)."""
    sizes = {} if sizes is None else sizes
    visiting: set[int] = set()
    stack = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if id(current) in sizes:
            continue
        if not expanded and id(current) in visiting:
            raise DocumentTooBig("an alias refers to a node that holds it: the document has no end once expanded")
        if isinstance(current, yaml.ScalarNode):
            sizes[id(current)] = 1
            continue
        children = (
            [child for pair in current.value for child in pair]
            if isinstance(current, yaml.MappingNode)
            else list(current.value)
        )
        if not expanded:
            visiting.add(id(current))
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        visiting.discard(id(current))
        sizes[id(current)] = min(limit + 1, 1 + sum(sizes[id(child)] for child in children))
    return sizes[id(node)]


def check_document(text: str, where: str, limit: int = MAX_ITEMS) -> int:
    """The expanded size of the YAML document(s) in ``text``; refuses (naming ``where``) a text over
    :data:`MAX_BYTES` or a document that expands to more than ``limit`` values."""
    if not isinstance(text, str):
        raise DocumentTooBig(f"{where}: is not text; give the file's content")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise DocumentTooBig(f"{where}: is larger than {MAX_BYTES >> 20} MiB; no variables file of a cloud is")
    total = 0
    sizes: dict[int, int] = {}
    try:
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if node is not None:
                total += expanded_size(node, sizes, limit)
            if total > limit:
                break
    except DocumentTooBig as exc:
        raise DocumentTooBig(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise DocumentTooBig(f"{where}: is not YAML{at}: {getattr(exc, 'problem', None) or exc}") from None
    if total > limit:
        raise DocumentTooBig(
            f"{where}: its aliases expand to more than {limit:,} values (a document of {len(text):,} characters); "
            "Ansible would expand every alias when it loads the file. Write the values out, or remove the aliases"
        )
    return total
