# Copyright: accel.openstack contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a host's kernel arguments are configured, detected from its files, and how to change them.

Backends (detected in this order, never guessed from the distribution name):

- ``kernelstub`` (Pop!_OS): ``/etc/kernelstub/configuration`` and the ``kernelstub`` command.
- ``grubby`` (EL, Fedora, BLS entries): the ``grubby`` command and ``/boot/loader/entries/*.conf``.
- ``systemd-boot``: ``/etc/kernel/cmdline`` plus loader entries on the ESP (``loader/entries``).
- ``grub``: a ``grub-mkconfig`` that sources ``/etc/default/grub.d/*.cfg`` (Debian, Ubuntu); the
  arguments go into one drop-in of ours, other files are never edited.

Each backend reads what is configured, computes the change, and returns the file edits and the
commands the change needs (:class:`FileChange` values). The planners write nothing; :func:`configure`
applies the plan.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ansible_collections.accel.openstack.plugins.module_utils._errors import AccelError
from ansible_collections.accel.openstack.plugins.module_utils._host.commands import (
    MACHINE_SCOPE,
    ROOT_SCOPE,
    Command,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.files import (
    FileChange,
    apply_all,
    changed_files,
    diffs,
)
from ansible_collections.accel.openstack.plugins.module_utils._host.kernel_cmdline import (
    KernelArg,
    apply,
    format_cmdline,
    missing_from,
    parse_cmdline,
    parse_user_arg,
    parse_user_args,
)
from ansible_collections.accel.openstack.plugins.module_utils._names.text import load_json

DROP_IN = "/etc/default/grub.d/99-accel-openstack.cfg"
GRUB_VARS = ("GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT")
STATE_PRESENT = "# accel-openstack present:"
STATE_ABSENT = "# accel-openstack absent:"
ESP_DIRS = ("/efi", "/boot/efi", "/boot")


class BootloaderError(AccelError, ValueError):
    pass


@dataclass
class BootPlan:
    backend: str
    before: list[KernelArg]  # what the host is configured to boot with now (managed view)
    after: list[KernelArg]  # what it will boot with after the change
    managed_present: list[KernelArg]
    managed_absent: list[KernelArg]
    files: list[FileChange] = field(default_factory=list)  # only the files that change
    commands: list[Command] = field(default_factory=list)  # needed when the configuration changed
    command_changes: bool = False  # the change is made by a command, not by a file edit

    @property
    def changed(self) -> bool:
        return self.command_changes or any(f.changed for f in self.files)


# -- detection ---------------------------------------------------------------------------------------------
def detect(host, find) -> str:
    """The bootloader backend of the root; ``find`` looks a command up inside it."""
    if host.exists("/etc/kernelstub/configuration") and find("kernelstub"):
        return "kernelstub"
    if find("grubby") and host.listdir("/boot/loader/entries"):
        return "grubby"
    if _systemd_boot_esp(host) and host.exists("/etc/kernel/cmdline"):
        return "systemd-boot"
    mkconfig = find("grub-mkconfig") or find("grub2-mkconfig")
    if mkconfig and "default/grub.d/" in (host.read_text(mkconfig) or ""):
        return "grub"
    if host.exists("/etc/default/grub") and host.is_dir("/etc/default/grub.d"):
        return "grub"
    raise BootloaderError(
        "no supported bootloader configuration found under the root: looked for kernelstub "
        "(/etc/kernelstub/configuration), grubby with /boot/loader/entries, systemd-boot (/etc/kernel/cmdline "
        "and loader/entries on the ESP) and GRUB (grub-mkconfig sourcing /etc/default/grub.d); set "
        "bootloader to one of grub, grubby, systemd-boot, kernelstub if the host has one of them"
    )


def _systemd_boot_esp(host) -> str | None:
    for esp in ESP_DIRS:
        if host.is_dir(f"{esp}/loader/entries") and (
            host.exists(f"{esp}/EFI/systemd") or host.exists(f"{esp}/loader/loader.conf")
        ):
            return esp
    return None


def plan(backend: str, host, present: list[KernelArg], absent: list[KernelArg], find) -> BootPlan:
    return {
        "grub": _plan_grub,
        "grubby": _plan_grubby,
        "systemd-boot": _plan_systemd_boot,
        "kernelstub": _plan_kernelstub,
    }[backend](host, present, absent, find)


# -- GRUB with /etc/default/grub.d --------------------------------------------------------------------------
def _plan_grub(host, present, absent, find) -> BootPlan:
    base_values = grub_base_values(host)[0]
    base = parse_cmdline(" ".join(base_values[v] for v in GRUB_VARS))
    old_present, old_absent = read_drop_in_state(host)
    new_present, new_absent = merge_state(old_present, old_absent, present, absent, base)
    old_text = host.read_existing(DROP_IN)
    new_text = render_drop_in(new_present, new_absent) if (new_present or new_absent) else None
    if old_text is None and _already_configured(base, new_present, new_absent):
        new_text = None  # the host's own files already say exactly this: nothing to add
    before = grub_effective(base_values, old_present, old_absent) if old_text is not None else base
    after = grub_effective(base_values, new_present, new_absent) if new_text is not None else base
    files = changed_files([FileChange(DROP_IN, old_text, new_text)])
    if find("update-grub"):
        argv = ["update-grub"]
    elif find("grub2-mkconfig"):
        argv = ["grub2-mkconfig", "-o", "/boot/grub2/grub.cfg"]
    else:
        argv = ["grub-mkconfig", "-o", "/boot/grub/grub.cfg"]
    command = Command(argv, MACHINE_SCOPE, "regenerate grub.cfg with the new kernel arguments", key="bootloader")
    return BootPlan("grub", before, after, new_present, new_absent, files, [command])


def _already_configured(base: list[KernelArg], present, absent) -> bool:
    once = all(sum(1 for b in base if b.same_key(p)) == 1 and any(b.same(p) for b in base) for p in present)
    return once and not any(b.matches(a) for b in base for a in absent)


def grub_effective(values: dict[str, str], present, absent) -> list[KernelArg]:
    """What grub-mkconfig puts on the kernel line (LINUX then LINUX_DEFAULT) once the drop-in ran.

    Mirrors the drop-in's shell exactly: absent arguments and every value of a present key are
    filtered out of both variables, and the present arguments are appended to GRUB_CMDLINE_LINUX.
    """
    drop = list(absent) + [KernelArg(p.key) for p in present]
    linux = [a for a in parse_cmdline(values["GRUB_CMDLINE_LINUX"]) if not any(a.matches(d) for d in drop)]
    default = [a for a in parse_cmdline(values["GRUB_CMDLINE_LINUX_DEFAULT"]) if not any(a.matches(d) for d in drop)]
    return linux + list(present) + default


def grub_base_values(host) -> tuple[dict[str, str], list[str]]:
    """GRUB_CMDLINE_LINUX(_DEFAULT) as grub-mkconfig would see them without our drop-in."""
    values = {v: "" for v in GRUB_VARS}
    unknown: list[str] = []
    drop_ins = [n for n in host.listdir("/etc/default/grub.d") if n.endswith(".cfg") and not n.startswith(".")]
    files = ["/etc/default/grub"] + [f"/etc/default/grub.d/{name}" for name in drop_ins]
    for path in files:
        if path == DROP_IN:
            continue
        for name, value in _shell_assignments(host.read_text(path) or "", values):
            if name in values:
                if value is None:
                    unknown.append(f"{path}: {name} is computed by a command; its value is not known")
                    host.warn(unknown[-1])
                else:
                    values[name] = value
    return values, unknown


_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z")


def _shell_assignments(text: str, env: dict[str, str]):
    """Simple ``NAME=value`` lines of a shell file, expanded the way sh would (quotes, $VAR)."""
    for line in text.splitlines():
        match = _ASSIGN.match(line)
        if not match:
            continue
        name, rest = match.group(1), match.group(2)
        try:
            value = _shell_word(rest, env)
        except ValueError:
            value = None
        if value is not None:
            env = dict(env, **{name: value}) if name in env else env
        yield name, value


def _shell_word(text: str, env: dict[str, str]) -> str | None:
    out = []
    i = 0
    quote = None
    while i < len(text):
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = None
            else:
                out.append(char)
        elif char == "'" and quote is None:
            quote = "'"
        elif char == '"':
            quote = None if quote == '"' else '"'
        elif char == "\\" and i + 1 < len(text):
            i += 1
            out.append(text[i])
        elif char == "`" or text.startswith("$(", i):
            return None
        elif char == "$":
            match = re.match(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))", text[i:])
            if not match:
                out.append(char)
            else:
                out.append(env.get(match.group(1) or match.group(2), ""))
                i += match.end() - 1
        elif quote is None and (char.isspace() or char in ";#"):
            break
        else:
            out.append(char)
        i += 1
    if quote is not None:
        raise ValueError("unterminated quote")
    return "".join(out)


def read_drop_in_state(host) -> tuple[list[KernelArg], list[KernelArg]]:
    text = host.read_text(DROP_IN) or ""
    present: list[KernelArg] = []
    absent: list[KernelArg] = []
    for line in text.splitlines():
        for marker, target in ((STATE_PRESENT, present), (STATE_ABSENT, absent)):
            if line.startswith(marker):
                for word in line[len(marker) :].split():
                    try:
                        target.append(parse_user_arg(word, DROP_IN))
                    except ValueError:
                        host.warn(f"{DROP_IN}: ignoring the unusable recorded argument {word!r}")
    return present, absent


def merge_state(old_present, old_absent, present, absent, base):
    """The drop-in's arguments after this request: earlier requests stay unless this one overrides them."""
    new_present = [
        a for a in old_present if not any(a.same_key(p) for p in present) and not any(a.matches(x) for x in absent)
    ]
    new_present += present
    new_absent = [a for a in old_absent if not any(p.matches(a) for p in new_present)]
    for arg in absent:
        if arg not in new_absent and any(b.matches(arg) for b in base):
            new_absent.append(arg)
    return new_present, new_absent


def _case_pattern(arg: KernelArg) -> str:
    key = arg.key.replace("-", "_")
    key = re.sub(r"_", "[-_]", key)
    if arg.value is None:
        return f"{key}|{key}=*"
    return f'{key}="{arg.value}"'


def render_drop_in(present: list[KernelArg], absent: list[KernelArg]) -> str:
    """A drop-in sourced by grub-mkconfig after /etc/default/grub: filters, then appends, our arguments.

    It removes the absent arguments and every other value of a present argument's key from both
    GRUB_CMDLINE_LINUX variables, then appends the present arguments to GRUB_CMDLINE_LINUX (used by
    normal and recovery entries). Arguments set by other files stay where they are.
    """
    patterns = [_case_pattern(a) for a in absent] + [
        p for p in (_case_pattern(KernelArg(a.key)) for a in present) if p not in [_case_pattern(x) for x in absent]
    ]
    lines = [
        "# Kernel arguments managed by accel.openstack.kernel_cmdline; change them with that module.",
        "# grub-mkconfig sources this after /etc/default/grub; other files are left as they are.",
        f"{STATE_PRESENT} {format_cmdline(present)}".rstrip(),
        f"{STATE_ABSENT} {format_cmdline(absent)}".rstrip(),
        "accel_openstack_filter() {",
        "  accel_openstack_out=",
        "  case $- in *f*) accel_openstack_noglob=1 ;; *) accel_openstack_noglob= ; set -f ;; esac",
        "  for accel_openstack_arg in $1; do",
        '    case "$accel_openstack_arg" in',
        f"      {'|'.join(patterns)}) ;;",
        '      *) accel_openstack_out="${accel_openstack_out:+$accel_openstack_out }$accel_openstack_arg" ;;',
        "    esac",
        "  done",
        '  [ -n "$accel_openstack_noglob" ] || set +f',
        "  printf '%s' \"$accel_openstack_out\"",
        "}",
        'GRUB_CMDLINE_LINUX_DEFAULT="$(accel_openstack_filter "$GRUB_CMDLINE_LINUX_DEFAULT")"',
        'GRUB_CMDLINE_LINUX="$(accel_openstack_filter "$GRUB_CMDLINE_LINUX")"',
    ]
    if present:
        lines.append(f'GRUB_CMDLINE_LINUX="${{GRUB_CMDLINE_LINUX:+$GRUB_CMDLINE_LINUX }}{format_cmdline(present)}"')
    lines.append("unset -f accel_openstack_filter")
    lines.append("unset accel_openstack_out accel_openstack_arg accel_openstack_noglob")
    return "\n".join(lines) + "\n"


# -- grubby (BLS entries) ------------------------------------------------------------------------------------
def _bls_entries(host, directory="/boot/loader/entries") -> list[str]:
    return [f"{directory}/{n}" for n in host.listdir(directory) if n.endswith(".conf")]


def _bls_options(host, path: str) -> str:
    for line in (host.read_text(path) or "").splitlines():
        if line.startswith("options"):
            value = line[len("options") :].strip()
            if "$kernelopts" in value:
                env = host.read_text("/boot/grub2/grubenv") or ""
                match = re.search(r"^kernelopts=(.*)$", env, re.M)
                value = value.replace("$kernelopts", match.group(1) if match else "")
            return value
    return ""


def _plan_grubby(host, present, absent, find) -> BootPlan:
    entries = _bls_entries(host)
    per_entry = [parse_cmdline(_bls_options(host, e)) for e in entries]
    before = per_entry[0] if per_entry else []
    needs = [args for args in per_entry if apply(args, present, absent) != args]
    after = apply(before, present, absent)
    commands = []
    if needs:
        remove = [str(a) for a in absent]
        for args in per_entry:
            for arg in args:
                if any(arg.same_key(p) and arg.value != p.value for p in present) and str(arg) not in remove:
                    remove.append(str(arg))
        argv = ["grubby", "--update-kernel=ALL"]
        if present:
            argv.append("--args=" + format_cmdline(present))
        if remove:
            argv.append("--remove-args=" + " ".join(remove))
        commands.append(Command(argv, ROOT_SCOPE, "set the kernel arguments of every boot entry", key="bootloader"))
    return BootPlan("grubby", before, after, present, absent, [], commands, command_changes=bool(needs))


# -- systemd-boot ---------------------------------------------------------------------------------------------
def _plan_systemd_boot(host, present, absent, find) -> BootPlan:
    files = []
    old = host.read_existing("/etc/kernel/cmdline") or ""
    before = parse_cmdline(old)
    after = apply(before, present, absent)
    if after != before:
        files.append(FileChange("/etc/kernel/cmdline", old, format_cmdline(after) + "\n"))
    esp = _systemd_boot_esp(host)
    for entry in _bls_entries(host, f"{esp}/loader/entries") if esp else []:
        text = host.read_existing(entry) or ""
        lines = text.splitlines()
        for index, line in enumerate(lines):
            if line.startswith("options"):
                args = parse_cmdline(line[len("options") :])
                new_args = apply(args, present, absent)
                if new_args != args:
                    lines[index] = "options " + format_cmdline(new_args)
        new_text = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
        files += changed_files([FileChange(entry, text, new_text)])
    return BootPlan("systemd-boot", before, after, present, absent, files, [])


# -- kernelstub ------------------------------------------------------------------------------------------------
def _plan_kernelstub(host, present, absent, find) -> BootPlan:
    path = "/etc/kernelstub/configuration"
    old = host.read_existing(path) or ""
    try:
        config = load_json(old)
        options = config["user"]["kernel_options"]
    except (ValueError, KeyError, TypeError) as exc:
        raise BootloaderError(
            f"{path} is not kernelstub's JSON with user.kernel_options ({exc}); fix the file"
        ) from None
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        # A string would be read one character per argument and written back that way.
        raise BootloaderError(
            f"{path}: user.kernel_options is {type(options).__name__} ({str(options)[:60]!r}); kernelstub keeps "
            'a list of strings, one argument each (e.g. ["quiet", "splash"]): fix the file, nothing was changed'
        )
    before = parse_cmdline(" ".join(options))
    after = apply(before, present, absent)
    files = []
    if after != before:
        config["user"]["kernel_options"] = [str(a) for a in after]
        files.append(FileChange(path, old, json.dumps(config, indent=2) + "\n"))
    command = Command(["kernelstub"], MACHINE_SCOPE, "write the kernel options into the boot entries", key="bootloader")
    return BootPlan("kernelstub", before, after, present, absent, files, [command])


def configure(host, commands, params: dict) -> dict:
    """The whole kernel_cmdline change: plan, write (unless check mode), run or defer the update.

    ``commands`` is a HostCommands for the same root. Returns the module result (without ``failed``).
    Raises KernelArgError/BootloaderError for bad input before anything is written.
    """
    present, absent = parse_user_args(params.get("present"), params.get("absent"))
    backend = params.get("bootloader") or "auto"
    if backend == "auto":
        backend = detect(host, commands.find)
    change = plan(backend, host, present, absent, commands.find)
    files_changed = apply_all(host, change.files, commands.check_mode)
    wanted = change.commands if (params.get("update_bootloader", True) or change.command_changes) else []
    ran = commands.request(wanted, change.changed) if wanted else False
    running = parse_cmdline(host.read_text("/proc/cmdline") or "")
    managed_present, managed_absent = change.managed_present, change.managed_absent
    reasons = missing_from(running, managed_present, managed_absent)
    return {
        "changed": bool(files_changed) or ran,
        "bootloader": backend,
        "files": files_changed,
        "configured": [str(a) for a in change.after],
        "previous": [str(a) for a in change.before],
        "running": [str(a) for a in running],
        "managed": {"present": [str(a) for a in managed_present], "absent": [str(a) for a in managed_absent]},
        "reboot_required": bool(reasons),
        "reboot_reasons": reasons,
        "commands": commands.results(),
        "pending_commands": commands.pending_texts(),
        "diff": diffs(change.files)
        or {"before": format_cmdline(change.before) + "\n", "after": format_cmdline(change.after) + "\n"},
    }
