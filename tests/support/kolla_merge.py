"""Kolla-Ansible's INI merge, re-implemented for tests from its documented behaviour.

Kolla-Ansible renders each service's config by merging, in order, the role's template, then
``global.conf``, ``<service project>.conf``, the per-service file and the per-host file from the
operator's custom config directory. Its rules:

- files later in the order win: a key set in a later file replaces the value from earlier files, and
  for a key given several times that means the *whole list* is replaced;
- inside one file a key given several times accumulates (multi-valued options such as
  ``[pci] device_spec``), and the merged file repeats it line by line.
"""

from __future__ import annotations

import re

SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
KEY = re.compile(r"^([^=\s#;][^=]*?)\s*=\s*(.*)$")

# The merge order for nova services (lowest precedence first), relative to the custom config dir.
NOVA_ORDER = ("global.conf", "nova.conf", "nova/{service}.conf", "nova/{host}/nova.conf")


def parse(text: str) -> dict[str, dict[str, list[str]]]:
    """One file: sections of keys, repeated keys accumulated in order."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        match = SECTION.match(line)
        if match:
            current = sections.setdefault(match.group(1).strip(), {})
            continue
        match = KEY.match(line)
        if match and current is not None:
            current.setdefault(match.group(1).strip(), []).append(match.group(2).strip())
    return sections


def merge(texts: list[str]) -> dict[str, dict[str, list[str]]]:
    """Several files, lowest precedence first: a later file's key replaces the earlier values."""
    merged: dict[str, dict[str, list[str]]] = {}
    for text in texts:
        for section, keys in parse(text).items():
            target = merged.setdefault(section, {})
            for key, values in keys.items():
                target[key] = list(values)
    return merged


def render(merged: dict[str, dict[str, list[str]]]) -> str:
    lines = []
    for section, keys in merged.items():
        lines.append(f"[{section}]")
        for key, values in keys.items():
            lines.extend(f"{key} = {value}" for value in values)
        lines.append("")
    return "\n".join(lines)


def merge_for_service(template: str, config_dir_files: dict[str, str], service: str, host: str) -> str:
    """The final file a nova service on ``host`` reads, from the template and the custom config files."""
    texts = [template]
    for pattern in NOVA_ORDER:
        name = pattern.format(service=service, host=host)
        if name in config_dir_files:
            texts.append(config_dir_files[name])
    return render(merge(texts))
